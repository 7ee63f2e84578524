"""Pipeline runs in background threads, and their progress panel (the Build and LLM pages)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash.rundir import Run, StageRecord, stage_table
from ragdash.rundir.run import error_text
from ragdash.stages import STAGES
from ragdash.stages.runner import run_stages
from ragdash.ui import widgets


@dataclass
class Job:
    """A pipeline run in a background thread; the page reads its fields, the thread writes."""

    run_dir: Path
    stages: tuple[str, ...] = tuple(STAGES)
    started: float = field(default_factory=time.time)
    status: str = "running"  # running | done | failed
    message: str = "starting"
    done: int = 0
    total: int = 0
    error: str | None = None
    log: list[str] = field(default_factory=list)
    finished: float | None = None
    since: float = field(default_factory=time.time)  # when the current message began
    done0: int = 0  # `done` when it began
    runs: tuple[Path, ...] = ()  # a sweep's run directories (run_dir is then its root)

    def progress(self, message: str, done: int, total: int) -> None:
        if message != self.message:
            self.log.append(f"{time.time() - self.started:6.1f}s  {message}")
            self.since, self.done0 = time.time(), done
        self.message, self.done, self.total = message, done, total

    def eta(self, now: float | None = None) -> float | None:
        """Seconds left in the current step at the rate measured since it began (None before
        two progress points or without a total)."""
        now = time.time() if now is None else now
        made, spent = self.done - self.done0, now - self.since
        if self.status != "running" or not self.total or made <= 0 or spent <= 0:
            return None
        return (self.total - self.done) * spent / made


def eta_text(seconds: float | None) -> str:
    """'about 3 min left' (empty when unknown)."""
    if seconds is None:
        return ""
    if seconds < 60:
        return "under a minute left"
    minutes = round(seconds / 60)
    return f"about {minutes} min left" if minutes < 90 else f"about {minutes / 60:.1f} h left"


@st.cache_resource
def jobs() -> dict[str, Job]:
    """Every build started by this server process, by run directory (shared across reruns,
    sessions and page reloads)."""
    return {}


def running() -> list[Job]:
    """The jobs still running in this server, oldest first."""
    return sorted((j for j in jobs().values() if j.status == "running"), key=lambda j: j.started)


def recent(seconds: float = 600) -> list[Job]:
    """The jobs running, or finished in the last `seconds`, oldest first: a reloaded page
    reconnects to them and still shows how they ended."""
    now = time.time()
    return sorted((j for j in jobs().values()
                   if j.status == "running" or now - (j.finished or now) < seconds),
                  key=lambda j: j.started)


def start(cfg: dict, run_dir: Path, stages: tuple[str, ...], api_key: str | None = None) -> Job:
    """Run `stages` of `cfg` into run_dir in a background thread; the job is shared by reruns.
    `api_key` (OpenAI-compatible backends) stays in this thread's memory."""
    job = Job(run_dir, tuple(stages))
    background(job, lambda: run_stages(cfg, run_dir, stages=job.stages, progress=job.progress,
                                       api_key=api_key), f"ragdash-build-{run_dir.name}")
    jobs()[str(run_dir)] = job
    return job


def background(job: Job, work: Callable[[], object], name: str) -> Job:
    """Run `work()` in a daemon thread; the job's status, error and end time follow it (a
    pipeline run's manifest also records its stages)."""
    def target() -> None:
        try:
            work()
            job.status = "done"
        except BaseException as exc:  # shown on the page
            job.status, job.error = "failed", error_text(exc)
        job.finished = time.time()

    threading.Thread(target=target, name=name, daemon=True).start()
    return job


def stage_status(job: Job, record: StageRecord) -> StageRecord:
    """A stage's record in the job's panel: its manifest record, except that a stage still
    recorded as running when the job has ended failed with it (the manifest could not be
    written, e.g. on a full disk)."""
    ended = record.status == "running" and job.status == "failed"
    return replace(record, status="failed") if ended else record


def show(job: Job, on_open: Callable | None = None, key: str = "job") -> None:
    """The status panel of a job: stage table, progress bar, log, errors."""
    run = Run(job.run_dir)
    elapsed = (job.finished or time.time()) - job.started
    state_ = {"running": "running", "done": "complete", "failed": "error"}[job.status]
    title = {"running": f"Building {job.run_dir.name}… ({elapsed:.0f} s)",
             "done": f"Run {job.run_dir.name} finished in {elapsed:.0f} s",
             "failed": f"Run {job.run_dir.name} failed after {elapsed:.0f} s"}[job.status]
    if job.runs:
        title = title.replace("Run ", "Sweep ").replace("Building", "Sweeping")
    with st.status(title, state=state_, expanded=True):
        table = stage_table(stage_status(job, r) for r in run.stages(job.stages).values()
                            )[["stage", "status", "seconds"]] \
            if not job.runs else pd.DataFrame([_sweep_row(d) for d in job.runs])
        st.dataframe(table, hide_index=True, width="stretch")
        frac = job.done / job.total if job.total else 0.0
        left = eta_text(job.eta())
        st.progress(min(max(frac, 0.0), 1.0), text=f"{job.message} ({job.done:,}/{job.total:,}"
                    + (f", {left})" if left else ")") if job.total else job.message)
        if job.log:
            st.code("\n".join(job.log[-12:]), language=None)
        if job.error:
            st.error(widgets.md(job.error))
    if job.status == "done" and on_open is not None:
        st.button(f"Open run {widgets.md(job.run_dir.name)}", on_click=on_open,
                  key=f"{key}_open",
                  type="primary")




def _sweep_row(run_dir: Path) -> dict:
    """A sweep's run as a row: its name and each stage's status."""
    stages = Run(run_dir).stages()
    return {"run": run_dir.name, **{s: r.status for s, r in stages.items()}} \
        if stages else {"run": run_dir.name, "ingest": "waiting"}


def follow(job: Job | None, on_open: Callable | None = None, key: str = "job",
           render: Callable[[], None] | None = None) -> None:
    """Show a job (with `render`, else `show`); while it runs, a fragment refreshes the panel
    every second."""
    if job is None:
        return
    draw = render or (lambda: show(job, on_open, key))
    if job.status != "running":
        draw()
        return

    @st.fragment(run_every=1.0)
    def poll() -> None:
        draw()
        if job.status != "running":
            st.rerun()

    poll()
