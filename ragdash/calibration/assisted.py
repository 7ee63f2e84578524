"""The share correct assisted by a predictor of each label: the generalised regression
(difference) estimator of survey sampling (Särndal, Swensson & Wretman 1992, §6.3), the point
estimate prediction-powered inference gives with λ = 1 (Angelopoulos et al. 2023), with the
predictor cross-fitted on the labels themselves (cross-PPI; Zrnic & Candès 2024).

The predictor f is a logistic regression on what is known of every answer before any label
(`AUXILIARIES`: its system, the judge's 1–5 score and verdict, Score_IR at the generation
budget, the reference metrics, claim recall where the metrics ran). The labels are split into
folds of whole questions; each labelled answer is predicted by the model fitted on the other
folds, each unlabelled one by the folds' mean. Over the sample's design (`survey.strata`, with
`survey._cells` merging a stratum without labels into its nearest), with r = y − λf,

    p̂ = (λ/N) Σ_i f(x_i) + Σ_c W_c r̄_c,

which is the share itself once every answer is labelled, and unbiased for a fixed λf whatever
f is (tests/test_survey.py enumerates every sample): a poor predictor costs width, never
validity. λ is PPI++'s power tuning within the cells (`_tuned`, in [0, 1]): 0, the stratified
mean on the judge's verdict, where the predictor adds nothing to the strata. Its variance is
the stratified one of the residuals, Σ_c W_c² (1 − n_c/N_c) s_c²/n_c ("these answers"), or
over questions as ultimate clusters ("new questions", as `survey.fit`).
Each cell's s_c² is its residuals' own, shrunk toward their pooled variance by `SHRINK` labels
(a cell with one label takes the pooled one), and never below (ln(2/α)/z)²/n: with no label
contradicting the predictor, the interval is as wide as Clopper–Pearson's bound on a share of
disagreements never seen in n labels. The interval is Clopper–Pearson at the effective sample
size p̂(1 − p̂)/v̂ with Korn & Graubard's (1998) degrees-of-freedom factor, as `survey`'s.

Where no predictor can be fitted (labels all alike, fewer than 2 labelled questions), or the
estimate falls outside (0, 1), `survey.share` (the stratified mean on the judge's verdict) is
given instead. Coverage by simulation: benchmarks/bench_ppi_coverage.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragdash.calibration import survey

AUXILIARIES = ("judge", "judged5", "ir", "contains", "f1", "em", "rouge_l", "similarity",
               "claim_recall")
"""The columns of an answer table the predictor reads, where present (a column missing, or
constant, is left out; missing values take the column's mean and a missing indicator)."""
N_FOLDS = 5
SHRINK = 2.0
"""Labels' worth of the pooled residual variance in each cell's (a cell with one label takes
the pooled variance)."""
METHOD = ("regression estimate with a predictor cross-fitted on the labels (system, judge, "
          "Score_IR, reference metrics), Korn–Graubard interval")


def design_matrix(frame: pd.DataFrame) -> np.ndarray:
    """The predictor's features: one column per system, each auxiliary present and not
    constant (missing values at the column's mean, with an indicator where any is missing),
    standardised."""
    parts = [pd.get_dummies(frame["system"].astype(str)).to_numpy(float)]
    for name in AUXILIARIES:
        if name not in frame:
            continue
        v = pd.to_numeric(frame[name], errors="coerce").to_numpy(float)
        miss = np.isnan(v)
        if miss.all() or np.nanstd(v) == 0:
            continue
        parts.append(np.where(miss, np.nanmean(v), v)[:, None])
        if miss.any():
            parts.append(miss[:, None].astype(float))
    x = np.hstack(parts)
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def cross_fitted(frame: pd.DataFrame, y: np.ndarray, n_folds: int = N_FOLDS, seed: int = 0
                 ) -> np.ndarray | str:
    """Each answer's predicted probability of "correct": a labelled answer's from the logistic
    regression fitted on the folds without its question, an unlabelled one's the folds' mean
    (labels that are fractions, several labellers, weigh both classes). A reason (str) where
    no predictor can be fitted."""
    from sklearn.linear_model import LogisticRegression

    from ragdash.calibration.model import question_folds

    y = np.asarray(y, float)
    labelled = ~np.isnan(y)
    if not labelled.any() or np.all(y[labelled] == y[labelled][0]):
        return "every label alike: nothing to fit a predictor on"
    k = min(n_folds, int(frame.loc[labelled, "qid"].nunique()))
    if k < 2:
        return "labels of one question: cross-fitting needs two"
    fold = np.full(len(frame), -1)
    fold[labelled] = question_folds(frame.loc[labelled, "qid"].astype(str), k, seed)
    x = design_matrix(frame)
    pred = np.empty(len(frame))
    rest = np.zeros(len(frame))
    for f in range(k):
        train = np.flatnonzero(labelled & (fold != f))
        yt = y[train]
        if np.all(yt == yt[0]):
            p = np.full(len(frame), float(yt[0]))
        else:
            model = LogisticRegression(C=1.0, solver="newton-cholesky", max_iter=200).fit(
                np.vstack([x[train], x[train]]), np.r_[np.ones(train.size), np.zeros(train.size)],
                sample_weight=np.r_[yt, 1 - yt])
            p = model.predict_proba(x)[:, 1]
        held = labelled & (fold == f)
        pred[held] = p[held]
        rest += p
    pred[~labelled] = rest[~labelled] / k
    return pred


def floor(labels: float | np.ndarray, level: float = survey.LEVEL) -> np.ndarray:
    """The least residual variance assumed from `labels` labels: (ln(2/α)/z)²/n, at which the
    normal interval is as wide as Clopper–Pearson's upper bound on a share never seen in n."""
    from scipy.stats import norm

    alpha = 1 - level
    return (np.log(2 / alpha) / norm.ppf(1 - alpha / 2)) ** 2 / np.asarray(labels, float)


@dataclass(frozen=True)
class Fit:
    """One scope's regression estimate: `estimate`, `var` (for the estimand), `cells` (rows
    N, n, s2: each cell's answers, labels and residual variance, floored), `labels`,
    `df`; for "new questions" `clustered` and `between` as `survey.Fit`'s."""

    estimate: float
    var: float
    cells: np.ndarray
    labels: int
    df: float
    estimand: str = survey.DEFAULT_ESTIMAND
    clustered: float = float("nan")
    between: float = 0.0
    questions: int = 0
    all_questions: int = 0
    level: float = survey.LEVEL


def _variance(big_n: np.ndarray, n: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Σ_c W_c² (1 − n_c/N_c) s_c²/n_c, along the last axis."""
    weight = big_n / big_n.sum()
    fpc = np.clip(1 - n / big_n, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(fpc > 0, weight**2 * fpc * s2 / n, 0.0).sum(axis=-1)


def _tuned(y: np.ndarray, pred: np.ndarray, cell: np.ndarray, labelled: np.ndarray, k: int
           ) -> float:
    """PPI++'s power tuning (Angelopoulos, Duchi & Zrnic 2023) within the cells: the λ in
    [0, 1] that minimises the residuals' pooled within-cell variance, cov(y, f) / var(f); 0
    (the stratified mean) where the predictor does not vary within a cell."""
    n = np.bincount(cell[labelled], minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        ybar = np.bincount(cell[labelled], y[labelled], minlength=k) / n
        fbar = np.bincount(cell[labelled], pred[labelled], minlength=k) / n
    ey = y[labelled] - ybar[cell[labelled]]
    ef = pred[labelled] - fbar[cell[labelled]]
    spread = float(ef @ ef)
    return float(np.clip(ey @ ef / spread, 0.0, 1.0)) if spread > 1e-12 else 0.0


def fit(frame: pd.DataFrame, y: np.ndarray, pred: np.ndarray,
        estimand: str = survey.DEFAULT_ESTIMAND, level: float = survey.LEVEL,
        floored: bool = True, lam: float | None = None) -> Fit:
    """The regression estimate over `frame` from labels `y` (NaN: unlabelled) and predictions
    `pred` of every answer (`cross_fitted`, or any fixed predictor), each scaled by λ (`lam`;
    None: tuned, `_tuned`); `floored=False`: the residuals' own variances (for checking by
    enumeration)."""
    if estimand not in survey.ESTIMANDS:
        raise ValueError(f"estimand {estimand!r} is not one of {', '.join(survey.ESTIMANDS)}")
    y, pred = np.asarray(y, float), np.asarray(pred, float)
    labelled = ~np.isnan(y)
    labels = int(labelled.sum())
    if not labels:
        raise ValueError("no labels to estimate from")
    codes, names = pd.factorize(survey.strata(frame).to_numpy(), sort=True)
    nh = np.bincount(codes[labelled], minlength=len(names)).astype(float)
    cell = survey._cells(np.asarray(names), np.bincount(codes, minlength=len(names)), nh)[codes]
    k = int(cell.max()) + 1
    big_n = np.bincount(cell, minlength=k).astype(float)
    n = np.bincount(cell[labelled], minlength=k).astype(float)
    lam = _tuned(y, pred, cell, labelled, k) if lam is None else lam
    pred = lam * pred
    r = np.where(labelled, y - pred, 0.0)
    rbar = np.bincount(cell, r, minlength=k) / n
    estimate = float(pred.mean() + (big_n / big_n.sum()) @ rbar)
    dev = np.where(labelled, r - rbar[cell], 0.0)
    ss = np.bincount(cell, dev**2, minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        own = np.where(n > 1, ss / (n - 1), np.nan)
        pooled = ss.sum() / (n - 1).clip(min=0).sum() if (n > 1).any() else \
            float((r[labelled] ** 2).sum() / labels)
    s2 = (ss + SHRINK * pooled) / (np.maximum(n - 1, 0) + SHRINK) if floored else own
    if floored:
        s2 = np.maximum(s2, floor(labels, level))
    cells = np.vstack([big_n, n, s2])
    common = {"cells": cells, "labels": labels, "estimand": estimand, "level": level}
    if estimand == "these answers":
        return Fit(estimate, float(_variance(big_n, n, s2)), df=max(labels - k, 1), **common)
    qcodes, qnames = pd.factorize(frame["qid"].astype(str).to_numpy())
    q = len(qnames)
    asked = int(np.unique(qcodes[labelled]).size)
    total = big_n.sum()
    part = (pred + rbar[cell] - estimate) / total
    expand = np.where(labelled, (big_n / n)[cell] * dev / total, 0.0)
    clustered = survey._over_questions(qcodes, q, part + expand)
    weight = big_n / total
    var = max(clustered, float((weight**2 * s2 / n).sum())) if q > 1 else float("nan")
    return Fit(estimate, var, df=max(asked - 1, 1), clustered=clustered,
               between=survey._over_questions(qcodes, q, part), questions=asked,
               all_questions=q, **common)


def _half(p: float, var: np.ndarray, labels: np.ndarray, df: np.ndarray, level: float
          ) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson bounds at p̂ with n* = p̂(1 − p̂)/v̂ times the df factor."""
    with np.errstate(divide="ignore"):
        n_eff = p * (1 - p) / np.asarray(var, float) * survey._df_factor(labels, df, level)
    return survey._clopper_pearson(np.full(np.size(var), p), n_eff, level)


def interval(f: Fit) -> tuple[float, float] | None:
    """The Korn–Graubard interval of a fit (the point when every answer is labelled on "these
    answers"); None when its variance cannot be estimated or p̂ is outside (0, 1)."""
    if np.isnan(f.var) or not 0 < f.estimate < 1:
        return None
    if f.var <= 0:
        return f.estimate, f.estimate
    lo, hi = _half(f.estimate, np.array([f.var]), np.array([f.labels]), np.array([f.df]),
                   f.level)
    return float(lo[0]), float(hi[0])


def labels_for(f: Fit, half: float = survey.TARGET_HALF / 100) -> int | None:
    """The labels in all at which the interval `interval` gives, projected (each cell's labels
    scaled, its residual variance as now, the floor at the new count; for "new questions" the
    variance between questions kept), is within ±`half`; None when no count reaches it."""
    if f.labels < 2 or np.isnan(f.var) or not 0 < f.estimate < 1:
        return None
    big_n, now, s2 = f.cells

    def width(m: np.ndarray) -> np.ndarray:
        m = m.astype(float)
        n = np.minimum(now * (m / f.labels)[:, None], big_n)
        s2m = np.maximum(s2, floor(m, f.level)[:, None])
        if f.estimand == "these answers":
            var, df = _variance(big_n, n, s2m), np.maximum(m - len(big_n), 1)
        else:
            weight = big_n / big_n.sum()
            var = np.maximum((weight**2 * s2m / n).sum(axis=1),
                             f.between + (f.clustered - f.between) * f.labels / m)
            df = np.maximum(np.minimum(f.questions * m / f.labels, f.all_questions) - 1, 1)
        lo, hi = _half(f.estimate, var, m, df, f.level)
        return np.where(var > 0, (hi - lo) / 2, 0.0)

    total = int(big_n.sum())
    grid = np.unique(np.r_[f.labels, np.round(np.geomspace(max(f.labels, 1), total, 33))]
                     .astype(int))
    ok = np.flatnonzero(width(grid) <= half)
    if not ok.size:
        return None
    if ok[0] == 0:
        return int(grid[0])
    low, high = int(grid[ok[0] - 1]), int(grid[ok[0]])
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if width(np.array([mid]))[0] <= half else (mid, high)
    return high


def share(frame: pd.DataFrame, y: np.ndarray, pred: np.ndarray | str,
          estimand: str = survey.DEFAULT_ESTIMAND, level: float = survey.LEVEL,
          min_labels: int = survey.MIN_SYSTEM_LABELS, cannot_tell: np.ndarray | None = None,
          target: float = survey.SYSTEM_TARGET_HALF) -> survey.Share:
    """One scope's share correct as `survey.share` gives it, by the regression estimate with
    predictions `pred` (`cross_fitted` over the whole run, sliced to the scope); `survey.share`
    where `pred` is a reason or the estimate is outside (0, 1)."""
    y = np.asarray(y, float)
    n = int((~np.isnan(y)).sum())
    plain = {"estimand": estimand, "level": level, "min_labels": min_labels,
             "cannot_tell": cannot_tell, "target": target}
    if n == 0 or isinstance(pred, str):
        return survey.share(frame, y, **plain)
    f = fit(frame, y, pred, estimand, level)
    ci = interval(f)
    if ci is None and not (np.isnan(f.var) and 0 < f.estimate < 1):
        return survey.share(frame, y, **plain)
    method = METHOD + (" with the finite-population correction" if estimand == "these answers"
                       else ", variance clustered by question")
    to_target = labels_for(f, target / 100)
    big_n = len(frame)
    if n < min_labels and not survey.census(n, big_n, estimand):
        return survey.Share(f.estimate, None, n, big_n, method, to_target=to_target,
                            target=target,
                            reason=f"too few labels for an interval ({n}; from {min_labels} on)")
    if ci is None:
        return survey.Share(f.estimate, None, n, big_n, method, target=target,
                            reason="answers to one question only: no interval for new questions")
    lo, hi = ci
    bounds = None
    if cannot_tell is not None and cannot_tell.any():
        worst = fit(frame, np.where(cannot_tell, 0.0, y), pred, estimand, level)
        best = fit(frame, np.where(cannot_tell, 1.0, y), pred, estimand, level)
        bounds = (worst.estimate, best.estimate)
        if best.estimate - worst.estimate > 0.01:
            ends = [interval(g) for g in (worst, best)]
            lo = min(lo, ends[0][0] if ends[0] else 0.0)
            hi = max(hi, ends[1][1] if ends[1] else 1.0)
    return survey.Share(f.estimate, (lo, hi), n, big_n, method, se=float(np.sqrt(f.var)),
                        bounds=bounds, to_target=to_target, target=target)
