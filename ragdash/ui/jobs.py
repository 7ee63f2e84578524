"""The progress panels of jobs: a pipeline run, a sweep or a question generation runs as a
`ragdash job` process (`ragdash.jobs`) that the Build, LLM and Data pages follow from disk,
with Cancel; nothing long runs in this server's process."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash import jobs as core
from ragdash.rundir import Run, StageRecord, stage_table
from ragdash.rundir.lock import holder
from ragdash.ui import widgets


def _minutes(seconds: float, up: bool) -> tuple[float, str]:
    """`seconds` rounded down (or `up`) to a step that suits its size: a minute under 10 min,
    5 min under an hour, half an hour beyond; (value, unit)."""
    minutes = seconds / 60
    step, unit = (1, "min") if minutes < 10 else (5, "min") if minutes < 60 else (30, "h")
    value = (math.ceil if up else math.floor)(minutes / step - 1e-9 * up) * step
    return (value / 60, "h") if unit == "h" else (value, "min")


def eta_text(seconds: float | None, includes: tuple[str, ...] = (), low: float | None = None,
             high: float | None = None) -> str:
    """The time left in words, empty when unknown: a range ('about 20–30 min left') when
    `low` and `high` are known (`Reporter.time_left`), else the one figure rounded; with the later
    stages it counts ('…, judging included')."""
    if seconds is None:
        return ""
    ranged = low is not None and high is not None
    low, high = (low, high) if ranged else (seconds, seconds)
    if high < 60:
        text = "under a minute left"
    elif not ranged:  # one figure: a record written before ranges
        minutes = round(seconds / 60)
        text = f"about {minutes} min left" if minutes < 90 else \
            f"about {minutes / 60:.1f} h left"
    else:
        (lo, lo_unit), (hi, hi_unit) = _minutes(low, up=False), _minutes(high, up=True)
        if low < 60 or lo == 0:
            text = f"up to {_number(hi)} {hi_unit} left"
        elif (lo, lo_unit) == (hi, hi_unit):
            text = f"about {_number(hi)} {hi_unit} left"
        elif lo_unit == hi_unit:
            text = f"about {_number(lo)}–{_number(hi)} {hi_unit} left"
        else:
            text = f"about {_number(lo)} {lo_unit} to {_number(hi)} {hi_unit} left"
    words = [core.STAGE_WORDS.get(s, s) for s in includes]
    if words:
        text += f", {' and '.join(words)} included"
    return text


def _number(x: float) -> str:
    return f"{x:g}"


def start(cfg: dict, run_dir: Path, stages: tuple[str, ...], api_key: str | None = None,
          kind: str = "build", plan: dict | None = None) -> core.Status:
    """Start `stages` of `cfg` in run_dir as a job process (`ragdash.jobs.spawn`; `RunLocked`
    when another process runs it). `api_key` reaches the process in its environment only;
    `plan`: the LLM stages' estimated time (`ragdash.planning.stage_plan`), for the ETA."""
    return core.spawn(run_dir, kind, cfg=cfg, stages=stages, api_key=api_key, plan=plan)


def start_task(home: Path, kind: str, task: dict, api_key: str | None = None) -> core.Status:
    """Start a task job (`ragdash.jobs.TASKS`, e.g. question generation) in its folder `home`
    as a job process; `RunLocked` when one runs there already (a second tab, the same task)."""
    return core.spawn(home, kind, task=task, api_key=api_key)


def current(home: Path | str) -> core.Status | None:
    """The job of a run directory (or sweep root), read from disk."""
    return core.status(home)


def recent(root: Path, seconds: float = 600) -> list[core.Status]:
    """The jobs under the runs root that run, were interrupted, or ended in the last `seconds`:
    a reloaded page, or the page of a restarted server, reconnects to them."""
    return core.jobs_under(root, seconds)


def busy(run_dir: Path) -> bool:
    """Whether some process (a job or a `ragdash` command) runs stages in `run_dir` now."""
    return holder(run_dir) is not None


def stage_status(job: core.Status, record: StageRecord) -> StageRecord:
    """A stage's record in the job's panel: its manifest record, except that a stage still
    recorded as running when the job has ended ended with it (failed, or interrupted: the
    manifest could not be written, e.g. on a full disk, or the process was killed)."""
    if record.status != "running" or job.active:
        return record
    return replace(record, status="failed" if job.state == "failed" else "interrupted")


_TITLES = {"starting": "Building {name}… (starting)", "running": "Building {name}… ({s:.0f} s)",
           "finished": "Run {name} finished in {s:.0f} s",
           "failed": "Run {name} failed after {s:.0f} s",
           "cancelled": "Run {name} cancelled after {s:.0f} s",
           "interrupted": "Run {name} was interrupted after {s:.0f} s"}
TASK_WORDS = {"synth": ("Generating questions", "Question generation"),
              "evidence": ("Finding evidence", "Finding evidence")}
"""How a task job's panel names its work while it runs, and once it ended."""
_STATES = {"starting": "running", "running": "running", "finished": "complete"}


def show(job: core.Status, on_open: Callable | None = None, key: str = "job") -> None:
    """The status panel of a job: stage table, progress bar, log, errors, Cancel."""
    title = _TITLES[job.state].format(name=widgets.md(job.home.name), s=job.elapsed)
    if job.kind == "sweep":
        title = title.replace("Run ", "Sweep ").replace("Building", "Sweeping")
    elif job.kind in core.TASKS:
        doing, done = TASK_WORDS[job.kind]
        title = _TITLES[job.state].replace("Building {name}…", f"{doing}…").replace(
            "Run {name}", done).format(s=job.elapsed)
    with st.status(title, state=_STATES.get(job.state, "error"), expanded=True):
        if job.runs:
            table = pd.DataFrame([_sweep_row(d) for d in job.runs])
        elif job.kind not in core.TASKS:
            run = Run(job.home)
            records = run.stages(job.stages or None).values() if run.exists() else []
            table = stage_table(stage_status(job, r) for r in records)
            table = table[["stage", "status", "seconds"]] if len(table) else table
        if job.kind not in core.TASKS:
            st.dataframe(table, hide_index=True, width="stretch")
        frac = job.done / job.total if job.total else 0.0
        left = eta_text(job.eta, job.eta_includes, job.eta_low, job.eta_high) \
            if job.active else ""
        st.progress(min(max(frac, 0.0), 1.0), text=widgets.md(
            f"{job.message} ({job.done:,}/{job.total:,}" + (f", {left})" if left else ")")
            if job.total else job.message))
        if job.log:
            st.code("\n".join(job.log[-12:]), language=None)
        if job.error and job.state != "cancelled":
            st.error(widgets.md(job.error))
        if job.state in ("cancelled", "interrupted"):
            st.info("Finished LLM calls are kept in the reply cache, so starting it again "
                    "goes on where it stopped." if job.kind in core.TASKS else
                    "The run is resumable: finished stages and LLM replies are kept, so "
                    "starting it again goes on where it stopped.")
        if core.cancellable(job):
            what = TASK_WORDS[job.kind][1].lower() if job.kind in core.TASKS \
                else widgets.md(job.home.name)
            st.button(f"Cancel {what}", key=f"{key}_cancel", on_click=core.cancel,
                      args=(job.home,), help="Stop the job (it stays resumable)")
    if job.state == "finished" and on_open is not None and job.kind != "sweep":
        st.button(f"Open run {widgets.md(job.home.name)}", on_click=on_open,
                  key=f"{key}_open", type="primary")


def _sweep_row(run_dir: Path) -> dict:
    """A sweep's run as a row: its name and each stage's status."""
    stages = Run(run_dir).stages()
    return {"run": run_dir.name, **{s: r.status for s, r in stages.items()}} \
        if stages else {"run": run_dir.name, "ingest": "waiting"}


REFRESH_S = 4.0
"""Seconds between redraws of a followed job's panel: each costs the server about 0.13 s of
CPU (Streamlit's fragment rerun; the panel's own code takes 8 ms), so once a second took 13 % of
a core; every 4 s, about 3 % (`benchmarks/bench_progress_refresh.py`)."""


def follow_run(home: Path | str, on_open: Callable | None = None, key: str = "job") -> None:
    """Show the job of `home` from disk; while it is active, a fragment re-reads and redraws it
    every REFRESH_S seconds (and reruns the page once it has ended)."""
    job = core.status(home)
    if job is None:
        return
    if not job.active:
        show(job, on_open, key)
        return

    @st.fragment(run_every=REFRESH_S)
    def poll() -> None:
        now = core.status(home)
        if now is None or not now.active:  # the whole page shows how it ended (its buttons
            st.rerun()  # outside this fragment)
        show(now, on_open, key)

    poll()
