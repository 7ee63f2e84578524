"""mlq's sub-questions through the LLM layer: cached, retried, estimated, and never asked by a
dry run (against the scripted OpenAI-compatible server on 127.0.0.1)."""

import re

import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings

from ragdash.cli import main
from ragdash.config import RunSpec
from ragdash.llm.decompose import decompose
from ragdash.llm.prompts import decompose_messages
from ragdash.llm.types import LLMError
from ragdash.planning import dry_run
from ragdash.run_spec import run_spec
from ragdash.rundir import Run
from ragdash.stages.generate import requests as generate_requests
from ragdash.stages.runner import dry_run_stages


def subquestions(body):
    """Two sub-questions naming the question's first word, for any sub-question prompt."""
    question = body["messages"][-1]["content"]
    return Reply(text=f"1. What is {question.split()[0]}?\n2. Who is {question.split()[-1]}")


def test_decompose_is_retried_cached_and_deduplicated(tmp_path):
    cache = tmp_path / "llm.sqlite"
    with FakeLLMServer([Reply(status=500)], default=subquestions) as srv:
        replies = decompose(["Where was Turing born?", "Who?", "Where was Turing born?"],
                            fast_settings(srv), cache=cache)
        assert len(srv.chat_requests()) == 3  # the 500, then one call per distinct question
        assert replies[0] == replies[2] == "1. What is Where?\n2. Who is born?"
        sent = srv.chat_requests()[1]["body"]["messages"]
        assert sent == decompose_messages("Where was Turing born?")
        again = decompose(["Who?", "Where was Turing born?"], fast_settings(srv), cache=cache)
        assert len(srv.chat_requests()) == 3  # both from the reply cache
    assert again == replies[1:]


def test_decompose_raises_once_the_others_are_done(tmp_path):
    def respond(body):
        broken = "broken" in body["messages"][-1]["content"]
        return Reply(status=500) if broken else subquestions(body)

    cache = tmp_path / "llm.sqlite"
    with FakeLLMServer(default=respond) as srv:
        with pytest.raises(LLMError, match=r"1 of 2 questions.*server error 500"):
            decompose(["broken?", "fine?"], fast_settings(srv, retries=1), cache=cache)
        srv.default = subquestions
        decompose(["broken?", "fine?"], fast_settings(srv), cache=cache)
        asked = [r["body"]["messages"][-1]["content"] for r in srv.chat_requests()]
    assert asked.count("fine?") == 1  # the finished call was cached, only the failed one asked


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="unknown mode 'paper'"):
        decompose_messages("Q?", mode="paper")


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)  # runs_root (and the LLM cache) under tmp_path/runs
    config = tmp_path / "fast.yaml"
    config.write_text("llm: {backoff_base_s: 0.01, backoff_max_s: 0.05}\n")
    return config


def cli(srv, generic, run_dir, command, *extra):
    """`ragdash <command>` with bm25 and mlq on the fake server (config: `env`'s fast.yaml)."""
    ds, corpus = generic
    return main([command, "--config", "fast.yaml", "--dataset", str(ds),
                 "--corpus", str(corpus), "--retrievers", "bm25,mlq", "--chunker", "none",
                 "--budgets", "20:60:20", "--gen-budget", "60", "--llm-backend", "openai",
                 "--llm-model", "fake-model", "--llm-url", srv.openai_url,
                 "--run-dir", str(run_dir), "-q", *extra])


GENERATE = ("--set", "generation.enabled=true")
"""`ragdash run` generates answers: a dry run prices generation too."""


def test_dry_run_with_mlq_sends_no_request_and_prices_its_calls(generic, tmp_path, env, capsys):
    with FakeLLMServer(default=subquestions) as srv:
        assert cli(srv, generic, tmp_path / "r", "run", "--dry-run", *GENERATE) == 0
        assert srv.requests == []  # not one request of any kind
        out = capsys.readouterr().out
        # a stage that is switched off is not priced: `ragdash run` would not run it
        assert cli(srv, generic, tmp_path / "off", "run", "--dry-run") == 0
        assert srv.requests == []
    assert "no LLM call made" in out
    assert re.search(r"mlq: fake-model: 4 calls, [\d,]+ tokens in, 300 out", out)
    assert re.search(r"generation: fake-model: 12 calls", out)  # 4 LLM-only + 2 x 4 RAG
    off = capsys.readouterr().out
    assert "mlq: fake-model: 4 calls" in off and "generation:" not in off
    assert "retrieval not run" in out
    run = Run(tmp_path / "r")
    assert not run.has("retrieved") and run.stage_done("chunk", run.stage("chunk")["key"])


def test_mlq_in_a_run_is_retried_then_cached_and_a_dry_run_after_it_asks_nothing(
        generic, tmp_path, env, capsys):
    with FakeLLMServer([Reply(status=503)], default=subquestions) as srv:
        assert cli(srv, generic, tmp_path / "a", "retrieve") == 0
        assert len(srv.chat_requests()) == 5  # a transient 503, retried, then 4 questions
        queries = Run(tmp_path / "a").read("queries")
        assert queries.set_index("qid").loc["q1", "queries"].tolist() == [
            "What is Where?", "Who is born?"]
        first = Run(tmp_path / "a").read("retrieved")
        assert cli(srv, generic, tmp_path / "b", "retrieve") == 0  # another run, same calls
        assert len(srv.chat_requests()) == 5  # all from the reply cache
        assert Run(tmp_path / "b").read("retrieved").equals(first)
        capsys.readouterr()
        assert cli(srv, generic, tmp_path / "b", "run", "--dry-run", "--force", *GENERATE) == 0
        assert len(srv.requests) == 5  # forced: retrieval would ask again, so it is not run
        assert "mlq: fake-model: 4 calls" in capsys.readouterr().out
        assert cli(srv, generic, tmp_path / "b", "retrieve") == 0  # up to date again (cache)
        assert cli(srv, generic, tmp_path / "b", "run", "--dry-run", *GENERATE) == 0
        assert len(srv.requests) == 5  # retrieval is up to date: the dry run asks nothing
    out = capsys.readouterr().out
    assert "mlq:" not in out and "retrieval not run" not in out
    # 4 LLM-only + 2 x 4 RAG answers, but bm25 and mlq give one question the same context:
    # generation sends that prompt once
    assert re.search(r"generation: fake-model: 11 calls", out)
    run = Run(tmp_path / "b")
    spec = RunSpec.from_config(run_spec(run).to_config())
    exact, before = dry_run(run, spec), dry_run(run, spec, retrieved=False)
    assert "mlq" not in exact and before["mlq"].calls == 4
    assert before["generation"].calls == 12 and exact["generation"].calls == 11
    answers = generate_requests(run, spec)
    assert len({(q, c) for _, _, _, q, c in answers}) == 11
    assert before["generation"].tokens_in >= exact["generation"].tokens_in  # an upper bound
    stages = ("ingest", "chunk", "retrieve", "score", "generate")
    assert dry_run_stages(run_spec(run).to_config(), run.path, stages) == stages[:4]
    run.set_stage("chunk", status="failed")  # retrieval would run again after it: not dry
    assert dry_run_stages(run_spec(run).to_config(), run.path, stages) == stages[:2]


@pytest.mark.parametrize(("config", "before"), [("paper.yaml", "4548cb7262bffb73"),
                                                 ("squad-demo.yaml", "ef59252b77d3522a")])
def test_mlq_runs_keep_their_retrieve_key_and_a_new_prompt_changes_it(config, before,
                                                                       monkeypatch):
    """The retrieve stage hashes the same settings as before mlq moved onto the LLM layer (the
    value computed before the move), and hashes the sub-question prompt once it changes."""
    from ragdash.config import fingerprint, load_spec
    from ragdash.constants import PROJECT_ROOT
    from ragdash.llm import prompts
    from ragdash.stages import retrieve

    cfg = load_spec(PROJECT_ROOT / "configs" / config)
    assert fingerprint(*retrieve.settings(cfg)) == before
    monkeypatch.setattr(prompts, "DECOMPOSE_PROMPT_REFERENCE", "Split: {question}")
    assert fingerprint(*retrieve.settings(cfg)) != before
    monkeypatch.undo()
    monkeypatch.setattr(prompts, "DECOMPOSE_TURNS", [("user", t) if r == "system" else (r, t)
                                                     for r, t in prompts.DECOMPOSE_TURNS])
    assert fingerprint(*retrieve.settings(cfg)) != before  # the same text as another role
    cfg = load_spec(PROJECT_ROOT / "configs" / config, {"retrievers.use": [
        r for r in cfg.retrievers.use if r != "mlq"]})
    changed = fingerprint(*retrieve.settings(cfg))
    monkeypatch.undo()
    assert fingerprint(*retrieve.settings(cfg)) == changed  # without mlq, no prompt is hashed
