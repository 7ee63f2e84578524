"""Does retrieval predict answer quality here? AUC, CIs, reliability bins, verdict, shares."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from ragdash.calibration import calibrate
from ragdash.calibration.predictive import (
    auc,
    degenerate,
    predictiveness,
    reliability,
    share_estimates,
    strength,
)


def _pairs(ir, judge, per_q=1):
    n = len(ir)
    return pd.DataFrame({"qid": [f"q{i // per_q}" for i in range(n)],
                         "retriever": [f"r{i % per_q}" for i in range(n)],
                         "ir": np.asarray(ir, float), "judge": np.asarray(judge, int)})


def test_auc_known_values():
    # positives 0.9 and 0.4, negatives 0.5 and 0.1: 3 of 4 pairs ordered right
    assert auc(np.array([0.9, 0.4, 0.5, 0.1]), np.array([1, 1, 0, 0], bool)) == 0.75
    assert auc(np.array([0.5, 0.5]), np.array([1, 0], bool)) == 0.5  # a tie counts half
    assert auc(np.array([0.1, 0.2]), np.array([1, 1], bool)) is None
    rng = np.random.default_rng(1)
    x, y = rng.random(300), rng.random(300) < 0.4
    assert auc(x, y) == pytest.approx(roc_auc_score(y, x))


def test_perfect_separation_is_strong_and_noise_is_weak():
    rng = np.random.default_rng(0)
    ir = np.r_[rng.uniform(0, 0.4, 100), rng.uniform(0.6, 1, 100)]
    ev = predictiveness(_pairs(ir, [4] * 100 + [5] * 100))
    assert ev["correct"]["auc"] == 1.0 and ev["correct"]["ci"] == [1.0, 1.0]
    assert ev["strength"] == "strong" and ev["verdict"].startswith("Strong: AUC 1.00")
    noise = predictiveness(_pairs(rng.random(200), rng.choice([4, 5], 200)))
    lo, hi = noise["correct"]["ci"]
    assert lo < 0.5 < hi and noise["strength"] == "weak"
    assert noise["verdict"].startswith("Weak:") and "barely separates" in noise["verdict"]
    json.dumps(ev)  # JSON-native, stored in calibration.json


def test_refusal_side_uses_low_scores():
    ir = [0.0, 0.05, 0.1, 0.8, 0.9, 1.0]
    ev = predictiveness(_pairs(ir, [1, 1, 1, 5, 5, 4]), n_boot=0)
    assert ev["refusal"]["auc"] == 1.0 and ev["refusal"]["n_positive"] == 3
    assert ev["refusal"]["ci"] is None  # no bootstrap asked
    none = predictiveness(_pairs(ir, [4, 4, 5, 5, 5, 4]), n_boot=0)
    assert none["refusal"]["auc"] is None and "no answer" in none["refusal_verdict"]


def test_reliability_bins_count_every_answer_once():
    ir = np.array([0.0, 0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.8, 0.99, 1.0, 1.0])
    pos = np.array([0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0], bool)
    rows = reliability(ir, pos)
    assert [r["bin"] for r in rows] == ["0", "0–0.25", "0.25–0.5", "0.5–0.75", "0.75–<1", "1"]
    assert [r["n"] for r in rows] == [2, 2, 2, 1, 2, 2]
    assert sum(r["n"] for r in rows) == len(ir)
    assert rows[0]["share"] == 0.0 and rows[3]["share"] == 1.0 and rows[5]["share"] == 0.5
    lo, hi = rows[5]["ci"]
    assert 0 < lo < 0.5 < hi < 1


def test_strength_needs_the_interval_above_chance():
    assert strength(0.8, [0.7, 0.9]) == "strong"
    assert strength(0.8, [0.45, 0.95]) == "weak"
    assert strength(0.65, [0.55, 0.75]) == "moderate"
    assert strength(None, None) == "n/a"


def _run_tables(seed=0, n_q=60):
    """Judge = 5 far more likely when Score_IR is high: a known, strong relation."""
    rng = np.random.default_rng(seed)
    rows, judg = [], []
    for q in range(n_q):
        for r in ("bm25", "sim"):
            s = float(rng.choice([0.0, 0.3, 0.7, 1.0]))
            for b in (100, 500):
                rows.append((f"q{q}", r, b, s))
            judge = 5 if rng.random() < 0.1 + 0.8 * s else int(rng.choice([1, 4]))
            judg.append((f"q{q}", r, 500, judge))
    ir = pd.DataFrame(rows, columns=["qid", "retriever", "budget", "score"])
    j = pd.DataFrame(judg, columns=["qid", "system", "budget", "score"])
    return ir, j


def test_calibrate_stores_evidence_and_shares():
    ir, j = _run_tables()
    cal = calibrate(ir, j, budget=500, n_boot=100)
    d = cal.to_dict()
    ev = d["evidence"]
    assert ev["n"] == 120 and ev["questions"] == 60
    assert ev["correct"]["auc"] > 0.7 and ev["correct"]["ci"][0] > 0.5
    assert ev["strength"] in ("strong", "moderate")
    shares = d["shares"]
    assert shares["actual"]["pct"] == pytest.approx((j["score"] == 5).mean() * 100)
    assert set(shares["estimates"]) == {"h/k rule", "logistic estimator"}
    for v in (shares["actual"], *shares["estimates"].values()):
        assert v["ci"][0] <= v["pct"] <= v["ci"][1]
    assert json.loads(json.dumps(d))["evidence"] == ev
    assert type(cal).from_dict(d).evidence == ev
    assert degenerate(cal) is None


def test_degenerate_fits_give_no_estimate():
    ir, j = _run_tables()
    cal = replace(calibrate(ir, j, budget=500, n_boot=0), evidence=None)
    assert "end of its range" in degenerate(replace(cal, k=1.0))
    assert degenerate(replace(cal, k=0.0)) is not None
    assert degenerate(replace(cal, k=0.5)) is None
    flat = replace(cal, k=0.5, evidence={
        "correct": {"n_positive": 0, "n_negative": 9},
        "verdict": "Not measurable: no answer was judged correct"})
    assert degenerate(flat).startswith("Not measurable")


def test_share_estimates_logistic_is_out_of_fold():
    ir, j = _run_tables(seed=3)
    from ragdash.calibration import pairs

    df, _ = pairs(ir, j, 500)
    out = share_estimates(df, ir, j, h=0.1, k=0.5, budget=500)
    rule = (df["ir"] > 0.5).mean() * 100
    assert out["estimates"]["h/k rule"]["pct"] == pytest.approx(rule)
    assert abs(out["estimates"]["logistic estimator"]["pct"] - out["actual"]["pct"]) < 10


def test_share_intervals_hold_the_share_and_keep_a_width_when_every_answer_is_judged_5():
    from ragdash.calibration import pairs
    from ragdash.calibration.survey import beta_interval

    ir, j = _run_tables(seed=3, n_q=20)
    df, _ = pairs(ir, j, 500)
    out = share_estimates(df, ir, j, h=0.1, k=0.5, budget=500)
    for s in [out["actual"], *out["estimates"].values()]:
        assert s["ci"][0] <= s["pct"] <= s["ci"][1] and s["ci"][1] - s["ci"][0] > 1
    perfect = j.assign(score=5)
    df, _ = pairs(ir, perfect, 500)
    actual = share_estimates(df, ir, perfect, h=0.1, k=0.5, budget=500)["actual"]
    assert actual["pct"] == 100 and actual["ci"][1] == 100
    # 20 questions all at 100 %: about the exact bound for 20 of 20, not [100, 100]
    assert actual["ci"][0] == pytest.approx(100 * beta_interval(1.0, 20, 0.95)[0], abs=2)


def test_abstention_by_evidence_bands():
    from ragdash.calibration.predictive import abstention_by_evidence
    from ragdash.llm.refusal import ABSTAIN_SENTENCE, RefusalRule

    ir = pd.DataFrame({"qid": ["a", "b", "c", "d"], "retriever": "bm25", "budget": 500,
                       "score": [1.0, 0.95, 0.5, 0.1]})
    answers = pd.DataFrame({
        "qid": ["a", "b", "c", "d", "d"], "system": ["bm25"] * 4 + ["llm_only"],
        "budget": pd.array([500, 500, 500, 500, None], dtype="Int64"),
        "answer": ["Paris.", ABSTAIN_SENTENCE, "Lyon.", ABSTAIN_SENTENCE, ABSTAIN_SENTENCE]})
    t = abstention_by_evidence(answers, ir, 500, lambda a: RefusalRule().match(a) is not None)
    assert t["answers"].tolist() == [2, 1, 1]  # LLM-only answers are left out
    assert t["abstained"].tolist() == [1, 0, 1]
    assert t["share"].tolist() == [0.5, 0.0, 1.0]


def test_every_score_ir_alike_is_not_measurable_not_weak():
    """Issue 49: with every Score_IR 1.0 nothing is ranked, so there is no AUC (never "Weak:
    AUC 0.50 [0.50, 0.50]"), and both sides say why; the h/k rule gives no estimate at any k."""
    from ragdash.calibration.predictive import no_estimate_at

    judge = [5, 3, 1, 5, 2, 5, 1, 4] * 5
    ev = predictiveness(_pairs(np.ones(len(judge)), judge, per_q=2), n_boot=50)
    assert ev["correct"]["auc"] is None and ev["strength"] == "n/a"
    assert ev["verdict"] == ("Not measurable: every answer has the same Score_IR (1.00), so "
                             "retrieval cannot separate correct from wrong answers here.")
    assert "not measurable, every answer has the same Score_IR (1.00)" in ev["refusal_verdict"]
    assert "[0.50, 0.50]" not in json.dumps(ev)
    ir, j = np.ones(len(judge)), np.asarray(judge)
    assert no_estimate_at(ir, j, 0.5).startswith("k = 0.500 puts every judged answer above it")
    assert no_estimate_at(ir, j, 0.0).startswith("k = 0.000 sits at the end of its range")
    assert no_estimate_at(np.linspace(0, 1, len(judge)), j, 0.5) is None
    assert no_estimate_at(np.linspace(0, 1, 4), np.array([3, 3, 1, 2]), 0.5).startswith(
        "Not measurable: no answer was judged correct (5)")
