"""Your own RAG systems compared alone (`retrievers.use: none`): no built-in retriever is built
or run, the systems' contexts are scored, their answers judged and the LLM alone answers as
usual; every page opens on such a run. A run with neither a retriever nor a system is refused
with the key named."""

from __future__ import annotations

import pytest
from fakes.llm_server import FakeLLMServer
from fixtures import systems as sy
from fixtures.apptest import open_app, page_text
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl
from fixtures.pipeline import responder

from ragdash.cli import main
from ragdash.config import ConfigError, load_spec
from ragdash.run_spec import run_spec
from ragdash.rundir import Run
from ragdash.ui.navigation import PAGES


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """`ragdash run --retrievers none` with two systems (RAGAS records with answers, a TREC run
    the generator answers), generation and judging on the fake server."""
    tmp = tmp_path_factory.mktemp("alone")
    ds = write_jsonl(tmp / "qa.jsonl", [{"id": q, "question": t, "answer": a,
                                         "relevant_parts": p} for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(tmp / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x}
                                                for d, t, x in DOCS])
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer(default=responder) as srv:
        code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "none",
                     "--system", f"mine={sy.ragas_jsonl(tmp / 'mine.jsonl')}",
                     "--system", f"trec={sy.trec(tmp / 'run.trec')}", "--chunker", "none",
                     "--tokenizer", "whitespace", "--budgets", "20:60:20", "--gen-budget", "60",
                     "--llm-backend", "openai", "--llm-model", "fake-model", "--llm-url",
                     srv.openai_url, "--set", "generation.enabled=true",
                     "--set", "judge.enabled=true", "--set", "llm.backoff_base_s=0.01", "-q",
                     "--set", f"runs_root={tmp / 'runs'}",  # its caches too, not the checkout's
                     "--run-dir", str(tmp / "runs" / "alone")])
    mp.undo()
    assert code == 0
    return tmp / "runs" / "alone"


def test_the_systems_are_scored_answered_and_judged_alone(alone):
    run = Run(alone)
    assert run_spec(run).compared == ["mine", "trec"]
    assert run.manifest["config"]["retrievers"]["use"] == []
    assert set(run.read("retrieved")["retriever"]) == {"mine", "trec"}
    assert set(run.read("ir_scores")["retriever"]) == {"mine", "trec"}
    answers = run.read("answers")
    assert set(answers["system"]) == {"mine", "trec", "llm_only"}
    assert (answers.loc[answers["system"] == "mine", "model"] == "imported").all()
    assert set(run.read("judgments")["system"]) == {"mine", "trec", "llm_only"}


@pytest.mark.parametrize("page", [p.name for p in PAGES if not p.hidden])
def test_every_page_opens_on_a_run_of_systems_alone(alone, page, monkeypatch):
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(alone))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(alone.parent))
    at = open_app(page)  # no exception box
    said = page_text(at)
    assert "bm25" not in said.lower() or page in ("build", "data"), said[:500]
    assert "built-in retrievers" not in said or page in ("build", "data"), said[:500]
    if page == "overview":
        assert "Your own systems, compared with each other (no built-in retriever" in said
        # judged, not calibrated (calibration is off by default): not "no LLM answers"
        assert "answers are judged but not calibrated yet" in said, said
        assert "no LLM answers and judgments" not in said


def test_neither_a_retriever_nor_a_system_is_refused():
    assert load_spec(None, {"retrievers.use": "none", "systems.mine.file": __file__}
                     ).retrievers.use == []
    with pytest.raises(ConfigError, match=r"retrievers.use: none, and no system is imported"):
        load_spec(None, {"retrievers.use": []})
    with pytest.raises(ConfigError, match=r"retrievers.use: none, and no system"):
        load_spec(None, {"retrievers.use": "none"})
