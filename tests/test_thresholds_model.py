"""Issue 34 §3: the Thresholds page's model (`ragdash.view.thresholds`), built by pure functions
over a run's view and tested without Streamlit: where the panel opens, the agreement tiles
against their majority baseline (recomputed here from the judged pairs), the estimated-vs-judged
table and its order sentence, the fit sentence, and a run without judgments. The page only
lays it out (tests/test_app_pages.py renders it and moves its sliders)."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.make_run import make_run

from ragdash.analysis import frames
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.rundir import Run
from ragdash.view import RunView
from ragdash.view.thresholds import COMPARE_COLUMNS, no_judgments, panel, start


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("thr") / "thr", n_questions=30, seed=2,
                    retrievers=("bm25", "sim"))


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("thr") / "bare", n_questions=12, seed=3,
                    retrievers=("bm25", "sim"), llm=False)


def test_the_panel_opens_at_the_calibrated_budget_and_the_fit(made):
    view = RunView(made)
    opening = start(view)
    cal = Run(made).calibration()
    assert opening.n == cal.budget
    fit = view.thresholds(opening.n)
    assert (opening.h, opening.k) == (round(fit.fit_h, 3), round(fit.fit_k, 3))


def test_agreement_tiles_match_the_judged_pairs(made):
    view = RunView(made)
    n = start(view).n
    page = panel(view, n, 0.2, 0.6, name=str.upper)
    pairs = page.data.pairs
    ir, judge = pairs["ir"].to_numpy(float), pairs["judge"].to_numpy()
    labels = [t.label for t in page.tiles]
    assert labels == ["Agreement of k", "Agreement of h", "In the estimated class",
                      "Share error (MAE)"]
    for tile, hit, cls in ((page.tiles[0], ir > 0.6, 5), (page.tiles[1], ir < 0.2, 1)):
        agree = float((hit == (judge == cls)).mean())
        majority = max((judge == cls).mean(), 1 - (judge == cls).mean())
        assert tile.value == f"{agree:.1%}"
        assert tile.delta == f"{(agree - majority) * 100:+.1f} pp vs majority"
        assert tile.good == (agree > majority)


def test_moving_k_moves_the_estimated_correct_share(made):
    view = RunView(made)
    n = start(view).n
    low, high = panel(view, n, 0.1, 0.3), panel(view, n, 0.1, 0.95)
    assert list(low.table.columns) == list(COMPARE_COLUMNS.values())
    assert high.table["est. correct"].sum() < low.table["est. correct"].sum()
    assert (high.table["judged 5"] == low.table["judged 5"]).all()  # the judge does not move
    assert "Sliders now: h = 0.100, k = 0.950." in high.fit
    assert "bands overlap" not in high.fit
    assert "bands overlap" in panel(view, n, 0.8, 0.4).fit


def test_sentences_name_the_retrievers_as_the_page_does(made):
    view = RunView(made)
    page = panel(view, start(view).n, 0.2, 0.6, name=lambda r: f"<{r}>")
    assert list(page.table.index) == ["<bm25>", "<sim>"]
    assert "<bm25>" in page.order and "<sim>" in page.order
    verdicts = ("the same order", "a different order", "no order for the rule to preserve")
    assert sum(v in page.order for v in verdicts) == 1
    head, rest = page.bias
    assert head and rest and page.reference[2] == "fit"
    assert page.confusion and page.basis.startswith("Every figure below counts")


def test_the_judges_order_is_an_order_only_where_a_test_tells_the_retrievers_apart():
    """Issue 49: "by the judge: SIM > BM25" on 11 against 10 answers judged 5 was an order the
    numbers do not make; a clear difference is one."""
    import pandas as pd

    from ragdash.view.thresholds import judge_order

    def pairs(fives: dict[str, list[int]]) -> pd.DataFrame:
        return pd.DataFrame([{"qid": f"q{i}", "retriever": r, "ir": 0.5, "judge": 5 if f else 3}
                             for r, fs in fives.items() for i, f in enumerate(fs)])

    close = pairs({"bm25": [1] * 10 + [0] * 20, "sim": [0] * 19 + [1] * 11})
    act = close.assign(five=close["judge"] == 5).groupby("retriever")["five"].mean()
    assert judge_order(close, act, str.upper) == "SIM ≈ BM25"
    apart = pairs({"bm25": [1] * 28 + [0] * 2, "sim": [0] * 28 + [1] * 2})
    act = apart.assign(five=apart["judge"] == 5).groupby("retriever")["five"].mean()
    assert judge_order(apart, act, str.upper) == "BM25 > SIM"
    same = pairs({"bm25": [1, 0] * 15, "sim": [0, 1] * 15})
    act = same.assign(five=same["judge"] == 5).groupby("retriever")["five"].mean()
    assert judge_order(same, act, str.upper) == "BM25 = SIM"


def test_a_run_without_judgments_starts_at_the_papers_values(bare):
    view = RunView(bare)
    opening = start(view)
    assert opening.n == frames.default_budget(RunView(bare).budgets)
    assert (opening.h, opening.k) == (PAPER_H, PAPER_K)
    page = panel(view, opening.n, PAPER_H, PAPER_K)
    assert page.tiles == [] and page.table is None and page.bias is None
    assert page.reference == (PAPER_H, PAPER_K, "paper")
    assert "No judgments in this run" in page.fit
    assert no_judgments(view) == "The run has no judgments"
    shares = page.result["estimated"]
    assert np.isfinite(shares.select_dtypes("number").to_numpy()).all()
