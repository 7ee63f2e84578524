"""The threshold panel (§3.3): at one budget, the sorted Score_IR of each retriever, the judged
pairs, the fitted h and k and their objective curves, computed once (`threshold_data`); then,
for any (h, k), the estimated class shares and, with judgments, the actual ones, the confusion
matrix and the agreements (`panel`, cheap enough for a slider). The rule, the classes and the
fits are `ragdash.calibration`'s; this module only arranges them for display. Also the summaries
of a stored calibration (calibration.json, estimator_cv.csv) shown beside the panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ragdash.analysis.frames import at_budget, order_systems
from ragdash.calibration import (
    Calibration,
    agreement_at,
    compare,
    confusion,
    fit_threshold,
    objective_curve,
    pairs,
    rule_class,
)
from ragdash.calibration.survey import beta_interval

COMPARE_COLUMNS = ["retriever", "n", "est_1", "act_1", "err_1", "est_2_4", "act_2_4", "err_2_4",
                   "est_5", "act_5", "err_5", "mae"]


@dataclass
class ThresholdData:
    """Everything the threshold panel needs at one budget, computed once; `panel()` is cheap."""

    budget: int
    retrievers: list[str]
    sorted_ir: dict[str, np.ndarray]  # retriever -> IR scores ascending
    pairs: pd.DataFrame | None  # qid, retriever, ir, judge (None without judgments)
    fit_h: float | None
    fit_k: float | None
    objective_h: pd.DataFrame | None  # threshold, agreement
    objective_k: pd.DataFrame | None
    n_excluded: int = 0

    @property
    def has_judgments(self) -> bool:
        return self.pairs is not None and not self.pairs.empty


def threshold_data(ir: pd.DataFrame, judgments: pd.DataFrame | None, budget: int,
                   order: Sequence[str] = (), calibration: Calibration | None = None,
                   grid: int = 401) -> ThresholdData:
    """Sort the scores, join judge scores and fit h and k at `budget` (the calibration's own
    values when it was fitted at this budget)."""
    at = at_budget(ir, budget)
    rets = order_systems(at["retriever"], order)
    sorted_ir = {r: np.sort(at.loc[at["retriever"] == r, "score"].to_numpy(float)) for r in rets}
    data = ThresholdData(budget, rets, sorted_ir, None, None, None, None, None)
    if judgments is None or judgments.empty or judgments["score"].notna().sum() == 0:
        return data
    try:
        p, info = pairs(ir, judgments, budget)
    except ValueError:
        return data
    data.pairs, data.n_excluded = p, info["n_excluded"]
    x, judge = p["ir"].to_numpy(float), p["judge"].to_numpy()
    if calibration is not None and calibration.budget == int(budget) and \
            calibration.scope == "pooled":
        data.fit_h, data.fit_k = float(calibration.h), float(calibration.k)
    else:
        data.fit_h = fit_threshold(x, judge == 1, "<").threshold
        data.fit_k = fit_threshold(x, judge == 5, ">").threshold
    g = np.linspace(0, 1, grid)
    data.objective_h = objective_curve(x, judge == 1, "<", grid=g)
    data.objective_k = objective_curve(x, judge == 5, ">", grid=g)
    return data


def fit_diagnosis(data: ThresholdData) -> list[str]:
    """Plain-language notes on fits that carry no information: no answer in the class, or a
    threshold that only reproduces "never" or "always" (Score_IR does not separate the class;
    the Overview then gives no h/k estimate)."""
    if not data.has_judgments or data.fit_h is None or data.fit_k is None:
        return []
    x, judge = data.pairs["ir"].to_numpy(float), data.pairs["judge"].to_numpy()
    notes = []
    for name, cls, thr, never, always in (
            ("k", 5, data.fit_k, data.fit_k >= x.max(), data.fit_k < x.min()),
            ("h", 1, data.fit_h, data.fit_h <= x.min(), data.fit_h > x.max())):
        hit = judge == cls
        what = "fully correct (5)" if cls == 5 else "lacking information (1)"
        if not hit.any() or hit.all():
            notes.append(f"{'No' if not hit.any() else 'Every'} answer was judged {what}, so "
                         f"{name} = {thr:.3f} is arbitrary: with a single judge class there is "
                         f"nothing for {name} to separate.")
        elif never or always:
            share = 1 - hit.mean() if never else hit.mean()
            whose = "the share of the other answers" if never else f"the share judged {cls}"
            notes.append(
                f"No {name} beats predicting that {'no' if never else 'every'} answer is "
                f"{what} (agreement {share:.1%}, {whose}): Score_IR does not "
                f"separate these answers here (mean Score_IR {x[hit].mean():.2f} for the "
                f"{int(hit.sum())} judged {cls}, {x[~hit].mean():.2f} for the others). The LLM "
                "may answer without the retrieved facts, or fail despite them: compare with "
                "the logistic estimator below.")
    return notes


def estimated_shares(data: ThresholdData, h: float, k: float) -> pd.DataFrame:
    """Per retriever: n and estimated shares (fractions) below h, between, above k
    (`ragdash.calibration.rule_class`: strict at both ends, above k wins when h > k)."""
    rows = []
    for r in data.retrievers:
        s = data.sorted_ir[r]
        n = len(s)
        counts = np.bincount(rule_class(s, h, k), minlength=3)
        rows.append((r, n, *(counts / n)))
    return pd.DataFrame(rows, columns=["retriever", "n", "est_1", "est_2_4", "est_5"])


def panel(data: ThresholdData, h: float, k: float) -> dict:
    """The threshold panel's numbers for (h, k): estimated shares per retriever; with judgments
    also actual shares, errors (pp), the pooled confusion matrix and both agreements
    (`ragdash.calibration.compare`, `confusion` and `agreement_at` on the judged pairs)."""
    est = estimated_shares(data, h, k)
    out: dict = {"estimated": est}
    if not data.has_judgments:
        return out
    p = data.pairs
    cmp = compare(p, h, k).set_index("retriever")
    cmp = cmp.reindex([r for r in data.retrievers if r in cmp.index]).reset_index()
    conf = confusion(p, h, k)
    x, judge = p["ir"].to_numpy(float), p["judge"].to_numpy()
    out.update(
        compare=cmp[COMPARE_COLUMNS],
        confusion=conf,
        agreement_h=float(agreement_at(x, judge == 1, h, "<")),
        agreement_k=float(agreement_at(x, judge == 5, k, ">")),
        accuracy=float(np.trace(conf.to_numpy()) / len(p)),
        mae=float(cmp["mae"].mean()),
    )
    return out


def judged_only(data: ThresholdData) -> ThresholdData:
    """`data` with each retriever's sorted Score_IR cut to its judged answers (the pairs), so
    the sorted-score chart and its shares count the answers the judge-based tables count. A
    retriever with no judged answer keeps all its scores; without judgments, `data` itself."""
    if not data.has_judgments:
        return data
    judged = {r: np.sort(g.to_numpy(float)) for r, g in data.pairs.groupby("retriever")["ir"]}
    return replace(data, sorted_ir={r: judged.get(r, s) for r, s in data.sorted_ir.items()})


def rule_bias(pairs_df: pd.DataFrame, k: float, budget: int, n_boot: int = 1000,
              level: float = 0.95, seed: int = 0) -> dict:
    """How far the h/k rule's share of correct answers (Score_IR > k) lies from the judge's
    (judge = 5) on the judged pairs (qid, retriever, ir, judge), in percentage points, with a
    percentile bootstrap interval of the difference over questions (where the two agree on
    every answer, which leaves it no width: ± the exact bound for no disagreement).

    Returns {budget, k, n, questions, est_pct, act_pct, diff_pp, ci ([lo, hi] or None with
    fewer than 2 questions), level, over (answers above k judged below 5), under (answers at
    or under k judged 5)}."""
    df = pairs_df.dropna(subset=["ir", "judge"])
    est = df["ir"].to_numpy(float) > k
    act = df["judge"].to_numpy(int) == 5
    codes, uniq = pd.factorize(df["qid"].astype(str))
    out = {"budget": int(budget), "k": float(k), "n": int(len(df)), "questions": len(uniq),
           "est_pct": float(est.mean() * 100) if len(df) else float("nan"),
           "act_pct": float(act.mean() * 100) if len(df) else float("nan"),
           "ci": None, "level": level, "over": int((est & ~act).sum()),
           "under": int((~est & act).sum())}
    out["diff_pp"] = out["est_pct"] - out["act_pct"]
    if len(uniq) >= 2:
        diff = np.bincount(codes, weights=est.astype(float) - act, minlength=len(uniq))
        size = np.bincount(codes, minlength=len(uniq)).astype(float)
        rng = np.random.default_rng(seed)
        boots = np.empty(n_boot)
        for b in range(n_boot):
            w = np.bincount(rng.integers(0, len(uniq), len(uniq)), minlength=len(uniq))
            boots[b] = 100 * (w @ diff) / (w @ size)
        a = (1 - level) / 2
        out["ci"] = [float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a))]
        if not (out["over"] or out["under"]):
            # the rule and the judge agree on every answer: every resample's difference is 0.
            # |bias| is at most the chance that an answer disagrees, at most that its question
            # shows a disagreement: none in q questions bounds it by Clopper-Pearson's 0 of q
            reach = 100 * beta_interval(0.0, len(uniq), level)[1]
            out["ci"] = [-reach, reach]
    return out


# --- a stored calibration ---------------------------------------------------------------------


def correct_share_summary(calibration: Calibration) -> dict:
    """Pooled estimated and actual share of 'correct' answers (%) from calibration.json."""
    t = calibration.per_retriever
    if t.empty:
        return {}
    w = t["n"] / t["n"].sum()
    return {"estimated_pct": float((t["est_5"] * w).sum()), "actual_pct": float(
        (t["act_5"] * w).sum()), "mae_pp": float(t["mae"].mean())}


def estimator_summary(cv: pd.DataFrame) -> pd.DataFrame:
    """Mean per-retriever share error (pp) of each estimator under each validation scheme.

    `cv` is `ragdash.calibration.cross_validate`'s table (or the run's estimator_cv.csv).
    """
    return (cv.groupby(["scheme", "method"], sort=False)["mae"].mean()
            .rename("mae").reset_index())
