"""The Retrieval scores page's model: the approximate-index note, the distribution statistics
at one budget and the breakdown by question metadata, built by pure functions so the page only
lays them out and each is tested without a browser. `name` renders a retriever's name.

    stats = distribution_stats(frames.at_budget(ir, n), retrievers, name=label)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

STATS_COLUMNS = {"mean": "mean Score_IR", "median": "median", "full": "all parts found",
                 "zero": "nothing found", "n": "questions"}
"""The distribution table's columns as the page heads them."""

FULL, NOTHING = 0.999, 0.001
"""A question's Score_IR at or above FULL counts as "all parts found", at or below NOTHING as
"nothing found" (a float tolerance around 1 and 0)."""


def index_recall(recall: Mapping[str, dict], name: Callable[[str], str] = str) -> str | None:
    """What the approximate dense indexes cost (the manifest's `index_recall`: per retriever
    its index, recall against exact search, k and the questions measured), or None."""
    if not recall:
        return None
    return "Approximate dense index: " + "; ".join(
        f"{name(r)} searches {x['index'].upper()}, which returns {x['recall']:.1%} of exact "
        f"search's top {x['k']} chunks (recall@{x['k']} on this run's {x['queries']} questions)"
        for r, x in recall.items()) + "."


def distribution_stats(at: pd.DataFrame, retrievers: Sequence[str],
                       name: Callable[[str], str] = str) -> pd.DataFrame:
    """Per retriever at one budget (rows of `frames.at_budget`): mean and median Score_IR, the
    shares of questions with every part found and with nothing found, and the questions."""
    stats = at.groupby("retriever")["score"].agg(
        mean="mean", median="median", full=lambda s: (s >= FULL).mean(),
        zero=lambda s: (s <= NOTHING).mean(), n="count").reindex(list(retrievers))
    return stats.rename(index=name).rename(columns=STATS_COLUMNS)


def breakdown_table(breakdown: pd.DataFrame, retrievers: Sequence[str],
                    name: Callable[[str], str] = str) -> pd.DataFrame:
    """Mean Score_IR per metadata group (rows) and retriever (columns), with each group's
    questions (`curves.breakdown`'s long table, pivoted)."""
    wide = breakdown.pivot(index="group", columns="retriever", values="mean")[list(retrievers)]
    counts = breakdown.groupby("group")["n"].max()
    return wide.rename(columns=name).assign(questions=counts)
