"""eRAG (Salemi & Zamani, SIGIR 2024): the IR measures on hand-computed cases (and against
ir_measures where labels are binary), the chunks judged, the stage on a small run against a
scripted server (labels, measures, resume from the reply cache, a failed call kept and asked
again), the dry run's estimate equal to the calls made, and the config's refusals."""

from __future__ import annotations

import math
import re

import ir_measures
import numpy as np
import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.make_run import make_run
from ir_measures import AP, RR, P, Success, nDCG

from ragdash.cli import main
from ragdash.config import ConfigError, load_spec, saved_spec
from ragdash.erag.calls import chunk_items
from ragdash.erag.evaluate import erag_table, label
from ragdash.erag.measures import MEASURES, measures
from ragdash.erag.summary import erag_cost, erag_summary
from ragdash.rundir import Run
from ragdash.stages.erag import depth, failed_calls

LOG2_3, LOG2_5 = math.log2(3), math.log2(5)


# --- the measures -------------------------------------------------------------------------


@pytest.mark.parametrize(("labels", "k", "expected"), [
    # relevant at ranks 2 and 4 of 5: AP = (1/2 + 2/4) / 2
    ([0, 1, 0, 1, 0], 5, (0.4, 0.5, 0.5, (1 / LOG2_3 + 1 / LOG2_5) / (1 + 1 / LOG2_3), 1.0)),
    # graded (F1): only 0.8 counts as relevant; nDCG takes the grades as gains
    ([0.4, 0.8, 0.0], 3, (1 / 3, 0.5, 0.5, (0.4 + 0.8 / LOG2_3) / (0.8 + 0.4 / LOG2_3), 1.0)),
    ([0.5, 0.5], 2, (0.0, 0.0, 0.0, 1.0, 0.0)),  # 0.5 is not above 0.5; gains still count
    ([0, 0, 0], 3, (0.0, 0.0, 0.0, 0.0, 0.0)),
    ([1], 3, (1 / 3, 1.0, 1.0, 1.0, 1.0)),  # fewer chunks than k: P divides by k
    ([0, 0, 1, 1], 2, (0.0, 0.0, 0.0, 0.0, 0.0)),  # only the top k count
])
def test_the_measures_on_hand_computed_cases(labels, k, expected):
    got = measures(labels, k)
    assert list(got) == list(MEASURES)
    assert [got[m] for m in MEASURES] == pytest.approx(expected)


def test_binary_labels_give_what_trec_eval_gives():
    """With 0/1 labels the measures are trec_eval's (through ir_measures) with the judged
    chunks as the question's only judgments."""
    rng = np.random.default_rng(0)
    k = 6
    for trial in range(40):
        labels = rng.integers(0, 2, size=int(rng.integers(1, k + 1))).tolist()
        docs = [f"d{i}" for i in range(len(labels))]
        qrels = {"q": dict(zip(docs, labels, strict=True))}
        run = {"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
        ref = ir_measures.calc_aggregate([P @ k, AP @ k, RR @ k, nDCG @ k, Success @ k],
                                         qrels, run)
        got = measures(labels, k)
        assert got["erag_precision"] == pytest.approx(ref[P @ k]), (trial, labels)
        assert got["erag_map"] == pytest.approx(ref[AP @ k]), (trial, labels)
        assert got["erag_mrr"] == pytest.approx(ref[RR @ k]), (trial, labels)
        assert got["erag_ndcg"] == pytest.approx(ref[nDCG @ k]), (trial, labels)
        assert got["erag_hit"] == pytest.approx(ref[Success @ k]), (trial, labels)
    with pytest.raises(ValueError, match="k must be at least 1"):
        measures([1], 0)


def test_a_label_is_the_reference_metric_against_the_gold_answers():
    golds = ["Denver Broncos", "the Broncos"]
    assert label("The Denver Broncos won.", golds, "contains") == 1.0
    assert label("Carolina won.", golds, "contains") == 0.0
    assert label(None, golds, "contains") == 0.0  # a failed call
    assert 0 < label("Denver won", golds, "f1") < 1
    assert 0 < label("Denver won", golds, "rouge_l") < 1
    with pytest.raises(ValueError, match="contains, f1, rouge_l"):
        label("x", golds, "em")


# --- a small run against a scripted server ------------------------------------------------


def _run(tmp_path, n_questions: int = 4):
    """A run with BM25 (k 5) and SIM (k 10) whose gold answer is the title of each question's
    second gold document: a chunk of that document holds the answer in every sentence."""
    path = make_run(tmp_path / "r", n_questions=n_questions, retrievers=("bm25", "sim"),
                    budgets=(100,), llm=False)
    run = Run(path)
    ex = run.read("examples")
    answers = [f"Entity {i}-b" for i in range(len(ex))]
    ex = ex.assign(answer=answers, answers=[[a] for a in answers])
    ex.loc[len(ex) - 1, ["answer"]] = ""  # the last question has no gold answer
    ex.at[len(ex) - 1, "answers"] = []
    run.write("examples", ex)
    return path


def echo(body: dict) -> Reply:
    """Replies with the document the prompt holds (the chunk given alone)."""
    text = body["messages"][-1]["content"]
    return Reply(text=text.split("Documents:\n")[-1].split("\n\nAnswer:")[0])


def _llm(url: str, *more: str) -> list[str]:
    return ["--set", "erag.llm.backend=openai", "--set", "erag.llm.model=fake-model",
            "--set", f"erag.llm.base_url={url}", "--set", "erag.llm.retries=0",
            "--set", "erag.llm.timeout_s=5", *more, "-q"]


@pytest.fixture
def env_key(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-erag")
    monkeypatch.chdir(tmp_path)


def test_the_chunks_judged_follow_k_max_k_and_limit(tmp_path):
    path = _run(tmp_path)
    run = Run(path)
    spec = saved_spec(run.manifest)
    assert depth(spec) == {"bm25": 5, "sim": 10}  # each retriever's own k
    capped = load_spec(None, {"retrievers.use": "bm25,sim", "erag.max_k": 3})
    assert depth(capped) == {"bm25": 3, "sim": 3}
    assert depth(load_spec(None, {"retrievers.use": "bm25,sim", "erag.k": 7})) == \
        {"bm25": 7, "sim": 7}
    items = chunk_items(run.read("examples"), run.read("retrieved"), run.read("chunks"),
                        {"bm25": 2, "sim": 3}, limit=2)
    assert [(i.qid, i.system, i.rank) for i in items] == [
        (q, s, r) for q in ("q000", "q001") for s, k in (("bm25", 2), ("sim", 3))
        for r in range(1, k + 1)]
    retrieved = run.read("retrieved")
    top = retrieved[(retrieved["qid"] == "q001") & (retrieved["retriever"] == "sim")]
    assert [i.chunk_id for i in items if i.qid == "q001" and i.system == "sim"] == \
        top.sort_values("rank")["chunk_id"].head(3).tolist()
    every = chunk_items(run.read("examples"), run.read("retrieved"), run.read("chunks"),
                        {"bm25": 5})
    assert "q003" not in {i.qid for i in every}  # no gold answer: nothing to score against


def test_the_stage_labels_each_chunk_resumes_from_the_cache_and_prices_exactly(
        tmp_path, env_key, capsys):
    path = _run(tmp_path)
    with FakeLLMServer(default=echo) as srv:
        assert main(["erag", "--run-dir", str(path), "--dry-run", *_llm(srv.openai_url)]) == 0
        assert srv.chat_requests() == []  # the dry run asks nothing
        priced = int(re.search(r"fake-model: (\d+) calls", capsys.readouterr().out).group(1))
        assert main(["erag", "--run-dir", str(path), *_llm(srv.openai_url)]) == 0
        sent = len(srv.chat_requests())
        out = capsys.readouterr().out
        assert f"LLM calls: {sent} made, 0 from the reply cache" in out
        assert re.search(r"bm25\s+3\s", out) and re.search(r"sim\s+3\s", out)
        # every prompt is the generator's with one chunk; a chunk both retrievers found for a
        # question is asked once
        run = Run(path)
        labels, table = run.read("erag_labels"), run.read("erag")
        assert priced == sent == len(labels.drop_duplicates(["qid", "chunk_id"])) < len(labels)
        assert all("Documents:" in r["body"]["messages"][-1]["content"]
                   for r in srv.chat_requests())
        # a second run sends no call; the dry run now counts nothing left to send
        assert main(["erag", "--run-dir", str(path), *_llm(srv.openai_url)]) == 0
        assert len(srv.chat_requests()) == sent
        assert f"LLM calls: 0 made, {sent} from the reply cache" in capsys.readouterr().out
        assert main(["erag", "--run-dir", str(path), "--dry-run", *_llm(srv.openai_url)]) == 0
        out = capsys.readouterr().out
        assert "fake-model: 0 calls" in out and f"{sent} more calls are answered" in out
    chunks = run.read("chunks").set_index("chunk_id")["text"]
    expected = [float(f"Entity {int(q[1:])}-b" in chunks[c])
                for q, c in zip(labels["qid"], labels["chunk_id"], strict=True)]
    assert labels["label"].tolist() == expected and 0 < sum(expected) < len(expected)
    assert labels["error"].isna().all() and set(table["qid"]) == {"q000", "q001", "q002"}
    assert table[["qid", "system"]].drop_duplicates().shape[0] == len(table) == 6
    for row in table.itertuples():
        mine = labels[(labels["qid"] == row.qid) & (labels["system"] == row.system)]
        assert row.k == row.judged == {"bm25": 5, "sim": 10}[row.system]
        want = measures(mine.sort_values("rank")["label"].tolist(), row.k)
        assert [getattr(row, m) for m in MEASURES] == pytest.approx(list(want.values()))
    values = table[list(MEASURES)].to_numpy()
    assert ((values >= 0) & (values <= 1)).all()
    counts = run.stage("erag")["counts"]
    assert counts["calls"] == 0 and counts["cached"] == sent and counts["errors"] == 0
    assert run.manifest["llm"]["erag"]["model"] == "fake-model"


def test_a_failed_call_is_kept_with_its_error_and_asked_again(tmp_path, env_key, capsys):
    path = _run(tmp_path, n_questions=2)
    refused = {"n": 0}

    def flaky(body: dict) -> Reply:
        if "Entity 0-b" in body["messages"][-1]["content"].split("Documents:")[-1]:
            refused["n"] += 1
            return Reply(status=400, error="scripted refusal")
        return echo(body)

    with FakeLLMServer(default=flaky) as srv:
        assert main(["erag", "--run-dir", str(path), *_llm(srv.openai_url)]) == 0
        err = capsys.readouterr().err
        assert "calls failed and are labelled 0" in err and "scripted refusal" in err
        run = Run(path)
        labels = run.read("erag_labels")
        bad = labels["error"].notna()
        assert bad.any() and (labels.loc[bad, "label"] == 0).all()
        assert labels.loc[bad, "answer"].isna().all()
        assert failed_calls(run) == int(bad.sum())  # `ragdash run` retries the stage
        assert run.read("erag")["errors"].sum() == bad.sum()
        first = len(srv.chat_requests())
    with FakeLLMServer(default=echo) as srv:  # the server answers now
        assert main(["erag", "--run-dir", str(path), *_llm(srv.openai_url)]) == 0
        asked = len(srv.chat_requests())
    assert asked == refused["n"] < first  # only the failed calls were asked again
    labels = Run(path).read("erag_labels")
    assert labels["error"].isna().all() and failed_calls(Run(path)) == 0
    assert labels.loc[bad.to_numpy(), "label"].eq(1.0).all()


@pytest.mark.parametrize(("override", "message"), [
    ({"erag.metric": "nope"}, "erag.metric must be one of contains, f1, rouge_l, not 'nope'"),
    ({"erag.k": 0}, "erag.k must be at least 1, not 0"),
    ({"erag.max_k": 0}, "erag.max_k must be at least 1"),
    ({"erag.limit": "many"}, "erag.limit must be a whole number"),
    ({"erag.kk": 3}, "unknown key 'erag.kk'; did you mean 'erag.k'?"),
    ({"erag.llm.api_key": "sk-x"}, "erag.llm.api_key"),
])
def test_the_config_refuses_bad_values_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_spec(None, override)


def test_the_command_refuses_bad_values_before_any_call(tmp_path, env_key, capsys):
    path = _run(tmp_path, n_questions=2)
    with FakeLLMServer(default=echo) as srv:
        assert main(["erag", "--run-dir", str(path), *_llm(srv.openai_url),
                     "--set", "erag.k=0"]) == 2
        assert "erag.k must be at least 1, not 0" in capsys.readouterr().err
        with pytest.raises(SystemExit):
            main(["erag", "--run-dir", str(path), "--metric", "nope"])
        assert srv.chat_requests() == []
    assert main(["erag", "--run-dir", str(tmp_path / "none")]) == 2
    assert "is not a run directory" in capsys.readouterr().err


def test_graded_metric_and_the_view_for_the_dashboard(tmp_path, env_key):
    path = _run(tmp_path, n_questions=2)
    with FakeLLMServer(default=echo) as srv:
        assert main(["erag", "--run-dir", str(path), "--metric", "f1", "--k", "3",
                     *_llm(srv.openai_url)]) == 0
    run = Run(path)
    labels, table = run.read("erag_labels"), run.read("erag")
    assert set(table["metric"]) == {"f1"} and set(table["k"]) == {3}
    assert ((labels["label"] > 0) & (labels["label"] < 1)).any()  # graded labels
    view = erag_summary(table, order=["sim", "bm25"])
    assert view.means["system"].tolist() == ["sim", "bm25"]
    assert view.means["n"].tolist() == [1, 1]  # q000 (q001 has no gold answer)
    assert list(view.per_answer.columns) == ["qid", "system", *MEASURES]
    means = view.per_answer.groupby("system")[list(MEASURES)].mean()
    for row in view.means.itertuples():
        assert [getattr(row, m) for m in MEASURES] == pytest.approx(
            means.loc[row.system].tolist())
    calls, tokens = erag_cost(labels)
    assert calls == len(labels.drop_duplicates(["qid", "chunk_id"])) and tokens > 0


def test_the_table_keeps_the_question_and_retriever_order():
    labels = pd.DataFrame({"qid": ["b", "b", "a"], "system": ["x", "x", "y"],
                           "rank": [2, 1, 1], "label": [1.0, 0.0, 1.0],
                           "error": [None, None, "boom"]})
    table = erag_table(labels, {"x": 2, "y": 1}, "contains")
    assert table[["qid", "system"]].values.tolist() == [["b", "x"], ["a", "y"]]
    assert table["erag_mrr"].tolist() == [0.5, 1.0] and table["errors"].tolist() == [0, 1]
