"""The share correct from a labelled sample (`ragdash.calibration.survey`) and the draws that
give it (`ragdash.labels.sampling`): unbiased by enumeration, exact when every answer is
labelled, never a zero-width or per-system interval on too few labels, bounds for "cannot
tell", clustered by question for new questions, and a seed that draws the same sample in any
process."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ragdash.calibration import survey
from ragdash.labels.sampling import ordering


def population() -> tuple[pd.DataFrame, np.ndarray]:
    """12 answers: 2 systems × judged 5 or not, 3 answers each; labels are fractions (several
    labellers) so no floor applies."""
    frame = pd.DataFrame({"qid": [f"q{i % 6}" for i in range(12)],
                          "system": ["a"] * 6 + ["b"] * 6,
                          "judged5": [1, 1, 1, 0, 0, 0] * 2})
    y = np.array([1, 0.5, 1, 0, 0.5, 0.25, 1, 1, 0.5, 0, 0, 0.75])
    return frame, y


def test_unbiased_with_an_unbiased_variance_by_enumerating_every_sample():
    frame, y = population()
    groups = [list(range(s, s + 3)) for s in (0, 3, 6, 9)]
    est, var = [], []
    for picks in itertools.product(*[list(itertools.combinations(g, 2)) for g in groups]):
        shown = np.full(12, np.nan)
        at = [i for p in picks for i in p]
        shown[at] = y[at]
        f = survey.fit(frame, shown, floor=False)
        est.append(f.estimate)
        var.append(f.var)
    assert np.mean(est) == pytest.approx(y.mean(), abs=1e-12)
    assert np.mean(var) == pytest.approx(np.var(est), rel=1e-9)  # E[v̂] = Var(p̂), FPC included


def test_every_answer_labelled_gives_the_share_itself():
    frame, y = population()
    got = survey.share(frame, y, min_labels=2)
    assert got.estimate == pytest.approx(y.mean()) and got.ci == (got.estimate, got.estimate)
    wide = survey.share(frame, y, "new questions", min_labels=2)  # new questions: still wide
    assert wide.ci[1] - wide.ci[0] > 0.1


def system_frame(n: int = 60) -> pd.DataFrame:
    return pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "system": "bm25",
                         "judged5": [1, 0] * (n // 2)})


@pytest.mark.parametrize("k", [0, 1, 2, 5, 20])
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_a_system_interval_only_from_20_labels_and_never_zero_width(k, value):
    frame = system_frame()
    y = np.full(60, np.nan)
    y[:k] = value
    got = survey.share(frame, y)
    assert got.labels == k
    if k < survey.MIN_SYSTEM_LABELS:
        assert got.ci is None and "too few labels for an interval" in got.reason \
            or (k == 0 and got.reason == "no label yet")
    else:
        lo, hi = got.ci
        assert hi - lo > 0.05 and lo <= got.estimate <= hi
        assert (lo == 0.0) if value == 0 else (hi == 1.0)


def test_cannot_tell_bounds_the_estimate_and_widens_the_interval():
    frame = system_frame()
    y = np.full(60, np.nan)
    y[:30] = [1, 0, 1] * 10
    unsure = np.zeros(60, bool)
    unsure[30:36] = True  # six sampled answers only "cannot tell"
    plain = survey.share(frame, y)
    got = survey.share(frame, y, cannot_tell=unsure)
    lo, hi = got.bounds
    assert lo < plain.estimate < hi
    assert got.ci[0] < plain.ci[0] and got.ci[1] > plain.ci[1]


def test_new_questions_count_a_question_once_not_its_answers():
    """Six systems answering alike: the clustered interval is wider than the answers' one."""
    rng = np.random.default_rng(1)
    truth = rng.random(40) < 0.5
    frame = pd.DataFrame({"qid": np.repeat([f"q{i}" for i in range(40)], 6),
                          "system": np.tile(list("abcdef"), 40), "judged5": 0})
    y = np.repeat(truth, 6).astype(float)
    y[rng.random(240) < 0.5] = np.nan
    these, new = survey.share(frame, y, min_labels=10), \
        survey.share(frame, y, "new questions", min_labels=10)
    assert new.se > 1.8 * these.se


def test_the_planner_reaches_five_points_only_with_enough_labels():
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(1000)], "system": "s",
                          "judged5": [1, 0] * 500})
    y = np.full(1000, np.nan)
    y[:40] = np.r_[np.ones(18), np.zeros(2), np.ones(4), np.zeros(16)]
    need = survey.labels_for(survey.fit(frame, y))
    assert 150 < need < 400


def test_the_judge_rule_keeps_every_prefix_proportional():
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(300)],
                          "system": np.repeat(["a", "b", "c"], 100),
                          "judged5": np.r_[np.ones(80), np.zeros(20), np.ones(50),
                                           np.zeros(50), np.ones(10), np.zeros(90)]})
    order = ordering(frame, "judge", seed=3)
    strata = order["system"] + order["judged5"].astype(int).astype(str)
    sizes = (frame["system"] + frame["judged5"].astype(int).astype(str)).value_counts()
    for n in (10, 25, 60, 150):
        got = strata.iloc[:n].value_counts().reindex(sizes.index, fill_value=0)
        assert (abs(got - n * sizes / 300) <= 1.0 + 1e-9).all(), n
    assert sorted(order["qid"]) == sorted(frame["qid"])  # every answer once


def test_a_seed_draws_the_same_sample_in_another_process():
    code = ("import pandas as pd; from ragdash.labels.sampling import ordering; "
            "f = pd.DataFrame({'qid': [str(i) for i in range(50)], 'system': ['s', 't'] * 25, "
            "'judged5': [1, 0, 0] * 16 + [1, 1]}); "
            "print(','.join(ordering(f, '{rule}', 7)['qid']))")
    for rule in ("judge", "uniform", "stratified"):
        runs = {subprocess.run([sys.executable, "-c", code.replace("{rule}", rule)],
                               capture_output=True, text=True, check=True,
                               env={"PYTHONHASHSEED": seed}).stdout
                for seed in ("1", "2")}
        assert len(runs) == 1, rule


def test_the_neyman_rule_puts_labels_where_the_reference_varies():
    """Strata the reference finds mixed get more labels than their size's share; without a
    reference, Neyman is proportional."""
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(200)], "system": "s",
                          "judged5": np.r_[np.ones(100), np.zeros(100)],
                          "reference": np.r_[np.ones(100), np.tile([0.0, 1.0], 50)]})
    order = ordering(frame, "neyman", seed=0)
    first = order.iloc[:60]["judged5"].value_counts()
    # spreads 0.15 (floor) and 0.5: about 60 x 0.5 / 0.65 = 46 from the mixed stratum
    assert 43 <= first[0.0] <= 49
    plain = ordering(frame.drop(columns="reference"), "neyman", seed=0)
    assert abs(plain.iloc[:60]["judged5"].sum() - 30) <= 1


def test_a_system_is_planned_for_ten_points_the_pool_for_five():
    frame = system_frame()
    y = np.full(60, np.nan)
    y[:12] = [1, 0, 1, 1] * 3
    one = survey.share(frame, y)
    assert one.target == survey.SYSTEM_TARGET_HALF and 12 < one.to_target < 60
    pooled = survey.share(frame, y, min_labels=10, target=survey.TARGET_HALF)
    assert pooled.target == 5.0 and pooled.to_target > one.to_target
