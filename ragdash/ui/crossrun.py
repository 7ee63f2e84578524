"""The question browser across runs: a second run on the same dataset, its retrievers' columns
beside the first run's, cut at the same N. Runs on another dataset are refused with the
Compare runs page's message (`ragdash.view.leaderboard.NotComparable`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ragdash.rundir import Run
from ragdash.ui import state, widgets
from ragdash.view.leaderboard import NotComparable, compare_runs, dataset_of

KEY = "qb_run2"  # the second run's URL key


@dataclass(frozen=True)
class Side:
    """One column of the browser: a retriever of a run."""

    run: Run
    retriever: str


def comparable_runs(run: Run) -> tuple[dict[str, Run], int]:
    """The other runs with scores on the same dataset file as `run` ({url key: Run}), and how
    many other runs with scores read another dataset."""
    mine, me = dataset_of(run).key, state.run_key(run.path)
    same, elsewhere = {}, 0
    for key, other in state.available_runs().items():
        if key == me or not other.has("ir_scores"):
            continue
        if dataset_of(other).key == mine:
            same[key] = other
        else:
            elsewhere += 1
    return same, elsewhere


def _refusal(run: Run, asked: str) -> str | None:
    """Why the run named in the URL cannot stand beside `run` (None if it is unknown)."""
    other = state.available_runs().get(asked)
    if other is None:
        return f"Run {widgets.code(asked)} (from the link) was not found."
    try:
        compare_runs({state.run_key(run.path): run, asked: other})
    except NotComparable as exc:
        return widgets.md(exc)
    return None


def pick_second_run(run: Run, qid: str, container=None) -> Run | None:
    """A picker of a second run on the same dataset, kept in the URL; None when none is picked,
    none is offered, or the picked run did not score `qid` (a warning says so)."""
    box = container or st
    same, elsewhere = comparable_runs(run)
    asked = st.query_params.get(KEY)
    if asked and asked not in same and KEY not in st.session_state:
        box.warning(_refusal(run, asked) or f"Run {widgets.code(asked)} cannot be compared here.")
    if not same:
        if elsewhere:
            box.caption(f"No other run on this dataset to compare with ({elsewhere} other "
                        f"run{'s' if elsewhere > 1 else ''} read other datasets).")
        return None
    note = f" {elsewhere} run(s) on other datasets are not offered." if elsewhere else ""
    key = widgets.url_select(
        "Compare with another run", ["", *same], KEY, default="", container=box,
        format_func=lambda k: "— none —" if k == "" else state.run_label(same[k]),
        help="Open this question in a second run on the same dataset file (same sha256), "
             "e.g. the same retriever under another chunker: its columns come beside these, "
             "cut at the same N." + note)
    if not key:
        return None
    other = same[key]
    scored = other.table("ir_scores")
    if scored is None or qid not in set(scored["qid"].astype(str)):
        box.warning(f"{widgets.md(state.run_label(other))} did not score question "
                    f"{widgets.code(qid)} (it was left out of that run, e.g. by --limit), so it "
                    "cannot stand beside this one.")
        return None
    return other
