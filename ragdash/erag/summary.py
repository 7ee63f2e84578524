"""eRAG's summary (Salemi & Zamani, SIGIR 2024): per-retriever means and per-answer values of
erag.parquet, in the shape the signals panel merges (qid, system), and what the labels cost;
read by the stage, `ragdash erag` and the run view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd

from ragdash.erag.evaluate import distinct_calls
from ragdash.erag.measures import MEASURES


class ERAGSummary(NamedTuple):
    """`means`: per retriever (`system`), n (questions) and the mean of each measure;
    `per_answer`: qid, system and each measure, one row per (question, retriever)."""

    means: pd.DataFrame
    per_answer: pd.DataFrame


def erag_summary(table: pd.DataFrame, order: Sequence[str] = ()) -> ERAGSummary:
    """The per-retriever means and per-answer values of erag.parquet (`table`); retrievers in
    `order` first, then as they come."""
    per = table[["qid", "system", *MEASURES]].assign(qid=table["qid"].astype(str))
    systems = [*[s for s in order if s in set(per["system"])],
               *[s for s in dict.fromkeys(per["system"]) if s not in order]]
    grouped = per.groupby("system", sort=False)
    means = grouped[list(MEASURES)].mean().join(grouped.size().rename("n"))
    means = means.reindex(systems).reset_index()[["system", "n", *MEASURES]]
    return ERAGSummary(means, per.reset_index(drop=True))


def erag_cost(labels: pd.DataFrame) -> tuple[float, float]:
    """(LLM calls, tokens in + out) of erag_labels.parquet: one call per distinct (question,
    chunk), as the signals table counts a signal's cost."""
    calls = distinct_calls(labels)
    tokens = calls["tokens_in"].fillna(0).astype(float) + calls["tokens_out"].fillna(0) \
        .astype(float)
    return float(len(calls)), float(tokens.sum())
