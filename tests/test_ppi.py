"""Prediction-powered estimates of the share correct: coverage on synthetic data with a known
mean and a judge of known bias, cross-PPI when the predictor is fitted on the labels, the
messages instead of intervals with 0 or 1 labels, and the labels-needed helper."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.calibration import ppi as P
from ragdash.calibration.ppi_shares import share_table

MEAN = 0.4
"""The true share correct of the synthetic answers."""


def judged(correct: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A lenient judge: "judged 5" for 90 % of correct answers and 30 % of wrong ones, so it
    says 54 % when the truth is 40 %."""
    return np.where(correct, rng.random(correct.size) < 0.9,
                    rng.random(correct.size) < 0.3).astype(float)


def test_ppi_covers_a_known_mean_whatever_the_judges_bias():
    rng = np.random.default_rng(7)
    hits = {"ppi++": [], "ppi": [], "labels": [], "judge": []}
    widths = {"ppi++": [], "labels": []}
    for _ in range(400):
        y = (rng.random(80) < MEAN).astype(float)  # the labelled answers
        unlabelled = rng.random(1000) < MEAN
        yhat, yhat_u = judged(y.astype(bool), rng), judged(unlabelled, rng)
        for name, est in (("ppi++", P.ppi(y, yhat, yhat_u)),
                          ("ppi", P.ppi(y, yhat, yhat_u, lam=1)),
                          ("labels", P.labels_only(y)),
                          ("judge", P.judge_only(np.r_[yhat, yhat_u]))):
            lo, hi = est.ci
            hits[name].append(lo <= MEAN * 100 <= hi)
            if name in widths:
                widths[name].append(hi - lo)
    assert np.mean(hits["ppi++"]) >= 0.9 and np.mean(hits["ppi"]) >= 0.9
    assert np.mean(hits["labels"]) >= 0.9
    assert np.mean(hits["judge"]) <= 0.05  # the judge alone is confidently wrong
    assert np.mean(widths["ppi++"]) < 0.85 * np.mean(widths["labels"])


def retrieval_world(rng: np.random.Generator, n: int, labelled: int) -> pd.DataFrame:
    """One system's answers with a Score_IR feature that predicts correctness, no judge, and
    the labels of `labelled` random answers."""
    correct = rng.random(n) < MEAN
    ir = np.clip(np.where(correct, 0.7, 0.3) + rng.normal(0, 0.25, n), 0, 1)
    y = np.full(n, np.nan)
    shown = rng.choice(n, labelled, replace=False)
    y[shown] = correct[shown]
    return pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "system": "bm25", "y": y,
                         "judged5": np.nan, "ir@100": ir})


def test_cross_ppi_covers_when_the_retrieval_model_is_fitted_on_the_labels():
    rng = np.random.default_rng(3)
    hits, widths, alone = [], [], []
    for rep in range(120):
        table = share_table(retrieval_world(rng, 400, 60), seed=rep)["pooled"]
        est = table["ppi_retrieval"]
        assert est["method"].startswith("cross-PPI") and "5 folds" in est["method"]
        hits.append(est["ci"][0] <= MEAN * 100 <= est["ci"][1])
        widths.append(est["ci"][1] - est["ci"][0])
        alone.append(table["labels_only"]["ci"][1] - table["labels_only"]["ci"][0])
        assert table["judge_only"]["pct"] is None and "no judge" in table["judge_only"]["reason"]
    assert np.mean(hits) >= 0.9
    assert np.mean(widths) < np.mean(alone)  # retrieval alone narrows the interval


@pytest.mark.parametrize("n", [0, 1])
def test_zero_or_one_label_gives_a_message_not_an_interval(n):
    for est in (P.labels_only(np.ones(n)), P.ppi(np.ones(n), np.ones(n), np.ones(50)),
                P.cross_ppi(np.ones(n), np.ones(n), np.ones((50, 2)))):
        assert est.pct is None and est.ci is None
        assert "at least 2 labelled answers" in est.reason
        assert ("no answer is labelled" if n == 0 else "only 1 answer") in est.reason
        d = est.to_dict(100)
        assert d["ci"] is None and "labels_to_halve" not in d
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(40)], "system": "bm25",
                          "y": np.nan, "judged5": (rng.random(40) < 0.5).astype(float),
                          "p_retrieval": rng.random(40)})
    frame.loc[: n - 1, "y"] = 1.0
    pooled = share_table(frame)["pooled"]
    for key in ("labels_only", "ppi_judge", "ppi_retrieval"):
        assert pooled[key]["pct"] is None and "at least 2" in pooled[key]["reason"], key
    assert pooled["judge_only"]["pct"] == pytest.approx(frame["judged5"].mean() * 100, abs=1e-3)
    assert pooled["n_labelled"] == n and pooled["n_unlabelled"] == 40 - n


def test_the_tuned_lambda_read_back_is_the_one_ppi_py_used():
    rng = np.random.default_rng(1)
    y = (rng.random(60) < MEAN).astype(float)
    yhat, unl = judged(y.astype(bool), rng), judged(rng.random(500) < MEAN, rng)
    tuned = P.ppi(y, yhat, unl)
    assert 0 <= tuned.lam <= 1
    again = P.ppi(y, yhat, unl, lam=tuned.lam)
    assert again.ci == pytest.approx(tuned.ci) and again.pct == pytest.approx(tuned.pct)
    assert "PPI++" in tuned.method and "λ = " in again.method


def test_labels_to_halve_follows_the_ppi_variance():
    alone = P.labels_only(np.r_[np.ones(8), np.zeros(12)])
    assert P.labels_to_halve(alone, 10_000) == {"more": 60, "total": 80}  # 4 × the labels
    est = P.Estimate("x", 50.0, (40.0, 60.0), n=50, N=950, var_labelled=0.1,
                     var_unlabelled=0.05)
    got = P.labels_to_halve(est, 1000)
    total = got["total"]
    now = 0.1 / 50 + 0.05 / 950
    assert 0.1 / total + 0.05 / (1000 - total) <= now / 4
    assert 0.1 / (total - 1) + 0.05 / (1001 - total) > now / 4
    small = P.labels_to_halve(alone, 60)  # 80 labels would be needed, the run has 60 answers
    assert small["more"] is None and "60 answers" in small["reason"]


def test_an_interval_without_width_says_so():
    est = P.labels_only(np.ones(12))
    assert est.ci == (100.0, 100.0) and est.note == P.NO_WIDTH
    assert P.labels_only(np.r_[np.ones(3), np.zeros(3)]).note.startswith("under 10 labels")


def test_llm_only_answers_have_no_retrieval_estimate_but_count_in_the_pool():
    rng = np.random.default_rng(5)
    n = 200
    system = np.where(np.arange(n) % 2, "bm25", "llm_only")
    correct = rng.random(n) < MEAN
    y = np.where(rng.random(n) < 0.3, correct.astype(float), np.nan)
    p = np.where(system == "bm25", np.clip(correct * 0.5 + rng.random(n) * 0.5, 0, 1), np.nan)
    frame = pd.DataFrame({"qid": [f"q{i // 2}" for i in range(n)], "system": system, "y": y,
                          "judged5": judged(correct, rng), "p_retrieval": p})
    table = share_table(frame)
    assert table["llm_only"]["ppi_retrieval"]["pct"] is None
    assert "no retrieval" in table["llm_only"]["ppi_retrieval"]["reason"]
    assert table["bm25"]["ppi_retrieval"]["pct"] is not None
    pooled = table["pooled"]["ppi_retrieval"]
    assert pooled["n_labelled"] + pooled["n_unlabelled"] == n
    assert list(table) == ["llm_only", "bm25", "pooled"]  # first seen, then pooled
