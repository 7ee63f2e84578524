"""A run's main LLM tables, one row per (question, system) at the run's generation budget (a
budget sweep keeps the main budget, `frames.primary`): its answers, its judgments and its answers
scored against the gold answers (§2.3 of El Yagouby, Chevallet & Gaussier 2024). Read through
the run's reader, so a cached reader and its memo follow every file read; the run view
(`ragdash.view.RunView`) and the labels (`ragdash.labels`) both read them here."""

from __future__ import annotations

import pandas as pd

from ragdash.analysis import reference as gold
from ragdash.analysis.frames import primary
from ragdash.rundir import Run


def answers(run: Run) -> pd.DataFrame | None:
    """answers.parquet, one row per (qid, system); None without answers."""
    return primary(run.table("answers"), run.config.generation_budget)


def judgments(run: Run) -> pd.DataFrame | None:
    """judgments.parquet, one row per (qid, system) (the main budget, one judge model)."""
    return primary(run.table("judgments"), run.config.generation_budget)


def reference(run: Run) -> pd.DataFrame | None:
    """Every answer against the gold answers (reference.parquet; computed from the answers when
    the run has none, or one older than its answers); None without answers."""
    reader = run.reader  # every file looked at through it, so a memo follows them
    stamp = reader.stamp(run.file("answers"))
    if stamp is None:
        return None
    saved = reader.stamp(run.file("reference"))
    if saved is not None and saved[1] >= stamp[1]:  # Stamp: (inode, mtime_ns, size)
        return run.read("reference")
    return gold.score_answers(run.read("answers"), run.read("examples"))


def main_reference(run: Run) -> pd.DataFrame | None:
    """`reference`, one row per (qid, system) at the generation budget."""
    return primary(reference(run), run.config.generation_budget)
