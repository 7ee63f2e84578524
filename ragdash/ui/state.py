"""Streamlit state shared by pages: which runs exist, the selected run, and how they are read.

Runs: the bundled demo runs (`RAGDASH_DEMO_RUN`, paths joined by `os.pathsep`; default
`data/demo_squad` then `data/demo_run`), then the runs under the runs root (`RAGDASH_RUNS_ROOT`,
default `runs/`). The selected run lives in the sidebar selectbox `run`, bound to the URL
(`?run=...`). Every run a page gets reads through `READER`: each file cached by its path and
stamp, so a rewritten file is read again, and a file linking outside its run is never read;
`view(run)` keeps each answer in `MEMO` until a file it read changes (`ragdash.rundir.reader`).
A run whose run.json cannot be read (`Run.problem`) is offered to no page: the sidebar lists
it with its reason (`unreadable_runs`), and every other run works as before.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ragdash import run_spec as saved
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Memo, Run
from ragdash.rundir.reader import CachedReader, json_at, manifest_at, table_at
from ragdash.rundir.root import RunsRoot
from ragdash.ui.paths import demo_paths, runs_root
from ragdash.view import RunsView, RunView

READER = CachedReader(st.cache_data(show_spinner=False, max_entries=128)(table_at),
                      st.cache_data(show_spinner=False, max_entries=64)(json_at),
                      st.cache_data(show_spinner=False, max_entries=256)(manifest_at))
MEMO = Memo(READER, max_entries=256, busy=st.spinner)


def view(run: Run) -> RunView:
    """What pages ask of a run, each answer kept until a file it read changes."""
    return RunView(run, READER, MEMO)


def runs_view(runs: dict[str, Run]) -> RunsView:
    return RunsView(runs, READER, MEMO)


def is_demo(run: Run) -> bool:
    return any(run.path.resolve() == p.resolve() for p in demo_paths())


def run_key(path: Path) -> str:
    """How a run is named in the URL: its path relative to the project (or absolute)."""
    p = Path(path).resolve()
    return str(p.relative_to(PROJECT_ROOT)) if p.is_relative_to(PROJECT_ROOT) else str(p)


def _all_runs() -> dict[str, Run]:
    """{url key: Run}, the demo runs first, then the runs under the runs root (`RunsRoot.runs`),
    readable or not."""
    out = {run_key(p): Run(p, READER) for p in demo_paths() if Run(p, READER).exists()}
    for r in RunsRoot(runs_root()).runs(READER):
        out.setdefault(run_key(r.path), r)
    return out


def available_runs() -> dict[str, Run]:
    """{url key: Run} of the runs pages can show: `_all_runs` but those whose run.json cannot
    be read (`unreadable_runs`)."""
    return {k: r for k, r in _all_runs().items() if saved.problem(r) is None}


def unreadable_runs() -> dict[str, str]:
    """{url key: why its run.json (or the config it keeps) cannot be read} (file and reason),
    in `_all_runs`' order."""
    return {k: problem for k, r in _all_runs().items()
            if (problem := saved.problem(r)) is not None}


def run_label(run: Run) -> str:
    """How pickers show a run: its id, `(demo)` for a demo, `<folder>/<id>` in a sweep folder."""
    if is_demo(run):
        return f"{run.id} (demo)"
    if run.path.parent.resolve() != runs_root().resolve():
        return f"{run.path.parent.name}/{run.id}"
    return run.id


def select_run(container=None) -> Run | None:
    """The sidebar run picker; returns the selected run (None when there is none)."""
    from ragdash.ui import widgets

    runs, bad, box = available_runs(), unreadable_runs(), container or st.sidebar
    if bad:
        with box.expander(f"{len(bad)} run{'s' if len(bad) > 1 else ''} cannot be read",
                          icon=":material/warning:"):
            st.markdown("\n".join(f"- {widgets.code(k)}: {widgets.md(why)}"
                                   for k, why in list(bad.items())[:20])
                        + (f"\n\n… and {len(bad) - 20} more." if len(bad) > 20 else ""))
    if not runs:
        box.info("No run yet: build one on **Build a run**.")
        return None
    asked = st.query_params.get("run")
    if asked and asked not in runs and "run" not in st.session_state:
        why = f"cannot be read ({widgets.md(bad[asked])})" if asked in bad else "was not found"
        box.warning(f"Run {widgets.code(asked)} (from the link) {why}; showing "
                    f"{widgets.code(next(iter(runs)))} instead.")
    key = widgets.url_select("Run", list(runs), "run", container=box,
                             format_func=lambda k: run_label(runs[k]),
                             help="The run directory every page shows: the demos first, then "
                                  f"the runs under {widgets.code(run_key(runs_root()))}.")
    if text := saved.run_spec(runs[key]).description:
        box.caption(widgets.md(text))
    return runs[key]


def current_run() -> Run | None:
    runs = available_runs()
    return runs.get(st.session_state.get("run")) or next(iter(runs.values()), None)


def require_run() -> Run:
    """The selected run, or an info box and stop."""
    run = current_run()
    if run is None:
        st.info("There is no run to show yet. Build one on the **Build a run** page, or with "
                "`ragdash run --config configs/paper.yaml --limit 100`.")
        st.stop()
    return run

