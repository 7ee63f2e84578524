"""Issue 34 §3: the Compare runs page's model (`ragdash.view.runs`), tested without Streamlit:
the catalogue filters, the runs a first visit compares (one's own before the demos), the best
pair of each run, the leaderboard's shown columns and the two pairs' tiles."""

from __future__ import annotations

import pandas as pd
import pytest

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


def test_the_catalogue_grouped_by_dataset():
    """Issue 48 §4: the page groups the filtered catalogue through the model (it did in the
    page): datasets in order of first appearance, "varied" only where a sweep set values."""
    from ragdash.view.runs import dataset_groups

    cat = CATALOGUE.assign(dataset=CATALOGUE["dataset_key"].str.lower() + ".jsonl",
                           sha256=CATALOGUE["dataset_key"] + "abc",
                           varied=["chunker=none", "", "", "", "", ""],
                           **{c: 0 for c in ("questions", "chunker_params", "retrievers",
                                             "retriever_params", "budgets", "tokenizer",
                                             "scoring", "judged_correct", "size_mb",
                                             "updated")})
    groups = dataset_groups(cat)
    assert [(g.key, g.dataset, g.sha256, g.runs, g.count) for g in groups] == [
        ("D1", "d1.jsonl", "D1abc", ["k1", "k2"], "2 runs"),
        ("D2", "d2.jsonl", "D2abc", ["k3"], "1 run"),
        ("D3", "d3.jsonl", "D3abc", ["demo1"], "1 run"),
        ("D4", "d4.jsonl", "D4abc", ["demo2", "demo3"], "2 runs")]
    assert list(groups[0].table.columns)[:2] == ["name", "varied"]
    assert "varied" not in groups[1].table.columns
    assert groups[0].table["name"].tolist() == ["sweep-a", "sweep-b"]
    assert dataset_groups(cat.iloc[:0]) == []


def test_the_largest_differences_leave_out_ties_and_open_both_pairs_in_the_browser():
    from ragdash.view.runs import differences, side_by_side

    a, b = "runs/x::bm25", "runs/x::sim"
    scores = pd.DataFrame({"qid": ["q1", "q2", "q3", "q1", "q2", "q3"],
                           "retriever": [a] * 3 + [b] * 3, "budget": [100] * 6,
                           "score": [1.0, 0.5, 0.2, 0.0, 0.5, 0.6]})
    examples = pd.DataFrame({"qid": ["q1", "q2", "q3"], "question": ["One?", "Two?", "Three?"]})
    big = differences(scores, examples, a, b, 100)
    assert big["qid"].tolist() == ["q1", "q3"]  # q2 ties: left out
    assert big["diff"].tolist() == pytest.approx([1.0, -0.4])
    assert big["question"].tolist() == ["One?", "Three?"]
    assert differences(scores, examples, a, b, 100, limit=1)["qid"].tolist() == ["q1"]
    assert differences(scores, None, a, b, 100).empty
    assert side_by_side(a, b, "q1") == [("run", "runs/x"), ("qb_q", "q1"), ("qb_ret", "bm25"),
                                        ("qb_ret", "sim")]
    assert side_by_side(a, "runs/y::bm25", "q3") == [
        ("run", "runs/x"), ("qb_q", "q3"), ("qb_ret", "bm25"), ("qb_run2", "runs/y"),
        ("qb_ret2", "bm25")]
    assert side_by_side(a, a, "q1")[2:] == [("qb_ret", "bm25")]  # one retriever once


def test_the_largest_differences_link_each_question_to_the_browser_with_both_pairs():
    """Issue 48 §4 (the links left the page): each row's link and the largest difference's open
    the question browser on that question with both pairs side by side, from the first run,
    cut at N unless N is the browser's default cut; one run's two retrievers stay in one run.
    What the Compare runs page's table held, checked in a browser before."""
    from urllib.parse import parse_qsl

    from ragdash.view.runs import largest

    a, b, other = "runs/x::bm25", "runs/x::sim", "runs/y::bm25"
    scores = pd.DataFrame({"qid": ["q1", "q2", "q3"] * 3,
                           "retriever": [a] * 3 + [b] * 3 + [other] * 3, "budget": [100] * 9,
                           "score": [1.0, 0.5, 0.2, 0.0, 0.5, 0.6, 0.1, 0.5, 0.2]})
    examples = pd.DataFrame({"qid": ["q1", "q2", "q3"], "question": ["One?", "Two?", "Three?"]})
    two = largest(scores, examples, a, b, 100, (100, 800), "A", "B")
    assert two.table["qid"].tolist() == ["q1", "q3"]
    assert [parse_qsl(u.split("?", 1)[1]) for u in two.table["open"]] == [
        [("run", "runs/x"), ("qb_q", q), ("qb_ret", "bm25"), ("qb_ret", "sim"), ("qb_cut", "100")]
        for q in ("q1", "q3")]
    assert two.table["open"].str.startswith("browser?").all()
    assert two.top.params == (("run", "runs/x"), ("qb_q", "q1"), ("qb_ret", "bm25"),
                              ("qb_ret", "sim"), ("qb_cut", "100"))
    assert two.top_label == "Open the largest difference (q1) in the question browser, A beside B"
    assert two.note.startswith("2 questions shown, the largest |first − second| first")
    # the browser's default cut (the largest budget without 1000) is left out of the link
    across = largest(scores, examples, a, other, 100, (100,), "A", "C")
    assert across.top.params == (("run", "runs/x"), ("qb_q", "q1"), ("qb_ret", "bm25"),
                                 ("qb_run2", "runs/y"), ("qb_ret2", "bm25"))
    assert across.top.url == ("browser?run=runs%2Fx&qb_q=q1&qb_ret=bm25&qb_run2=runs%2Fy"
                              "&qb_ret2=bm25")
    same = largest(scores.assign(score=0.5), examples, a, b, 100, (100,), "A", "B")
    assert same.table is None and same.top is None
    assert same.note == ("No question differs at N = 100: the two score the same on every "
                         "shared question.")
