"""The LLM stages through the CLI against a scripted OpenAI-compatible server on 127.0.0.1:
generation, judging, calibration, resuming after a kill, errors kept apart, secrets never written.
"""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.pipeline import llm_args, responder

from ragdash.cli import main
from ragdash.rundir import Run

SECRET = "sk-test-SECRET-never-on-disk-0123456789"


@pytest.fixture
def env_key(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # runs_root (and the LLM cache) under tmp_path/runs
    return SECRET


def test_generate_judge_calibrate_end_to_end(generic, tmp_path, env_key, capsys):
    ds, corpus = generic
    with FakeLLMServer(default=responder) as srv:
        code = main(["calibrate", "--dataset", str(ds), "--corpus", str(corpus),
                     *llm_args(srv.openai_url, tmp_path / "r")])
        assert code == 0, capsys.readouterr().err
        sent = [r["body"]["messages"] for r in srv.chat_requests()]
    run = Run(tmp_path / "r")
    answers = run.read("answers")
    assert len(answers) == 4 * 3  # llm_only + 2 retrievers per question
    assert set(answers["system"]) == {"llm_only", "bm25", "sim"}
    assert answers["error"].isna().all()
    assert answers.loc[answers.system == "bm25", "budget"].eq(60).all()
    judgments = run.read("judgments")
    assert len(judgments) == 12 and judgments["score"].notna().all()
    calibration = json.loads((run.path / "calibration.json").read_text())
    assert 0 <= calibration["h"] <= 1 and 0 <= calibration["k"] <= 1
    judge_calls = [m for m in sent if "Scoring Criteria" in m[0]["content"]]
    generation_calls = [json.dumps(m) for m in sent if m not in judge_calls]
    assert len(judge_calls) == 4  # one grouped call per question
    # 12 answers; identical prompts (bm25 and sim may share a C_N) are sent only once
    assert len(generation_calls) == len(set(generation_calls)) >= 8
    out = capsys.readouterr().out
    assert "Judge scores per system" in out and "Thresholds at N = 60" in out
    audit = run.manifest["judge_audit"]
    assert [c["name"] for c in audit["checks"]] == ["spread", "consistency", "position",
                                                    "reference_match"]
    warned = run.stage("judge")["counts"]["audit_warnings"]
    assert len(warned) == audit["warnings"]
    assert all(w.split(":")[0].lower() in out for w in warned)

    # a re-run costs nothing: every call comes from the cache or is skipped
    with FakeLLMServer(default=responder) as srv:
        assert main(["calibrate", "--dataset", str(ds), "--corpus", str(corpus), "--force",
                     *llm_args(srv.openai_url, tmp_path / "r")]) == 0
        assert srv.chat_requests() == []

    # the API key is nowhere on disk
    for f in Path(tmp_path).rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_estimate_applies_saved_thresholds_without_llm(generic, tmp_path, env_key, capsys):
    ds, corpus = generic
    assert main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--retrievers",
                 "bm25,sim", "--chunker", "none", "--budgets", "20:60:20", "-q",
                 "--run-dir", str(tmp_path / "r")]) == 0
    saved = tmp_path / "calibration.json"
    saved.write_text(json.dumps({"h": 0.2, "k": 0.9, "budget": 60}))
    assert main(["estimate", "--run-dir", str(tmp_path / "r"), "--thresholds", str(saved)]) == 0
    data = json.loads((tmp_path / "r" / "estimate.json").read_text())
    shares = {r["retriever"]: r for r in data["estimated_shares"]}
    assert set(shares) == {"bm25", "sim"}
    for r in shares.values():
        assert r["est_1"] + r["est_2_4"] + r["est_5"] == pytest.approx(100)
    ir = Run(tmp_path / "r").read("ir_scores")
    at = ir[(ir.budget == 60) & (ir.retriever == "bm25")]["score"]
    assert shares["bm25"]["est_5"] == pytest.approx(100 * (at > 0.9).mean())
    assert data["calls_avoided"]["generation_calls"] == 4 * 3
    assert "correct" in capsys.readouterr().out
    assert main(["estimate", "--run-dir", str(tmp_path / "r"), "--h", "0.1", "--k", "0.5",
                 "--budget", "1000"]) == 2  # no scores at that budget: a clear error


def test_errors_are_kept_apart(generic, tmp_path, env_key):
    ds, corpus = generic
    state = {"n": 0}

    def flaky(body):
        first = body["messages"][0]["content"]
        if "Scoring Criteria" in first:
            return Reply(text="I think they are all fine.")  # prose, never scores
        state["n"] += 1
        return Reply(status=500) if state["n"] % 3 == 0 else responder(body)

    with FakeLLMServer(default=flaky) as srv:
        assert main(["judge", "--dataset", str(ds), "--corpus", str(corpus),
                     *llm_args(srv.openai_url, tmp_path / "r")]) == 0
    run = Run(tmp_path / "r")
    answers = run.read("answers")
    judgments = run.read("judgments")
    assert judgments["score"].isna().all()  # malformed replies recorded as errors
    assert judgments["error"].notna().all()
    assert run.stage("judge")["counts"]["errors"] == len(judgments)
    assert answers["error"].isna().sum() + answers["error"].notna().sum() == len(answers)


@pytest.mark.slow
def test_killed_generation_resumes_without_repeating_finished_calls(generic, tmp_path, env_key):
    ds, corpus = generic

    def slow(body):
        time.sleep(0.4)
        return responder(body)

    cmd = [sys.executable, "-m", "ragdash.cli", "generate", "--dataset", str(ds),
           "--corpus", str(corpus)]
    with FakeLLMServer(default=slow) as srv:
        args = llm_args(srv.openai_url, tmp_path / "r")
        proc = subprocess.Popen(cmd + args, cwd=tmp_path, env=os.environ.copy(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while len(srv.chat_requests()) < 5 and time.time() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        sent_before = {json.dumps(r["body"]["messages"]) for r in srv.chat_requests()}
        assert 5 <= len(sent_before) < 12
    with sqlite3.connect(tmp_path / "runs" / "_llm_cache.sqlite") as db:
        finished = db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
    # four calls run at once and a worker stores its reply before it sends the next request,
    # so a fifth request means at least one finished call (how many more depends on the load)
    assert 1 <= finished <= len(sent_before)
    with FakeLLMServer(default=responder) as srv:
        assert main(["generate", "--dataset", str(ds), "--corpus", str(corpus),
                     *llm_args(srv.openai_url, tmp_path / "r")]) == 0
        again = [json.dumps(r["body"]["messages"]) for r in srv.chat_requests()]
    # exactly the calls that had not finished are sent again; no finished call is repeated
    assert len(again) == len(set(again)) == len(set(again) | sent_before) - finished
    answers = Run(tmp_path / "r").read("answers")
    assert len(answers) == 12 and answers["error"].isna().all()


def test_dry_run_estimates_without_calling(generic, tmp_path, env_key, capsys):
    ds, corpus = generic
    args = ["--dataset", str(ds), "--corpus", str(corpus), "--judge-model", "gpt-4o"]
    with FakeLLMServer(default=responder) as srv:
        args += llm_args(srv.openai_url, tmp_path / "r")
        assert main(["judge", "--dry-run", *args]) == 0
        assert srv.chat_requests() == []
        out = capsys.readouterr().out
        # 4 LLM-only + 2 x 4 RAG answers; two retrievers give one question the same context,
        # a prompt sent once
        priced = re.search(r"generation: fake-model: (\d+) calls", out)
        assert "Dry run" in out and priced and int(priced.group(1)) == 11, out
        assert re.search(r"gpt-4o: 4 calls, [\d,]+ tokens in, 100 out, \$0\.0\d", out)
        assert not Run(tmp_path / "r").has("answers")
        # once generated, the dry run leaves out what the reply cache answers
        assert main(["generate", *args]) == 0
        sent = len(srv.chat_requests())
        assert sent == 11  # what the dry run said
        assert main(["judge", "--dry-run", *args]) == 0
        assert len(srv.chat_requests()) == sent
        out = capsys.readouterr().out
        assert "generation: fake-model: 0 calls" in out, out
        assert f"generation: {sent} more calls answered by the reply cache" in out, out
        # the judge is then priced on the real answers, and once judged asks nothing either
        assert re.search(r"judge: gpt-4o: 4 calls", out) and "judge: 4 more" not in out, out
        assert main(["judge", *args]) == 0
        assert len(srv.chat_requests()) == sent + 4
        assert main(["judge", "--dry-run", *args]) == 0
        assert len(srv.chat_requests()) == sent + 4
    out = capsys.readouterr().out
    assert "judge: gpt-4o: 0 calls" in out and "judge: 4 more calls answered by the" in out, out


def test_judge_inherits_the_generators_url_and_the_endpoints_are_printed(generic, tmp_path,
                                                                           env_key, capsys):
    """--judge-backend openai without --judge-url: the judge's calls (and the key) go to the
    server named by --llm-url, never to OpenAI's public host; both endpoints are printed."""
    ds, corpus = generic
    with FakeLLMServer(default=responder) as srv:
        code = main(["judge", "--dataset", str(ds), "--corpus", str(corpus),
                     "--judge-backend", "openai", "--judge-model", "fake-judge",
                     *llm_args(srv.openai_url, tmp_path / "r")])
        err = capsys.readouterr().err
        assert code == 0, err
        models = [r["body"]["model"] for r in srv.chat_requests()]
        url = srv.openai_url
    assert models.count("fake-judge") == 4  # one grouped call per question, all to this server
    assert f"[llm] judge: openai model fake-judge at {url}" in err
    assert f"[llm] generation: openai model fake-model at {url}" in err
    judge = Run(tmp_path / "r").manifest["llm"]["judge"]
    assert judge["base_url"] == url and "api_key" not in judge


def test_a_plain_rerun_retries_the_calls_that_failed(generic, tmp_path, env_key, caplog):
    """After an outage, `ragdash judge` again (no --force) repeats only the failed calls:
    finished ones come from the cache; the judge re-runs on the repaired answers."""
    ds, corpus = generic
    args = ["judge", "--dataset", str(ds), "--corpus", str(corpus)]

    down = {"on": True}

    def outage(body):
        text = body["messages"][-1]["content"]
        return Reply(status=503) if down["on"] and "Documents:" in text else responder(body)

    with FakeLLMServer(default=outage) as srv:  # one server: the run's keys stay the same
        assert main([*args, *llm_args(srv.openai_url, tmp_path / "r")]) == 0
        run = Run(tmp_path / "r")
        failed = int(run.read("answers")["error"].notna().sum())
        assert failed == 8  # 4 questions x 2 retrievers, LLM-only answers fine
        down["on"], before = False, len(srv.chat_requests())
        assert main([*args, *llm_args(srv.openai_url, tmp_path / "r")]) == 0
        sent = srv.chat_requests()[before:]
    generation = [r for r in sent if "Scoring Criteria" not in r["body"]["messages"][0]["content"]]
    # only the failed generations were sent again (identical prompts once), none of the
    # finished LLM-only ones
    assert 0 < len(generation) <= failed
    assert all("Documents:" in r["body"]["messages"][-1]["content"] for r in generation)
    assert run.read("answers")["error"].isna().all()
    assert run.read("judgments")["score"].notna().all()  # judged again, now with answers
    assert "8 call(s) ended in errors last time; retrying them" in caplog.text
