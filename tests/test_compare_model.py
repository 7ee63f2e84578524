"""Issue 34 §3: the Compare retrievers page's model (`ragdash.view.compare_retrievers`): every
pair's wins, ties, losses and tests, and one pair in detail (tiles, the Holm-adjusted verdict,
the largest differences), tested without Streamlit; the page only lays it out."""

from __future__ import annotations

import pandas as pd
import pytest
from fixtures.make_run import make_run

from ragdash.analysis import compare
from ragdash.rundir import Run
from ragdash.view import RunView
from ragdash.view import compare_retrievers as model


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("cmp") / "cmp", n_questions=30, seed=5,
                    retrievers=("bm25", "sim", "mmr"), llm=False)


def test_every_pair_has_its_counts_and_both_p_values(made):
    table = model.every_pair(RunView(made), ["bm25", "sim", "mmr"], 500, name=str.upper)
    assert list(table["pair"]) == ["BM25 vs SIM", "BM25 vs MMR", "SIM vs MMR"]
    assert list(table.columns) == ["pair", "first higher", "tie", "second higher",
                                   "mean difference", "Wilcoxon p", "Holm p"]
    assert (table[["first higher", "tie", "second higher"]].sum(axis=1) == 30).all()
    tested = table.dropna(subset=["Wilcoxon p"])
    assert (tested["Holm p"] >= tested["Wilcoxon p"]).all()  # adjusted upwards


def test_one_pair_in_detail_agrees_with_the_analysis(made):
    view = RunView(made)
    detail = model.pair(view, "bm25", "sim", 500, name=str.upper)
    w = compare.win_tie_loss(view.ir_scores(), "bm25", "sim", 500)
    wins, ties, losses, mean, p = detail.tiles
    assert detail.title == "BM25 vs SIM at N = 500"
    assert (wins.label, wins.value, ties.value, losses.value) == (
        "BM25 higher", f"{w['win']:,}", f"{w['tie']:,}", f"{w['loss']:,}")
    assert mean.value.startswith(("+", "-")) and p.label == "Wilcoxon p (unadjusted)"
    assert "at N = 500" in detail.verdict and "Holm-adjusted" in detail.verdict
    diffs = detail.largest["diff"].abs().tolist()
    assert diffs == sorted(diffs, reverse=True) and not detail.all_tie


def _tied(made, tmp_path) -> Run:
    """A copy of the run where BM25 scores exactly as SIM on every question."""
    import shutil

    copy = tmp_path / "tie"
    shutil.copytree(made, copy)
    run = Run(copy)
    ir = run.read("ir_scores")
    sim = ir[ir["retriever"] == "sim"]
    run.write("ir_scores", pd.concat([ir[ir["retriever"] != "bm25"],
                                      sim.assign(retriever="bm25")], ignore_index=True))
    return run


def test_identical_retrievers_tie_everywhere_and_offer_nothing_to_open(made, tmp_path):
    copy = _tied(made, tmp_path).path
    detail = model.pair(RunView(copy), "bm25", "sim", 500)
    assert detail.tiles[1].value == "30" and detail.tiles[4].value == "—"  # no test
    assert detail.all_tie


def test_the_largest_differences_open_the_question_in_the_browser_with_both_retrievers(made):
    """Issue 48 §4 (the links left the page): every row's link and the largest difference's
    open the question browser on the run, the question and both retrievers, cut at N unless N
    is the browser's default cut; what the page's AppTest render and the browser checked."""
    from urllib.parse import parse_qsl

    view = RunView(made)
    detail = model.pair(view, "bm25", "sim", 500, name=str.upper)
    big = model.largest(detail, "runs/cmp", 500, view.budgets)
    assert big.table["qid"].tolist() == detail.largest["qid"].tolist()
    for qid, url in zip(big.table["qid"], big.table["open"], strict=True):
        assert url.startswith("browser?")
        assert parse_qsl(url.split("?", 1)[1]) == [
            ("run", "runs/cmp"), ("qb_q", qid), ("qb_ret", "bm25"), ("qb_ret", "sim"),
            ("qb_cut", "500")]
    top = detail.largest["qid"].iloc[0]
    assert big.top.url == big.table["open"].iloc[0]
    assert big.top_label == f"Open the largest difference ({top}) in the question browser"
    assert big.note == ""
    at_default = model.largest(detail, "runs/cmp", 1000, view.budgets)  # the browser's cut
    assert ("qb_cut", "1000") not in at_default.top.params
    assert "qb_cut" not in at_default.top.url and "qb_cut" not in at_default.table["open"][0]


def test_a_tie_offers_no_link_and_no_common_question_no_table(made, tmp_path):
    """Every question tying: the table stays, with no largest difference to open; no question
    scored by both: no table (what test_pages_agree's tie render checked on the page)."""
    run = _tied(made, tmp_path)
    copy = run.path
    budgets = RunView(copy).budgets
    tie = model.largest(model.pair(RunView(copy), "bm25", "sim", 500), "k", 500, budgets)
    assert tie.table is not None and tie.top is None and tie.top_label == ""
    assert tie.note == "Every question ties at N = 500: no difference to open."
    detail = model.pair(RunView(copy), "bm25", "sim", 500)
    none = model.largest(model.Pair(**{**detail.__dict__, "largest": None}), "k", 500,
                         budgets)
    assert none.table is None and none.top is None
    assert none.note == "No question was scored by both retrievers."
