"""Jobs outside the dashboard process (issue 21, part 3): the run lock, progress in the run's
manifest, interrupted jobs, Cancel (the run stays resumable, no finished LLM call is lost), and
the API key reaching the job process in its environment only."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.waiting import wait_for

from ragdash import jobs
from ragdash.cli import main
from ragdash.config import load_config
from ragdash.rundir import MANIFEST, Run
from ragdash.rundir import lock as run_lock
from ragdash.rundir.lock import RunLocked
from ragdash.stages.runner import requires, run_stages

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-JOB-SECRET-never-on-disk-0123456789"
HOLD = ("import fcntl, os, sys, time\n"
        "fd = os.open(os.path.join(sys.argv[1], '.lock'), os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, str(os.getpid()).encode())\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n")


@pytest.fixture
def other_process(tmp_path):
    """Hold a run's lock from another process (as a job or a `ragdash run` would)."""
    procs: list[subprocess.Popen] = []

    def hold(run_dir: Path) -> subprocess.Popen:
        run_dir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        return proc

    yield hold
    for p in procs:
        p.kill()
        p.wait()


def cfg_for(generic, tmp_path, **more) -> dict:
    """A run on the tiny dataset, BM25 on whole documents; budgets in whitespace tokens (no
    job process here is about tokens: each spares loading Llama-3's, about 1 CPU-s)."""
    ds, corpus = generic
    return load_config(None, {"dataset": {"path": str(ds), "corpus": str(corpus),
                                          "format": "auto"},
                              "chunker": {"method": "none"}, "retrievers": {"use": "bm25"},
                              "budgets": "20:60:20", "tokenizer": "whitespace",
                              "runs_root": str(tmp_path / "runs"), **more})


# --- the lock -----------------------------------------------------------------------------------


def test_the_run_lock_refuses_another_process_and_frees_when_it_dies(tmp_path, other_process):
    run_dir = tmp_path / "r"
    assert run_lock.holder(run_dir) is None
    proc = other_process(run_dir)
    assert run_lock.holder(run_dir) == proc.pid
    with pytest.raises(RunLocked, match=rf"run {run_dir} is in use: process {proc.pid} is "
                                        "running stages in it") as caught:
        run_lock.acquire(run_dir, wait=0.2)
    assert caught.value.pid == proc.pid
    proc.kill()  # no clean-up of its own: the kernel drops the lock
    proc.wait()
    assert run_lock.holder(run_dir) is None
    with run_lock.locked(run_dir):
        assert run_lock.holder(run_dir) == os.getpid()
    assert run_lock.holder(run_dir) is None


def test_the_lock_is_reentrant_in_its_thread_only(tmp_path):
    run_dir = tmp_path / "r"
    refused: list[BaseException] = []

    def other_thread() -> None:
        try:
            run_lock.acquire(run_dir, wait=0.1)
        except RunLocked as exc:
            refused.append(exc)

    with run_lock.locked(run_dir), run_lock.locked(run_dir):  # the runner inside a job
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert len(refused) == 1
    assert run_lock.holder(run_dir) is None


def test_adopt_refuses_a_descriptor_that_is_not_the_held_lock(tmp_path):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    fd = os.open(tmp_path / "other", os.O_RDWR | os.O_CREAT)
    try:
        with pytest.raises(ValueError, match="is not the lock file"):
            run_lock.adopt(run_dir, fd)
    finally:
        os.close(fd)
    with pytest.raises(ValueError, match="is not the lock file"):
        run_lock.adopt(run_dir, 987)  # not open
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        fd = os.open(run_dir / ".lock", os.O_RDWR)
        with pytest.raises(ValueError, match="is not the held lock"):
            run_lock.adopt(run_dir, fd)  # the lock file, but another process holds it
        os.close(fd)
    finally:
        other.kill()
        other.wait()


def test_ragdash_run_is_refused_while_another_process_runs_the_run(generic, tmp_path, capsys,
                                                                   other_process):
    ds, corpus = generic
    run_dir = tmp_path / "r"
    proc = other_process(run_dir)
    code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--chunker", "none",
                 "--retrievers", "bm25", "--budgets", "20:60:20", "--run-dir", str(run_dir),
                 "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"ragdash: error: run {run_dir} is in use: process {proc.pid}" in err
    assert not (run_dir / MANIFEST).exists()  # nothing written over the other's run


def test_a_second_start_of_a_running_job_is_refused(generic, tmp_path, other_process):
    run_dir = tmp_path / "runs" / "r"
    other_process(run_dir)
    with pytest.raises(RunLocked, match="is in use"):
        jobs.spawn(run_dir, "build", cfg=cfg_for(generic, tmp_path), stages=("ingest",))
    assert jobs.record(run_dir) == {}  # the other's run is left untouched


# --- progress in the manifest ------------------------------------------------------------------


def test_progress_goes_to_the_manifest_throttled_with_an_eta(generic, tmp_path, monkeypatch):
    run_dir = tmp_path / "r"
    Run(run_dir).create(cfg_for(generic, tmp_path))
    Run(run_dir).set_stage("ingest", status="done")
    writes: list[dict] = []
    real = jobs.write

    def counted(home, **fields):
        writes.append(fields)
        real(home, **fields)

    monkeypatch.setattr(jobs, "write", counted)
    report = jobs.Reporter(run_dir, interval=60)
    report("scoring", 0, 100)
    for i in range(1, 50):
        report("scoring", i, 100)  # within the interval: not written
    assert len(writes) == 1 and jobs.record(run_dir)["done"] == 0
    report.step.since -= 10  # the step began 10 s ago, and 49 of 100 are done
    report("judging", 0, 10)  # a new step is written at once
    assert len(writes) == 2
    rec = jobs.record(run_dir)
    assert (rec["message"], rec["done"], rec["total"]) == ("judging", 0, 10)
    assert [line.split()[-1] for line in rec["log"]] == ["scoring", "judging"]
    report.interval = 0
    report.step.since -= 10
    report("judging", 5, 10)
    assert jobs.record(run_dir)["eta"] == pytest.approx(10, abs=0.5)  # 5 left at 0.5 per s
    m = Run(run_dir).manifest  # the manifest keeps its config and stage records
    assert m["config"]["chunker"]["method"] == "none" and m["stages"]["ingest"] == {
        "status": "done"}
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".run.json.")]


def test_a_job_that_fails_records_the_error_and_the_stage(generic, tmp_path, monkeypatch):
    import pandas as pd

    real = pd.DataFrame.to_parquet

    def full(self, path, *args, **kwargs):
        if Path(path).name.startswith(".examples.parquet."):
            raise OSError(28, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    run_dir = tmp_path / "r"
    jobs.queue(run_dir, "build", cfg_for(generic, tmp_path), ("ingest",))
    assert jobs.run_job(run_dir) == 1
    job = jobs.status(run_dir)
    assert job.state == "failed" and not job.active
    assert job.error.startswith(f"ingest: {run_dir / 'examples.parquet'}: No space left")
    assert Run(run_dir).stage("ingest")["status"] == "failed"
    from ragdash.rundir import StageRecord
    from ragdash.ui.jobs import stage_status

    # a stage still recorded as running (its record could not be written) ended with its job
    running = StageRecord("ingest", "running")
    assert stage_status(job, running).status == "failed"
    assert stage_status(replace(job, state="interrupted"), running).status == "interrupted"
    assert stage_status(replace(job, state="running"), running).status == "running"
    assert Run(run_dir).stages()["ingest"].status == "failed"


def test_queue_refuses_an_unknown_kind_or_a_run_without_config(tmp_path):
    with pytest.raises(ValueError, match="unknown job kind 'nap'"):
        jobs.queue(tmp_path / "r", "nap")
    with pytest.raises(ValueError, match="needs its config"):
        jobs.queue(tmp_path / "r", "build")


# --- interrupted --------------------------------------------------------------------------------


def test_a_running_record_without_a_live_holder_reads_as_interrupted(generic, tmp_path,
                                                                     other_process):
    run_dir = tmp_path / "runs" / "r"
    jobs.queue(run_dir, "build", cfg_for(generic, tmp_path), ("ingest",))
    jobs.write(run_dir, state="running", pid=12345)
    assert jobs.status(run_dir).state == "interrupted"  # nobody holds the run
    proc = other_process(run_dir)
    assert jobs.status(run_dir).state == "running"
    assert [s.home for s in jobs.jobs_under(tmp_path / "runs")] == [run_dir]
    proc.kill()  # a crash: the record still says running
    proc.wait()
    job = jobs.status(run_dir)
    assert job.state == "interrupted" and not job.active
    assert jobs.jobs_under(tmp_path / "runs")[0].state == "interrupted"  # still listed
    assert not jobs.cancel(run_dir)  # nothing to cancel


def test_a_job_that_ends_between_the_record_and_the_lock_reads_as_it_ended(generic, tmp_path,
                                                                        monkeypatch):
    """The record says running; before the lock is looked at, the job writes that it failed
    and lets the lock go (as `run_job` does): that is a failed job, not an interrupted one
    (seen under load: a failing synth job read as interrupted)."""
    run_dir = tmp_path / "runs" / "r"
    jobs.queue(run_dir, "build", cfg_for(generic, tmp_path), ("ingest",))
    jobs.write(run_dir, state="running", pid=12345)
    holder = run_lock.holder

    def ends_meanwhile(home):
        jobs.write(run_dir, state="failed", error="DataError: no such file",
                   ended_ts=time.time())
        return holder(home)

    monkeypatch.setattr(run_lock, "holder", ends_meanwhile)
    job = jobs.status(run_dir)
    assert (job.state, job.error) == ("failed", "DataError: no such file")


def test_jobs_under_lists_recent_and_active_jobs_only(generic, tmp_path):
    root = tmp_path / "runs"
    for name, state, ended in (("old", "finished", time.time() - 3600),
                               ("new", "failed", time.time() - 5)):
        jobs.queue(root / name, "build", cfg_for(generic, tmp_path), ("ingest",))
        jobs.write(root / name, state=state, ended_ts=ended)
    Run(root / "no-job").create(cfg_for(generic, tmp_path))
    assert [s.home.name for s in jobs.jobs_under(root)] == ["new"]
    assert jobs.jobs_under(tmp_path / "missing") == []


# --- a job process: follow, cancel, resume, the API key ----------------------------------------


def test_a_spawned_job_runs_in_its_own_process_and_finishes(generic, tmp_path):
    run_dir = tmp_path / "runs" / "r"
    cfg = cfg_for(generic, tmp_path)
    job = jobs.spawn(run_dir, "build", cfg=cfg, stages=("ingest", "chunk", "retrieve"))
    assert job.active and job.state == "starting"
    # the process holds the run from the start: refused at once, before it can have ended (a
    # `run_stages` here retries for a second, in which a job on 4 questions may finish)
    with pytest.raises(RunLocked):
        run_lock.acquire(run_dir, wait=0)
    done = wait_for(lambda: (s := jobs.status(run_dir)) and not s.active and s, 180, "the job")
    assert done.state == "finished", (run_dir / jobs.LOG).read_text()[-2000:]
    assert done.pid not in (None, os.getpid())
    assert Run(run_dir).stage("retrieve")["status"] == "done"
    # the record says finished before the process lets the run go (so a finished job never
    # reads as interrupted): the lock is free once the process has ended
    wait_for(lambda: run_lock.holder(run_dir) is None, 60, "the run's lock to be let go")


def _responder(body):
    time.sleep(0.3)
    return Reply(text="An answer.")


def test_cancel_stops_the_job_keeps_every_finished_call_and_resumes(generic, tmp_path,
                                                                    monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the key comes from the dashboard
    with FakeLLMServer(default=_responder) as srv:
        cfg = cfg_for(generic, tmp_path, llm={"backend": "openai", "model": "fake-model",
                                              "base_url": srv.openai_url, "concurrency": 2},
                      generation={"enabled": True, "budget": 60})
        run_dir = tmp_path / "runs" / "r"
        run_stages(cfg, run_dir, requires("generate"))
        jobs.spawn(run_dir, "llm", cfg=cfg, stages=("generate",), api_key=SECRET)
        wait_for(lambda: len(srv.chat_requests()) >= 3 or not jobs.status(run_dir).active,
                 what="three LLM calls")
        job = jobs.status(run_dir)
        assert job.state == "running" and jobs.cancellable(job)
        argv = Path(f"/proc/{job.pid}/cmdline").read_bytes().decode(errors="replace")
        assert "ragdash.cli\0job" in argv and SECRET not in argv
        assert os.getpriority(os.PRIO_PROCESS, job.pid) == min(
            19, os.getpriority(os.PRIO_PROCESS, 0) + jobs.NICE)  # it yields to the pages
        assert jobs.cancel(run_dir, grace=60)
        ended = wait_for(lambda: (s := jobs.status(run_dir)) and not s.active and s, 60,
                         "the cancelled job to end")
        assert ended.state == "cancelled" and "resume" in ended.error
        assert Run(run_dir).stage("generate")["status"] == "interrupted"
        first = len(srv.chat_requests())
        assert first < 8  # 4 questions x (bm25 + LLM only): stopped before the end
        with sqlite3.connect(tmp_path / "runs" / "_llm_cache.sqlite") as db:
            kept = db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
        assert kept >= 3
        assert all(r["authorization"] == f"Bearer {SECRET}" for r in srv.chat_requests())
        # starting again resumes: only the calls without a reply go to the server
        jobs.spawn(run_dir, "llm", cfg=cfg, stages=("generate",), api_key=SECRET)
        done = wait_for(lambda: (s := jobs.status(run_dir)) and not s.active and s, 180,
                        "the resumed job")
        assert done.state == "finished", (run_dir / jobs.LOG).read_text()[-2000:]
        assert len(srv.chat_requests()) - first == 8 - kept
    assert len(Run(run_dir).read("answers")) == 8
    for f in run_dir.iterdir():  # the key is in no file of the run
        assert SECRET.encode() not in f.read_bytes(), f


def test_cancel_kills_a_job_that_ignores_sigterm(tmp_path):
    """A job stuck where SIGTERM cannot stop it is killed after the grace period; the record
    then says cancelled and its running stage interrupted."""
    run_dir = tmp_path / "r"
    Run(run_dir).create({"name": "r"})
    fd = run_lock.acquire(run_dir)
    stuck = ("import os, signal, sys, time\n"
             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
             "sys.path.insert(0, sys.argv[3])\n"
             "from ragdash import jobs\n"
             "from ragdash.rundir import lock\n"
             "lock.adopt(sys.argv[1], int(sys.argv[2]))\n"
             "jobs.write(sys.argv[1], state='running', pid=os.getpid())\n"
             "from ragdash.rundir import Run\n"
             "Run(sys.argv[1]).set_stage('generate', status='running')\n"
             "print('ready', flush=True)\n"
             "time.sleep(600)\n")
    jobs.queue(run_dir, "llm", {"name": "r"}, ("generate",))
    proc = subprocess.Popen([sys.executable, "-c", stuck, str(run_dir), str(fd), str(ROOT)],
                            pass_fds=(fd,), start_new_session=True, stdout=subprocess.PIPE,
                            text=True)
    run_lock.hand_over(run_dir)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert jobs.cancel(run_dir, grace=1.0)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        ended = wait_for(lambda: (s := jobs.status(run_dir)) and not s.active and s, 30,
                         "the record")
        assert ended.state == "cancelled" and "killed" in ended.error
        assert Run(run_dir).stage("generate")["status"] == "interrupted"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cancel_leaves_a_process_it_did_not_start_alone(generic, tmp_path, other_process):
    """A `ragdash` command a user typed holds the run, in its shell's process group: the
    dashboard does not offer to kill it."""
    run_dir = tmp_path / "runs" / "r"
    jobs.queue(run_dir, "build", cfg_for(generic, tmp_path), ("ingest",))
    proc = other_process(run_dir)
    jobs.write(run_dir, state="running", pid=proc.pid)
    assert jobs.status(run_dir).state == "running"
    assert not jobs.cancellable(jobs.status(run_dir))
    assert not jobs.cancel(run_dir)
    assert proc.poll() is None


def test_the_job_command_refuses_a_run_in_use(generic, tmp_path, other_process):
    run_dir = tmp_path / "r"
    jobs.queue(run_dir, "build", cfg_for(generic, tmp_path), ("ingest",))
    other_process(run_dir)
    done = subprocess.run([sys.executable, "-m", "ragdash.cli", "job", "--run-dir",
                           str(run_dir)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is in use" in done.stderr, done.stderr
    assert json.loads((run_dir / MANIFEST).read_text())["job"]["state"] == "starting"


def test_a_run_in_use_is_neither_renamed_nor_deleted(generic, tmp_path, other_process):
    from ragdash.rundir.manage import delete_run, rename_run

    root = tmp_path / "runs"
    Run(root / "r").create(cfg_for(generic, tmp_path))
    proc = other_process(root / "r")
    with pytest.raises(ValueError, match="is in use"):
        rename_run(Run(root / "r"), "s", root)
    with pytest.raises(ValueError, match="is in use"):
        delete_run(Run(root / "r"), root)
    assert (root / "r" / MANIFEST).exists() and not (root / "s").exists()
    proc.kill()
    proc.wait()
    moved = rename_run(Run(root / "r"), "s", root)
    assert moved.id == "s" and run_lock.holder(root / "s") is None
    delete_run(moved, root)
    assert not (root / "s").exists()


@pytest.mark.parametrize("bad", [{"done": "many"}, {"pid": "x"}, {"planned": [{"no": 1}]},
                                 {"log": 5}])
def test_a_job_record_not_written_by_ragdash_reads_as_failed(tmp_path, bad):
    run_dir = tmp_path / "r"
    Run(run_dir).create({"name": "r"})
    jobs.write(run_dir, kind="build", state="finished", **bad)
    job = jobs.status(run_dir)
    assert job.state == "failed" and "is not one ragdash wrote" in job.error


def test_an_interrupted_job_is_listed_for_a_day(generic, tmp_path):
    root = tmp_path / "runs"
    for name, last in (("yesterday", time.time() - 2 * 86400), ("tonight", time.time() - 3600)):
        jobs.queue(root / name, "build", cfg_for(generic, tmp_path), ("ingest",))
        jobs.write(root / name, state="running", started_ts=last - 100, heartbeat_ts=last)
    listed = jobs.jobs_under(root)
    assert [(s.home.name, s.state) for s in listed] == [("tonight", "interrupted")]
    assert listed[0].elapsed == pytest.approx(100)  # it ended at its last report, not now


def test_a_sweep_job_reports_in_its_root_and_runs_each_combination(generic, tmp_path):
    from ragdash.sweep import parse_vary, plan

    ds, corpus = generic
    root = tmp_path / "runs" / "grid"
    planned = plan(None, {"dataset": {"path": str(ds), "corpus": str(corpus), "format": "auto"},
                          "chunker": {"method": "none"}, "retrievers": {"use": "bm25"},
                          "budgets": "20:60:20"},
                   [parse_vary("retrievers.params.bm25.k=2,3")], runs_root=root)
    with run_lock.locked(root):
        jobs.queue(root, "sweep", planned=planned)
        assert jobs.run_job(root) == 0
    job = jobs.status(root)
    assert (job.kind, job.state) == ("sweep", "finished")
    assert job.runs == tuple(p.run_dir for p in planned) and len(job.runs) == 2
    assert all((d / "ir_scores.parquet").exists() for d in job.runs)
    assert any("Sweep: 2 run(s), 2 made" in line for line in job.log)
    assert "job" not in Run(job.runs[0]).manifest  # the sweep's record is its root's
    assert [s.home for s in jobs.jobs_under(tmp_path / "runs")] == [root]


def test_the_eta_follows_the_recent_rate_not_a_fast_start(tmp_path, monkeypatch):
    """A 19-minute LLM stage promised '5 min left' early on: its first replies came fast. The
    ETA is measured over the last ETA_WINDOW seconds once the step has run that long."""
    clock = [1000.0]
    monkeypatch.setattr(jobs.time, "time", lambda: clock[0])
    monkeypatch.setattr(jobs, "write", lambda home, **fields: None)
    report = jobs.Reporter(tmp_path, interval=0)
    report("generating", 0, 100)
    for i in range(1, 51):  # 50 cached replies in 10 s
        clock[0] += 0.2
        report("generating", i, 100)
    for i in range(51, 81):  # then one every 10 s
        clock[0] += 10
        report("generating", i, 100)
    since_start = 20 * (clock[0] - 1000.0) / 80  # what the old rate since the start said
    assert since_start < 80
    assert report.eta() == pytest.approx(20 * 10, rel=0.05)  # 20 left at one per 10 s
    early = jobs.Reporter(tmp_path, interval=0)  # before the window: the rate since the start
    early("judging", 0, 10)
    clock[0] += 30
    early("judging", 3, 10)
    assert early.eta() == pytest.approx(70)
