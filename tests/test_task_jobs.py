"""Issue 34 §3: question generation and finding evidence are job kinds (`ragdash.jobs`, kinds
`synth` and `evidence`): each runs in a `ragdash job` process of its own (never in the
dashboard's server), reports progress in its record, can be cancelled, and started again
resumes from the LLM reply cache; what it writes is what the Data page takes up."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from fakes.llm_server import FakeLLMServer
from fixtures.synth import TEXTS, reply_json, scripted
from fixtures.waiting import wait_for

from ragdash import jobs
from ragdash.data.saved import saved_datasets
from ragdash.rundir import lock as run_lock
from ragdash.rundir.lock import RunLocked
from ragdash.synth.settings import SynthSettings
from ragdash.synth.task import SynthTask, read_rows


def _task(tmp_path, srv: FakeLLMServer, model: str = "fake-model") -> SynthTask:
    corpus = tmp_path / "landmarks.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": k, "title": k, "text": v}) + "\n"
                              for k, v in TEXTS.items()))
    return SynthTask(str(corpus), "auto", "landmarks.jsonl", SynthSettings(n=5),
                     {"backend": "openai", "model": model, "base_url": srv.openai_url,
                      "retries": 0}, str(tmp_path / "runs"))


def test_the_same_task_names_the_same_job_and_survives_its_record():
    a = SynthTask("c.jsonl", "auto", "c", SynthSettings(n=5), {"model": "m"}, "runs")
    assert SynthTask.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    assert a.key() == SynthTask.from_dict(a.to_dict()).key()
    assert a.key() != SynthTask("c.jsonl", "auto", "c", SynthSettings(n=6), {"model": "m"},
                                "runs").key()
    with pytest.raises(ValueError, match="needs its task"):
        jobs.queue(__import__("pathlib").Path("/nonexistent"), "synth")


def test_a_synth_job_runs_apart_is_cancelled_and_resumes_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gate = threading.Event()  # the server answers slowly until the test lets it go

    def slow(body):
        if not gate.is_set():
            time.sleep(0.6)
        return scripted(rhine="I am sorry, I cannot help with that.")(body)

    with FakeLLMServer(default=slow) as srv:
        task = _task(tmp_path, srv)
        home = tmp_path / "runs" / "_datasets" / ".jobs" / f"synth-{task.key()}"
        job = jobs.spawn(home, "synth", task=task.to_dict())
        assert job.active and job.kind == "synth"
        with pytest.raises(RunLocked):  # a second start (another tab) is refused
            jobs.spawn(home, "synth", task=task.to_dict())
        wait_for(lambda: len(srv.chat_requests()) >= 2, what="two LLM calls")
        running = jobs.status(home)
        assert running.state == "running" and running.pid != os.getpid()
        assert jobs.cancellable(running) and jobs.cancel(home, grace=60)
        ended = wait_for(lambda: (s := jobs.status(home)) and not s.active and s, 60,
                         "the cancelled job")
        assert ended.state == "cancelled" and ended.result is None
        assert ended.error.endswith("finished LLM replies are kept, start again to resume")
        first = len(srv.chat_requests())
        assert first < 5  # stopped before the last call
        wait_for(lambda: run_lock.holder(home) is None, 60, "the job's lock to be let go")

        gate.set()
        jobs.spawn(home, "synth", task=task.to_dict())  # again: finished calls are cached
        done = wait_for(lambda: (s := jobs.status(home)) and not s.active and s, 240,
                        "the resumed job")
        assert done.state == "finished", (home / jobs.LOG).read_text()[-2000:]
        assert len(srv.chat_requests()) - first <= 5 - (first - 1)  # a cut call may repeat
    summary = done.result["summary"]
    assert (summary["generated"], summary["kept"], summary["rejected"]) == (5, 4, 1)
    kept, rejects = read_rows(done.result["dataset"]), read_rows(done.result["rejects"])
    assert len(kept) == 4 and [r["reason"] for r in rejects] == ["unparsable"]
    assert {r["question"] for r in kept} >= {"How long is the Danube?"}
    listed = [d for d in saved_datasets(tmp_path / "runs" / "_datasets") if d.path.name ==
              os.path.basename(done.result["dataset"])]
    assert listed and listed[0].origin == "questions generated from landmarks.jsonl"


def test_a_failing_synth_job_says_why(tmp_path):
    with FakeLLMServer(default=lambda body: reply_json("Q?", "A", "nowhere")) as srv:
        task = _task(tmp_path, srv)
    bad = SynthTask(str(tmp_path / "missing.jsonl"), "auto", "missing", task.settings,
                    task.llm, task.runs_root)
    home = tmp_path / "job"
    jobs.spawn(home, "synth", task=bad.to_dict())
    ended = wait_for(lambda: (s := jobs.status(home)) and not s.active and s, 120, "the job")
    assert ended.state == "failed" and "missing.jsonl" in ended.error


def test_an_evidence_job_writes_the_review_the_page_takes_up(tmp_path):
    """Finding evidence runs as a job kind too: the process loads the upload as the Data page
    read it, finds the evidence and writes the review file (no decision yet)."""
    import csv

    from ragdash.evidence import review
    from ragdash.evidence.task import EvidenceTask

    qa = tmp_path / "qa.csv"
    with open(qa, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        w.writerow(["e", "When was the Eiffel Tower completed?", "1889"])
        w.writerow(["m", "Who first walked on the moon?", "Neil Armstrong"])
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": k, "title": k, "text": v}) + "\n"
                              for k, v in TEXTS.items()))
    state = review.state_file(qa, ("docs", "csv"))
    task = EvidenceTask(str(qa), "auto", str(corpus), "auto", None, str(state),
                        str(tmp_path / "runs"))
    assert EvidenceTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    home = state.with_name(f"{state.stem}.job")
    jobs.spawn(home, "evidence", task=task.to_dict())
    done = wait_for(lambda: (s := jobs.status(home)) and not s.active and s, 240, "the job")
    assert done.state == "finished", (home / jobs.LOG).read_text()[-2000:]
    assert (done.result["found"], done.result["missing"]) == (1, 1)
    result, decisions, saved, _ = review.restore(state)
    assert decisions == {} and saved is None
    assert [q.qid for q in result.found] == ["e"]
    assert "1889" in result.found[0].parts[0].text
