"""The budget-free headline (ragdash.analysis.area): areas under Score_IR curves with intervals,
and the budgets where the leader's lead is significant, on data where the truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.analysis import area

BUDGETS = [100, 200, 400, 800, 1000]


def _ir(scores: dict[str, np.ndarray]) -> pd.DataFrame:
    """scores: retriever -> (questions x budgets) array."""
    rows = [{"qid": f"q{i}", "retriever": r, "budget": b, "score": float(v[i, j])}
            for r, v in scores.items() for i in range(len(v)) for j, b in enumerate(BUDGETS)]
    return pd.DataFrame(rows)


def _saturating(n: int = 40) -> pd.DataFrame:
    """'a' reaches every part by N = 400 on every question; 'b' only by N = 1000: b trails at
    100–800 and both score 1 at 1000."""
    rng = np.random.default_rng(1)
    a = np.column_stack([rng.uniform(0.6, 0.9, n), np.full(n, 0.95), np.ones(n), np.ones(n),
                         np.ones(n)])
    b = np.column_stack([rng.uniform(0.1, 0.3, n), rng.uniform(0.3, 0.5, n),
                         rng.uniform(0.5, 0.7, n), rng.uniform(0.7, 0.9, n), np.ones(n)])
    return _ir({"a": a, "b": b})


def test_curve_area_is_the_mean_height_by_the_trapezoid_rule():
    assert area.curve_area([100, 200, 300], [0.0, 1.0, 1.0]) == pytest.approx(0.75)
    assert area.curve_area([300, 100, 200], [1.0, 0.0, 1.0]) == pytest.approx(0.75)  # unsorted
    assert area.curve_area([500], [0.4]) == pytest.approx(0.4)
    assert np.isnan(area.curve_area([], []))


def test_the_mean_of_question_areas_is_the_area_of_the_mean_curve():
    ir = _saturating()
    areas = area.question_areas(ir)
    mean_curve = ir[ir["retriever"] == "b"].groupby("budget")["score"].mean()
    assert areas["b"].mean() == pytest.approx(area.curve_area(mean_curve.index, mean_curve))


def test_a_lead_that_saturation_hides_at_the_largest_budget_is_named_where_it_holds():
    h = area.headline(_saturating())
    assert (h.leader, h.runner_up) == ("a", "b")
    assert h.lead_lo > 0
    assert h.significant == [100, 200, 400, 800] and h.tied == [1000]
    text = " ".join(area.sentences(h))
    assert "a has the largest area" in text and "interval excludes zero" in text
    assert "significant at N = 100–800" in text and "At N = 1,000 every question ties" in text


def test_equal_retrievers_are_not_told_apart():
    rng = np.random.default_rng(2)
    same = rng.uniform(0, 1, (30, len(BUDGETS)))
    noise = np.clip(same + rng.normal(0, 0.05, same.shape), 0, 1)
    h = area.headline(_ir({"a": same, "b": noise}))
    assert h.lead_lo < 0 < h.lead_hi and h.significant == []
    text = " ".join(area.sentences(h))
    assert "not told apart overall" in text and "At no single budget is the difference" in text
    assert "largest area" not in text and "follows with" not in text  # no ranking in words


def test_one_retriever_gets_its_area_alone():
    h = area.headline(_ir({"only": np.full((5, len(BUDGETS)), 0.5)}))
    assert h.runner_up is None and h.areas["area"].iloc[0] == pytest.approx(0.5)
    assert len(area.sentences(h)) == 1


def test_a_question_missing_a_budget_is_left_out_of_the_areas():
    ir = _saturating(6)
    ir = ir[~((ir["qid"] == "q0") & (ir["retriever"] == "b") & (ir["budget"] == 200))]
    assert "q0" not in area.question_areas(ir).index and len(area.question_areas(ir)) == 5


@pytest.mark.parametrize("chosen, text", [
    ([100, 200, 400], "100–400"), ([100, 400, 800], "100, 400–800"), ([], ""),
    ([1000], "1,000")])
def test_ranges(chosen, text):
    assert area.ranges(chosen, BUDGETS) == text
