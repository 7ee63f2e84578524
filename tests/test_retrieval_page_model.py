"""Issue 34 §3: the Retrieval scores page's model (`ragdash.view.retrieval`), tested without
Streamlit: the approximate-index note, the distribution statistics at one budget (recomputed here
by hand) and the breakdown by question metadata."""

from __future__ import annotations

import pandas as pd
import pytest

from ragdash.view.retrieval import breakdown_table, distribution_stats, index_recall


def test_the_index_note_names_each_approximate_retriever():
    assert index_recall({}) is None
    note = index_recall({"sim": {"index": "hnsw", "recall": 0.987, "k": 10, "queries": 60}},
                        name=str.upper)
    assert note == ("Approximate dense index: SIM searches HNSW, which returns 98.7% of exact "
                    "search's top 10 chunks (recall@10 on this run's 60 questions).")


def test_distribution_stats_at_one_budget():
    at = pd.DataFrame({"retriever": ["bm25"] * 4 + ["sim"] * 2,
                       "score": [1.0, 0.0, 0.5, 0.9995, 0.0005, 0.25]})
    stats = distribution_stats(at, ["sim", "bm25", "mmr"], name=str.upper)
    assert list(stats.index) == ["SIM", "BM25", "MMR"]  # the order asked, a missing one empty
    assert list(stats.columns) == ["mean Score_IR", "median", "all parts found",
                                   "nothing found", "questions"]
    bm25 = stats.loc["BM25"]
    assert bm25["mean Score_IR"] == pytest.approx((1 + 0 + 0.5 + 0.9995) / 4)
    assert (bm25["all parts found"], bm25["nothing found"], bm25["questions"]) == (0.5, 0.25, 4)
    assert stats.loc["SIM", "nothing found"] == 0.5
    assert stats.loc["MMR"].isna().all()


def test_the_breakdown_pivots_groups_against_retrievers():
    long = pd.DataFrame({"group": ["bridge", "bridge", "comparison", "comparison"],
                         "retriever": ["bm25", "sim", "bm25", "sim"],
                         "mean": [0.4, 0.6, 0.8, 0.2], "n": [30, 30, 10, 10]})
    wide = breakdown_table(long, ["sim", "bm25"], name=str.upper)
    assert list(wide.columns) == ["SIM", "BM25", "questions"]
    assert wide.loc["bridge"].tolist() == [0.6, 0.4, 30]
    assert wide.loc["comparison", "questions"] == 10
