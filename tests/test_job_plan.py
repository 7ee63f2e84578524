"""Issue 33 §1: the run's LLM cost before Start, and a job that keeps its word while it runs:
the ETA counts judging ahead of generation and does not leap when a model's first call starts
its server, the job's priority is set once (never stacked to 19), and generation goes
question by question so the measured rate is the whole stage's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragdash import jobs
from ragdash.config import SAMPLE_DATASET, load_spec
from ragdash.data import DataError, load_dataset, load_questions
from ragdash.llm.generate import generate
from ragdash.planning import before_run, stage_plan
from ragdash.rundir import Run
from ragdash.ui.jobs import eta_text

LLM_RUN = {"llm.backend": "local", "generation.enabled": True, "generation.prompt": "abstain",
           "judge.enabled": True, "judge.mode": "stepwise", "calibration.enabled": True,
           "dataset.path": str(SAMPLE_DATASET), "dataset.limit": 12,
           "retrievers.use": ["bm25", "sim"]}


def test_the_questions_are_read_without_the_corpus_and_match_the_run():
    questions = load_questions(SAMPLE_DATASET, limit=12)
    assert [e.qid for e in questions] == [e.qid for e in load_dataset(SAMPLE_DATASET,
                                                                      limit=12).examples]


def test_before_run_prices_every_llm_stage_of_a_run_not_made_yet(tmp_path):
    est = before_run(load_spec(None, {**LLM_RUN, "runs_root": str(tmp_path)}))
    # 12 questions x (2 retrievers + LLM only), one judgment each (stepwise: a lower bound)
    assert est["generation"].calls == 36 and est["judge"].calls == 36
    assert est["generation"].model == "qwen2.5-coder-1.5b-instruct"  # the default generator
    assert est["judge"].model == "qwen2.5-coder-1.5b-instruct"
    assert est["generation"].seconds and "bundled demo runs" in str(est["generation"])
    assert "upper bound" in est["note"]
    plan = stage_plan(est)
    assert set(plan) == {"generate", "judge"}
    assert plan["generate"] == {"calls": 36, "seconds": pytest.approx(est["generation"].seconds)}


def test_before_run_says_what_is_wrong_with_a_dataset(tmp_path):
    bad = tmp_path / "qa.jsonl"
    bad.write_text('{"nothing": 1}\n')
    with pytest.raises(DataError, match="question"):
        before_run(load_spec(None, {**LLM_RUN, "dataset.path": str(bad),
                                    "dataset.corpus": str(bad)}))


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(jobs.time, "time", lambda: now[0])
    return now


def planned_run(tmp_path, plan) -> Run:
    home = tmp_path / "r"
    jobs.queue(home, "build", {"name": "r"}, ("generate", "judge"), plan=plan)
    return Run(home)


def test_the_eta_counts_judging_ahead_and_weighs_the_estimate_against_a_slow_start(
        tmp_path, clock):
    """The first answer of a local model also starts its server: alone it promised 89 min."""
    run = planned_run(tmp_path, {"generate": {"calls": 100, "seconds": 500.0},
                                 "judge": {"calls": 100, "seconds": 200.0}})
    report = jobs.Reporter(run.path, interval=0)
    run.set_stage("generate", status="running")
    report("generating answers", 0, 100)
    assert report.eta() == pytest.approx(100 * 5 + 200)  # the plan alone, judging included
    assert jobs.status(run.path).eta_includes == ("judge",)
    clock[0] += 60  # the first answer took a minute (the server started)
    report("generating answers", 1, 100)
    first = report.eta()
    assert first < 99 * 60 / 3  # not 99 answers at a minute each
    for i in range(2, 41):  # then one answer every 5 s, as planned
        clock[0] += 5
        report("generating answers", i, 100)
    assert report.eta() == pytest.approx(60 * 5 + 200, rel=0.25)
    run.set_stage("generate", status="done")
    run.set_stage("judge", status="running")
    report("judging answers", 0, 100)
    assert report.ahead() == [] and report.eta() == pytest.approx(200)
    assert jobs.status(run.path).eta_includes == ()
    assert eta_text(report.eta(), ()) == "about 3 min left"


def test_a_stage_up_to_date_is_not_counted_ahead(tmp_path, clock):
    run = planned_run(tmp_path, {"generate": {"calls": 10, "seconds": 50.0},
                                 "judge": {"calls": 10, "seconds": 20.0}})
    report = jobs.Reporter(run.path, interval=0)
    report("generate: up to date", 1, 1)
    run.set_stage("judge", status="running")
    report("judging answers", 0, 10)
    assert report.eta() == pytest.approx(20)


def test_the_eta_text_names_what_it_includes():
    assert eta_text(1500, ("judge",)) == "about 25 min left, judging included"
    assert eta_text(30, ()) == "under a minute left"
    assert eta_text(None, ("judge",)) == ""


def test_without_a_plan_the_eta_is_the_steps_own(tmp_path, clock):
    jobs.queue(tmp_path / "r", "build", {"name": "r"}, ("generate",))
    report = jobs.Reporter(tmp_path / "r", interval=0)
    report("generating answers", 0, 10)
    assert report.eta() is None  # no rate yet, no estimate
    clock[0] += 20
    report("generating answers", 2, 10)
    assert report.eta() == pytest.approx(80)


@pytest.mark.parametrize(("inherited", "expected"), [(0, 10), (10, 10), (12, 12)])
def test_the_priority_is_set_once_never_stacked(inherited, expected):
    """A job started from a niced server went to 19 (10 + 10 inherited)."""
    code = ("import os; from ragdash.jobs import lower_priority, NICE; "
            "lower_priority(NICE); print(lower_priority(NICE))")
    out = subprocess.run(["nice", "-n", str(inherited), sys.executable, "-c", code],
                         capture_output=True, text=True, check=True)
    assert int(out.stdout) == expected


def test_generation_goes_question_by_question():
    """Every system of the first questions first: LLM-only calls (no context, fast) no longer
    all come first, so the ETA's rate is the stage's mix, and a stopped run holds whole
    questions."""
    class Recorder:
        model = "recorder"

        def __init__(self):
            self.seen: list[str] = []

        def chat(self, messages, **_):
            from ragdash.llm.types import LLMResult

            text = messages[-1]["content"]
            self.seen.append(text)
            return LLMResult("answer", 10, 2, 0.01, "recorder")

    from ragdash.llm.settings import LLMSettings

    requests = [(q, "llm_only", None, f"question {q}?", None) for q in "abc"] + \
        [(q, r, 100, f"question {q}?", f"context {r} {q}") for r in ("bm25", "sim")
         for q in "abc"]
    backend = Recorder()
    out = generate(requests, LLMSettings(concurrency=1), backend=backend)
    asked = [next(q for q in "abc" if f"question {q}?" in text) for text in backend.seen]
    assert asked == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert list(zip(out["qid"], out["system"], strict=True)) == [r[:2] for r in requests]
