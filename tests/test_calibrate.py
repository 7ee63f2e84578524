"""Calibration: exact threshold sweep, the paper's DE fit, bootstrap, estimates vs actual, the
probabilistic estimator and calibration.json."""

import json

import numpy as np
import pandas as pd
import pytest

from ragdash.calibration import (
    Calibration,
    ProbabilisticEstimator,
    agreement_at,
    bootstrap_ci,
    calibrate,
    calls_avoided,
    compare,
    confusion,
    cross_validate,
    estimate,
    fit_threshold,
    objective_curve,
    pairs,
    share_errors,
)

RETRIEVERS = {"bm25": (2.2, 1.3), "sim": (1.7, 1.6), "mmr": (1.4, 1.7), "mlq": (1.0, 1.9),
              "reo": (0.6, 2.0)}


def confounded_run(n_q: int = 1500, seed: int = 0, knows_rate: float = 0.3):
    """ir_scores + judgments built like the paper's confound: a latent "the LLM knows it"
    makes answers correct whatever the retrieval, and shows in the LLM-only judgment."""
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(n_q)])
    knows = rng.random(n_q) < knows_rate
    llm = np.where(knows, np.where(rng.random(n_q) < 0.9, 5, 4),
                   rng.choice([1, 2, 3, 4], size=n_q, p=[0.1, 0.15, 0.15, 0.6]))
    ir, jd = [], [pd.DataFrame({"qid": qids, "system": "llm_only", "score": llm})]
    for name, (a, b) in RETRIEVERS.items():
        x = rng.beta(a, b, n_q)
        x500 = x * rng.uniform(0.6, 1, n_q)
        for budget, s in ((250, x500 * rng.uniform(0.5, 1, n_q)), (500, x500), (1000, x)):
            ir.append(pd.DataFrame({"qid": qids, "retriever": name, "budget": budget,
                                    "score": s}))
        p5 = 1 / (1 + np.exp(-14 * (x - 0.6)))
        p1 = 1 / (1 + np.exp(25 * (x - 0.12)))
        u = rng.random(n_q)
        j = np.where(u < p5, 5, np.where(u < p5 + (1 - p5) * p1, 1, rng.choice([2, 3, 4], n_q)))
        j = np.where(knows & (rng.random(n_q) < 0.85), 5, j)
        jd.append(pd.DataFrame({"qid": qids, "system": name, "score": j}))
    return pd.concat(ir, ignore_index=True), pd.concat(jd, ignore_index=True)


def brute_force(x, y, rule):
    """Max agreement and the lowest maximal run of candidate thresholds, by direct counting."""
    cands = sorted(set(x) | {0.0, 1.0})
    cands = sorted(set(cands) | {(a + b) / 2 for a, b in zip(cands[:-1], cands[1:], strict=True)})

    def agree(t):
        hits = [(xi > t) if rule == ">" else (xi < t) for xi in x]
        return sum(a == bool(b) for a, b in zip(hits, y, strict=True))

    vals = [agree(t) for t in cands]
    best = max(vals)
    first = vals.index(best)
    last = first
    while last + 1 < len(vals) and vals[last + 1] == best:
        last += 1
    return best / len(x), cands[first], cands[last]


# --- exact sweep ------------------------------------------------------------------------------

def test_sweep_finds_separating_interval_and_midpoint():
    x = [0.1, 0.2, 0.3, 0.4, 0.5]
    k = fit_threshold(x, [0, 0, 1, 1, 1], ">")
    assert (k.lo, k.hi, k.accuracy, k.n, k.n_positive) == (0.2, 0.3, 1.0, 5, 3)
    assert k.threshold == pytest.approx(0.25)
    h = fit_threshold(x, [1, 1, 0, 0, 0], "<")
    assert (h.lo, h.hi, h.accuracy) == (0.2, 0.3, 1.0)
    # strict inequalities: t = lo is optimal for k (x > 0.2), t = hi is optimal for h (x < 0.3)
    assert agreement_at(x, [0, 0, 1, 1, 1], [0.2, 0.3], ">").tolist() == [1.0, 0.8]
    assert agreement_at(x, [1, 1, 0, 0, 0], [0.2, 0.3], "<").tolist() == [0.8, 1.0]


def test_sweep_exact_on_random_separable_data():
    rng = np.random.default_rng(1)
    x = rng.random(5000)
    k = fit_threshold(x, x > 0.6, ">")
    assert k.lo == x[x <= 0.6].max() and k.hi == x[x > 0.6].min() and k.accuracy == 1.0
    assert k.threshold == (k.lo + k.hi) / 2
    h = fit_threshold(x, x < 0.1, "<")
    assert h.lo == x[x < 0.1].max() and h.hi == x[x >= 0.1].min() and h.accuracy == 1.0


@pytest.mark.parametrize("rule", [">", "<"])
@pytest.mark.parametrize("seed", range(6))
def test_sweep_matches_brute_force_with_ties(rule, seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.random(60), 1)  # many repeated scores
    y = rng.random(60) < x if rule == ">" else rng.random(60) > x
    f = fit_threshold(x, y, rule)
    acc, first, last = brute_force(x.tolist(), y.tolist(), rule)
    assert f.accuracy == pytest.approx(acc)
    assert f.lo <= first <= last <= f.hi
    assert agreement_at(x, y, [f.threshold], rule)[0] == pytest.approx(acc)


def test_ties_disjoint_plateaus_and_merged_plateaus():
    x, y = [0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]
    low = fit_threshold(x, y, ">")
    assert (low.lo, low.hi, low.n_plateaus, low.accuracy) == (0.1, 0.2, 2, 0.75)
    high = fit_threshold(x, y, ">", tie="highest")
    assert (high.lo, high.hi, high.n_plateaus) == (0.3, 0.4, 2)
    # a score with one positive and one negative does not split the plateau
    merged = fit_threshold([0.1, 0.2, 0.2, 0.3], [0, 1, 0, 1], ">")
    assert (merged.lo, merged.hi, merged.n_plateaus) == (0.1, 0.3, 1)
    assert merged.threshold == pytest.approx(0.2)


def test_all_positive_and_all_negative():
    x = [0.1, 0.3, 0.5]
    k_all = fit_threshold(x, [1, 1, 1], ">")
    assert (k_all.lo, k_all.hi, k_all.accuracy) == (0.0, 0.1, 1.0)
    k_none = fit_threshold(x, [0, 0, 0], ">")
    assert (k_none.lo, k_none.hi, k_none.threshold, k_none.accuracy) == (0.5, 1.0, 0.75, 1.0)
    h_all = fit_threshold(x, [1, 1, 1], "<")
    assert (h_all.lo, h_all.hi, h_all.accuracy) == (0.5, 1.0, 1.0)
    h_none = fit_threshold(x, [0, 0, 0], "<")
    assert (h_none.lo, h_none.hi, h_none.accuracy) == (0.0, 0.1, 1.0)
    # a score of exactly 0 (1) cannot be above k (below h) for any k (h) in [0, 1]
    assert fit_threshold([0.0, 0.5], [1, 1], ">").accuracy == 0.5
    assert fit_threshold([0.5, 1.0], [1, 1], "<").accuracy == 0.5


def test_empty_and_bad_input_raise_clear_errors():
    with pytest.raises(ValueError, match="empty"):
        fit_threshold([], [], ">")
    with pytest.raises(ValueError, match="NaN"):
        fit_threshold([0.1, np.nan], [0, 1], ">")
    with pytest.raises(ValueError, match="rule"):
        fit_threshold([0.1], [1], ">=")
    ir, jd = confounded_run(20)
    with pytest.raises(ValueError, match=r"budget 700.*\[250, 500, 1000\]"):
        pairs(ir, jd, budget=700)
    with pytest.raises(ValueError, match="no .qid, retriever. pair"):
        calibrate(ir, jd.assign(qid="other-" + jd["qid"]), n_boot=0)
    with pytest.raises(ValueError, match="lacks column"):
        pairs(ir.drop(columns="score"), jd)
    with pytest.raises(ValueError, match="score must be 1-5.*q3"):
        pairs(ir, jd.assign(score=jd["score"].where(jd["qid"] != "q3", 6)))


def test_objective_curve_exact_steps():
    curve = objective_curve([0.1, 0.2, 0.3], [0, 1, 1], ">")
    got = dict(zip(curve["threshold"].round(6), curve["agreement"].round(6), strict=True))
    assert got == {0.0: 0.666667, 0.05: 0.666667, 0.1: 1.0, 0.15: 1.0, 0.2: 0.666667,
                   0.25: 0.666667, 0.3: 0.333333, 0.65: 0.333333, 1.0: 0.333333}
    grid = objective_curve([0.1, 0.2, 0.3], [1, 0, 0], "<", grid=[0.1, 0.15, 0.9])
    assert grid["agreement"].round(6).tolist() == [0.666667, 1.0, 0.333333]


def test_de_agrees_with_sweep_within_rounding():
    rng = np.random.default_rng(3)
    x = rng.random(3000)
    y = (x > 0.62) ^ (rng.random(3000) < 0.05)
    sweep = fit_threshold(x, y, ">")
    de = fit_threshold(x, y, ">", method="de", seed=7)
    assert de.method == "de" and de.threshold == round(de.threshold, 2)
    gap = max(sweep.lo - de.threshold, de.threshold - sweep.hi, 0.0)
    assert de.accuracy == sweep.accuracy or gap <= 0.01
    assert fit_threshold(x, y, ">", method="de", seed=7) == de  # seeded: repeatable


# --- bootstrap --------------------------------------------------------------------------------

def _noisy_questions(n_q=1500, seed=2):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q), 5)
    x = rng.random(q.size)
    y = (x > 0.6) ^ (rng.random(q.size) < 0.1)
    return x, y, q


def test_bootstrap_ci_contains_truth_and_is_seeded():
    x, y, q = _noisy_questions()
    ci = bootstrap_ci(x, y, q, ">", n_boot=200, seed=0)
    assert ci["lo"] < 0.6 < ci["hi"] and ci["hi"] - ci["lo"] < 0.1
    again = bootstrap_ci(x, y, q, ">", n_boot=200, seed=0)
    assert np.array_equal(ci["samples"], again["samples"])
    assert not np.array_equal(ci["samples"], bootstrap_ci(x, y, q, ">", seed=1)["samples"])
    h = bootstrap_ci(x, ~y, q, "<", n_boot=100, seed=0)
    assert h["lo"] < 0.6 < h["hi"]


def test_bootstrap_resamples_questions_not_rows():
    x, y, q = _noisy_questions(300)
    one = bootstrap_ci(x, y, q, ">", n_boot=30, seed=5)["samples"]
    # each question repeated 3 times: resampling whole questions draws the same questions
    rep = np.repeat(np.arange(x.size), 3)
    three = bootstrap_ci(x[rep], y[rep], q[rep], ">", n_boot=30, seed=5)["samples"]
    assert np.array_equal(one, three)


# --- estimates against actual -------------------------------------------------------------------

def paper_run():
    """Score lists reproducing the paper's Figure 3.2 shares at h = 0.105, k = 0.67 (7,404
    questions; scores exactly at h and k fall in between) with the raw judge counts of §9.3."""
    n = 7404
    above = {"BM25": 2805, "SIM": 1739, "MMR": 1188, "MLQ": 808, "REO": 417}
    under = {"BM25": 415, "SIM": 897, "MMR": 1065, "MLQ": 1674, "REO": 2224}
    counts = {"BM25": [574, 401, 972, 2315, 3142], "SIM": [648, 393, 1018, 2996, 2349],
              "MMR": [770, 484, 895, 3113, 2142], "MLQ": [1340, 444, 854, 3010, 1756],
              "REO": [1579, 385, 503, 3629, 1308]}
    ir, jd = [], []
    for r in above:
        mid = n - above[r] - under[r]
        s = [0.9] * (above[r] - 1) + [0.6701] + [0.05] * (under[r] - 1) + [0.1049] \
            + [0.105, 0.67] + [0.4] * (mid - 2)
        ir.append(pd.DataFrame({"qid": range(n), "retriever": r, "budget": 1000, "score": s}))
        jd.append(pd.DataFrame({"qid": range(n), "system": r,
                                "score": np.repeat([1, 2, 3, 4, 5], counts[r])}))
    return pd.concat(ir), pd.concat(jd)


def test_paper_published_shares_and_errors():
    ir, jd = paper_run()
    est = estimate(ir, 0.105, 0.67).set_index("retriever").round(2)
    assert est.loc["BM25", ["est_5", "est_1", "est_2_4"]].tolist() == [37.88, 5.61, 56.51]
    assert est.loc["REO", ["est_5", "est_1", "est_2_4"]].tolist() == [5.63, 30.04, 64.33]
    assert est["est_5"].tolist() == [37.88, 23.49, 16.05, 10.91, 5.63]
    df, _ = pairs(ir, jd)
    table = compare(df, 0.105, 0.67).set_index("retriever").round(2)
    assert table["act_5"].tolist() == [42.44, 31.73, 28.93, 23.72, 17.67]
    assert table["act_1"].tolist() == [7.75, 8.75, 10.40, 18.10, 21.33]
    # the paper: the rule underestimates correctness by 4.6 to 12.9 points (§3.3)
    assert table["err_5"].max() == pytest.approx(-4.56, abs=0.01)
    assert table["err_5"].min() == pytest.approx(-12.88, abs=0.01)
    assert table.loc["BM25", "mae"] == pytest.approx((4.56 + 2.14 + 6.70) / 3, abs=0.01)
    summary = share_errors(compare(df, 0.105, 0.67))
    assert summary["rank_agreement"] == pytest.approx(1.0)
    assert set(summary["individual_scores"]) == set(table.index)
    m = confusion(df, 0.105, 0.67)
    assert m.to_numpy().sum() == len(df) == 5 * 7404
    assert m.sum(axis=1).tolist() == [6275, 5 * 7404 - 6275 - 6957, 6957]  # estimated
    assert m.sum(axis=0).tolist() == [4911, 5 * 7404 - 4911 - 10697, 10697]  # actual


def test_confusion_matrix_on_hand_example():
    df = pd.DataFrame({"qid": list("abcdef"), "retriever": "r",
                       "ir": [0.05, 0.05, 0.5, 0.5, 0.9, 0.9], "judge": [1, 5, 3, 1, 5, 4]})
    m = confusion(df, 0.1, 0.7).to_numpy()
    assert m.tolist() == [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    assert m.sum() == len(df)


def test_calls_avoided_and_price():
    assert calls_avoided(7404, 5) == {"generation_calls": 44424, "judge_calls": 7404,
                                      "total_calls": 51828}
    assert calls_avoided(10, 2, price=0.5)["cost"] == 0.5 * (30 + 10)
    assert calls_avoided(10, 2, price={"generation": 0.01, "judge": 0.1})["cost"] \
        == pytest.approx(0.3 + 1.0)
    assert calls_avoided(10, 2, price=lambda kind, n: n * (2 if kind == "judge" else 1))[
        "cost"] == 30 + 20


# --- calibrate() and calibration.json ------------------------------------------------------------

def test_null_judgments_excluded_and_counted():
    ir, jd = confounded_run(300)
    jd = jd.astype({"score": "float"})
    errors = (jd["system"] == "sim") & (jd["qid"].isin([f"q{i}" for i in range(0, 300, 7)]))
    jd.loc[errors, "score"] = np.nan
    cal = calibrate(ir, jd, n_boot=0)
    assert cal.n_excluded == int(errors.sum()) == 43 and cal.n == 5 * 300 - 43
    clean = calibrate(ir, jd[~errors], n_boot=0)
    assert clean.n_excluded == 0 and clean.n_missing == 43
    assert (cal.h, cal.k) == (clean.h, clean.k)
    pd.testing.assert_frame_equal(cal.per_retriever, clean.per_retriever)
    assert cal.per_retriever.set_index("retriever").loc["sim", "n"] == 300 - 43


def test_h_ge_k_is_flagged():
    rng = np.random.default_rng(0)
    x = rng.random(400)
    judge = np.where(x > 0.5, 1, 5)  # inverted: judge 1 at high scores, 5 at low ones
    ir = pd.DataFrame({"qid": range(400), "retriever": "r", "budget": 1000, "score": x})
    jd = pd.DataFrame({"qid": range(400), "system": "r", "score": judge})
    cal = calibrate(ir, jd, n_boot=0)
    assert cal.h >= cal.k and cal.h_ge_k
    assert "pooled: h =" in cal.message and ">= k" in cal.message
    ok = calibrate(*confounded_run(300), n_boot=0)
    assert not ok.h_ge_k and ok.message == "" and ok.h < ok.k


def _walk_native(v):
    if isinstance(v, dict):
        assert all(isinstance(k, str) for k in v)
        for x in v.values():
            _walk_native(x)
    elif isinstance(v, list):
        for x in v:
            _walk_native(x)
    else:
        assert v is None or type(v) in (str, int, float, bool), (v, type(v))


def test_calibrate_per_retriever_and_json_round_trip():
    ir, jd = confounded_run(400)
    cal = calibrate(ir, jd, per_retriever=True, n_boot=50, seed=3)
    assert set(cal.fits) == {"pooled", *RETRIEVERS}
    for r in RETRIEVERS:
        h, k = cal.thresholds(r)
        row = cal.per_retriever.set_index("retriever").loc[r]
        assert (row["h"], row["k"]) == (h, k)
        assert sum(map(sum, cal.confusion[r])) == row["n"]
    k = cal.fits["pooled"]["k"]
    assert k.ci is not None and k.ci[0] <= k.threshold <= k.ci[1] and k.lo <= k.threshold
    d = cal.to_dict()
    _walk_native(d)
    text = json.dumps(d, allow_nan=False)
    back = Calibration.from_dict(json.loads(text))
    assert back.to_dict() == d
    assert back.fits["pooled"]["k"] == k
    assert {"h", "k", "method", "budget", "scope", "fits", "per_retriever", "errors",
            "h_ge_k", "n", "n_excluded", "confusion"} <= set(d)
    assert calibrate(ir, jd, n_boot=0).to_dict()["fits"]["pooled"]["h"]["ci"] is None


def test_calibrate_de_method_and_other_budget():
    ir, jd = confounded_run(300)
    cal = calibrate(ir, jd, method="de", budget=500, n_boot=0)
    assert cal.method == "de" and cal.budget == 500
    assert cal.k == round(cal.k, 2) and cal.h == round(cal.h, 2)


# --- beyond the paper -------------------------------------------------------------------------

def test_probabilistic_estimator_beats_hk_rule_on_confounded_data():
    ir, jd = confounded_run(1500)
    result, verdict = cross_validate(ir, jd, n_folds=3, seed=0)
    assert set(result["scheme"]) == {"held-out questions", "held-out retriever"}
    mean = result.groupby(["scheme", "method"])["mae"].mean()
    for scheme in ("held-out questions", "held-out retriever"):
        hk = mean[(scheme, "h/k rule")]
        best = mean[(scheme, "logistic (IR + LLM-only)")]
        assert best < hk - 3.0, (scheme, best, hk)
        assert mean[(scheme, "logistic (IR)")] < hk
    assert "logistic (IR + LLM-only) is best" in verdict
    # the h/k rule underestimates "correct" like in the paper
    hk_rows = result[result["method"] == "h/k rule"]
    assert hk_rows["err_5"].mean() < -3.0


def test_probabilistic_estimator_estimate():
    ir, jd = confounded_run(600)
    est = ProbabilisticEstimator().fit(ir, jd)
    shares = est.estimate(ir, jd)
    assert list(shares["retriever"]) == list(RETRIEVERS)
    assert np.allclose(shares[["est_1", "est_2_4", "est_5"]].sum(axis=1), 100.0)
    # fitted with an intercept: in-sample mean probabilities match the pooled actual shares
    actual = pd.Series(np.select([jd["score"] == 1, jd["score"] == 5], [0, 2], 1)[
        jd["system"] != "llm_only"]).value_counts(normalize=True).sort_index() * 100
    pooled = shares[["est_1", "est_2_4", "est_5"]].mean().to_numpy()
    assert np.allclose(pooled, actual.to_numpy(), atol=0.5)
    ir_only = ProbabilisticEstimator(use_llm_only=False, budgets=[1000]).fit(ir, jd)
    assert ir_only.columns_ == ["ir@1000"]
    assert len(ir_only.predict_proba(ir)) == 5 * 600
