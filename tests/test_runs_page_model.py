"""Issue 34 §3: the Compare runs page's model (`ragdash.view.runs`), tested without Streamlit:
the catalogue filters, the runs a first visit compares (one's own before the demos), the best
pair of each run, the leaderboard's shown columns and the two pairs' tiles."""

from __future__ import annotations

import pandas as pd

from ragdash.view.runs import (
    CatalogueFilters,
    best_pairs,
    first_selection,
    leaderboard_rows,
    pair_tiles,
)

CATALOGUE = pd.DataFrame({
    "key": ["k1", "k2", "k3", "demo1", "demo2", "demo3"],
    "name": ["sweep-a", "sweep-b", "Other", "demo squad", "demo run", "demo run 2"],
    "folder": ["runs/s-a", "runs/s-b", "runs/o", "data/demo_squad", "data/demo_run", "d/x"],
    "dataset_key": ["D1", "D1", "D2", "D3", "D4", "D4"],
    "chunker": ["recursive", "none", "recursive", "recursive", "none", "none"],
    "llm": ["no", "generate, judge", "no", "generate, judge", "no", "no"],
})


def test_catalogue_filters():
    def keys(f: CatalogueFilters) -> list[str]:
        return f.apply(CATALOGUE)["key"].tolist()

    assert keys(CatalogueFilters()) == CATALOGUE["key"].tolist()
    assert keys(CatalogueFilters(search="SWEEP")) == ["k1", "k2"]
    assert keys(CatalogueFilters(search="demo_squad")) == ["demo1"]  # the folder too
    assert keys(CatalogueFilters(search="s.a")) == []  # literal, not a pattern
    assert keys(CatalogueFilters(datasets=["D1", "D2"], chunkers=["recursive"])) == ["k1", "k3"]
    assert keys(CatalogueFilters(llm="ran")) == ["k2", "demo1"]
    assert keys(CatalogueFilters(llm="not run", datasets=["D4"])) == ["demo2", "demo3"]


def test_a_first_visit_compares_ones_own_runs_first():
    demo = str.startswith
    assert first_selection(CATALOGUE, lambda k: demo(k, "demo")) == ["k1", "k2"]
    own_alone = CATALOGUE[CATALOGUE["key"].isin(["k1", "k3", "demo2", "demo3"])]
    assert first_selection(own_alone, lambda k: demo(k, "demo")) == ["demo2", "demo3"]
    assert first_selection(CATALOGUE.iloc[:1], lambda k: False) == []
    many = pd.DataFrame({"key": [f"r{i}" for i in range(9)], "dataset_key": ["D"] * 9})
    assert first_selection(many, lambda k: False) == [f"r{i}" for i in range(6)]


def test_best_pairs_and_leaderboard_rows():
    best = pd.DataFrame({"name": ["a*", "b"], "score": [0.8123, 0.79],
                         "retriever": ["bm25", "sim"], "gap": [0.0, -0.0223]})
    assert best_pairs(best, 500, md=lambda s: s.replace("*", r"\*"), name=str.upper) == (
        r"Each run with its best retriever at N = 500: **a\*** 0.812 (BM25) · **b** 0.790 "
        "(SIM, -0.022)")
    board = pd.DataFrame({"rank": [1, 2], "lo": [0.7, 0.6], "hi": [0.9, 0.8],
                          "gap": [0.0, -0.05], "judged_correct": [0.5, None],
                          "est_correct": [None, 0.25]})
    rows = leaderboard_rows(board, lambda v: "—" if v is None else f"{v:.0%}")
    assert rows["ci"].tolist() == ["0.700–0.900", "0.600–0.800"]
    assert rows["gap"].tolist() == ["leader", "-0.050"]
    assert rows["judged_correct"].tolist() == ["50%", "—"]
    assert rows["est_correct"].tolist() == ["—", "25%"]


def test_two_pairs_tiles():
    pair = {"win": 1200, "tie": 3, "loss": 7, "mean_diff": 0.0456, "lo": 0.01, "hi": 0.08,
            "n": 1210, "n_nonzero": 1207, "pvalue": None}
    tiles = pair_tiles(pair, "A", "B")
    assert [t.value for t in tiles] == ["1,200", "3", "7", "+0.046", "—"]
    assert tiles[3].delta == "95 % CI +0.010 to +0.080"
    assert "A scores more" in tiles[0].help and "B scores more" in tiles[2].help
    assert "(1207 of 1210)" in tiles[4].help
    assert pair_tiles({**pair, "pvalue": 0.00012}, "A", "B")[4].value == "0.00012"
    # every question ties (issue 49): no interval beside "the same on every question"
    ties = pair_tiles({**pair, "win": 0, "loss": 0, "tie": 20, "n": 20, "mean_diff": 0.0,
                       "lo": -0.1, "hi": 0.1}, "A", "B")
    assert ties[3].delta == "every question ties: no interval"
