"""The share of correct answers from a labelled sample, as a survey statistician would give it.

The population is the run's labelable answers; each is in one stratum, its system × whether the
judge gave it 5 ("judged 5": known before any label). The estimator is the stratified mean

    p̂ = Σ_h W_h ȳ_h,   W_h = N_h / N,

which is the regression (difference) estimator on the judge's verdict: the judge predicts each
answer, the labels of each stratum correct that prediction (the point estimate PPI++ gives with
the verdict as predictor and λ = 1). It is unbiased for a sample stratified by system × verdict
(the default draw) and, conditional on the strata's counts, for a uniform draw too.

Two estimands (`ESTIMANDS`):

- "these answers" (default): the share over the run's own N answers, a finite population. Its
  variance has the finite-population correction, Σ_h W_h² (1 − n_h/N_h) s_h² / n_h, so the
  interval has no width once every answer is labelled.
- "new questions": the share for new questions like these. Answers to one question are not
  independent, so the variance is that of the estimate's per-question contributions (questions
  as ultimate clusters, drawn from an endless supply; no correction).

A stratum's s_h² is never taken below p̃(1 − p̃), p̃ = (Σy + 1) / (n_h + 2), so a few identical
labels do not make a stratum look certain; a stratum with fewer than 2 labels is merged with
the other verdict of its system (then with the scope). The interval is Clopper–Pearson at the
design's effective sample size p̂(1 − p̂) / v̂ (Korn & Graubard, 1998): never zero-width before
every answer is labelled, and conservative where the normal approximation is not.

The same Korn–Graubard bound is the home of every other mean over questions the dashboard shows
(`beta_interval`, and `mean_interval` for a signal in a known range).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

LEVEL = 0.95
ESTIMANDS = {"these answers": "the share over this run's answers",
             "new questions": "the share for new questions like these"}
DEFAULT_ESTIMAND = "these answers"
MIN_SYSTEM_LABELS = 20
"""A system's interval is shown from this many labels of that system on: fewer give the count
and "too few labels for an interval" (their coverage, checked by simulation, falls short)."""
MIN_POOLED_LABELS = 10
TARGET_HALF = 5.0
"""The half-width, in points, the planner counts labels for (pooled)."""
SYSTEM_TARGET_HALF = 10.0
"""The same for one system's interval (±5 would need nearly every answer of a system)."""


@dataclass(frozen=True)
class Share:
    """One scope's share correct: `estimate` and `ci` as fractions (ci None, with `reason`,
    where no interval is shown); `labels` the sample's labelled answers it rests on; `answers`
    the scope's answers; `se` the standard error; `bounds` the estimate with every "cannot
    tell" wrong and correct; `to_target` labels needed in all for ±`target` points."""

    estimate: float | None
    ci: tuple[float, float] | None
    labels: int
    answers: int
    method: str
    se: float | None = None
    reason: str = ""
    bounds: tuple[float, float] | None = None
    to_target: int | None = None
    target: float = TARGET_HALF
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        def r(v: float | None) -> float | None:
            return None if v is None else round(float(v), 4)

        return {"estimate": r(self.estimate),
                "ci": None if self.ci is None else [r(self.ci[0]), r(self.ci[1])],
                "labels": self.labels, "answers": self.answers, "method": self.method,
                "se": r(self.se), "reason": self.reason,
                "bounds": None if self.bounds is None else [r(b) for b in self.bounds],
                "to_target": self.to_target, "target": self.target,
                "notes": list(self.notes)}


def strata(frame: pd.DataFrame) -> pd.Series:
    """Each answer's stratum: "<system>|5" when judged 5, "<system>|<5" otherwise (unjudged
    answers included: the judge did not say 5)."""
    five = frame["judged5"].fillna(0).to_numpy(float) >= 0.5
    return frame["system"].astype(str) + np.where(five, "|5", "|<5")


def _collapsed(stratum: pd.Series, labelled: np.ndarray) -> pd.Series:
    """Strata with fewer than 2 labels merged with their system's other verdict, then (still
    fewer) with the whole scope."""
    out = stratum.copy()
    count = pd.Series(labelled, index=stratum.index).groupby(out).sum()
    thin = set(count[count < 2].index)
    if thin:
        system = out.str.rsplit("|", n=1).str[0]
        out = out.where(~out.isin(thin), system)
        count = pd.Series(labelled, index=out.index).groupby(out).sum()
        if (count < 2).any():
            out = pd.Series("all", index=out.index)
    return out


def _floor_var(y: np.ndarray) -> float:
    """s² of a stratum's labels, at least p̃(1 − p̃) with p̃ = (Σy + 1) / (n + 2)."""
    n = y.size
    s2 = float(y.var(ddof=1)) if n > 1 else 0.0
    pt = (y.sum() + 1) / (n + 2)
    return max(s2, pt * (1 - pt))


def beta_interval(p: float, n_eff: float, level: float) -> tuple[float, float]:
    """Clopper–Pearson at an effective sample size (Korn & Graubard, 1998)."""
    from scipy.stats import beta

    a = (1 - level) / 2
    x = p * n_eff
    lo = 0.0 if x <= 0 else float(beta.ppf(a, x, n_eff - x + 1))
    hi = 1.0 if x >= n_eff else float(beta.ppf(1 - a, x + 1, n_eff - x))
    return max(0.0, min(lo, p)), min(1.0, max(hi, p))


def mean_interval(values: np.ndarray, bounds: tuple[float, float] = (0.0, 1.0),
                  level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Interval (lo, hi) of each column mean of `values` (questions × columns, every value within
    `bounds`): Clopper–Pearson at an effective sample size (Korn & Graubard, 1998) on the mean
    rescaled to [0, 1], n p̃(1 − p̃) / s², with half a question more at each end of `bounds`
    (Jeffreys' pseudo-counts) in p̃ = (Σx + ½) / (n + 1) and in a floor under s²: n questions
    alike, at an end or not, do not prove the next one will be, so no interval has zero width,
    and a skewed column (most questions at 0) is not trusted to have the small variance its
    few draws show. A 0/1 column gets about Clopper–Pearson's interval at n. Coverage by
    simulation: benchmarks/mean_interval_coverage.py. NaN for a column without questions."""
    low, high = bounds
    x = (np.asarray(values, dtype=float) - low) / (high - low)
    n, cols = x.shape
    if n == 0:
        return np.full(cols, np.nan), np.full(cols, np.nan)
    total = x.sum(axis=0)
    pt = (total + 0.5) / (n + 1)  # the mean with half a question at each end
    s2_ends = (((x - pt) ** 2).sum(axis=0) + 0.5 * pt**2 + 0.5 * (1 - pt) ** 2) / n
    s2 = np.maximum(x.var(axis=0, ddof=1), s2_ends) if n > 1 else s2_ends
    n_eff = n * pt * (1 - pt) / s2
    ends = np.array([beta_interval(float(np.clip(p, 0.0, 1.0)), float(m), level)
                     for p, m in zip(total / n, n_eff, strict=True)]).reshape(cols, 2)
    return low + (high - low) * ends[:, 0], low + (high - low) * ends[:, 1]


@dataclass(frozen=True)
class Fit:
    """The stratified estimate of one scope: estimate, variance, and per stratum N_h, n_h, s²."""

    estimate: float
    var: float
    table: pd.DataFrame  # index stratum; columns N, n, mean, s2


def fit(frame: pd.DataFrame, y: np.ndarray, estimand: str = DEFAULT_ESTIMAND,
        floor: bool = True) -> Fit:
    """The stratified estimate over `frame`'s answers from labels `y` (NaN: unlabelled) and its
    variance for the estimand (`floor=False`: the textbook s², for checking unbiasedness)."""
    labelled = ~np.isnan(y)
    stratum = _collapsed(strata(frame).reset_index(drop=True), labelled)
    s = stratum.to_numpy()
    rows = {}
    for h in pd.unique(s):
        at = s == h
        yh = y[at & labelled]
        rows[h] = {"N": int(at.sum()), "n": yh.size,
                   "mean": float(yh.mean()) if yh.size else np.nan,
                   "s2": (_floor_var(yh) if floor else float(yh.var(ddof=1)))
                   if yh.size > 1 else (_floor_var(yh) if yh.size else np.nan)}
    table = pd.DataFrame.from_dict(rows, orient="index")
    n_all = table["N"].sum()
    w = table["N"] / n_all
    estimate = float((w * table["mean"]).sum())
    if estimand == "these answers":
        var = float((w**2 * (1 - table["n"] / table["N"]) * table["s2"] / table["n"]).sum())
    elif estimand == "new questions":
        var = _clustered_var(frame["qid"].astype(str).to_numpy(), s, y, labelled, table, n_all)
    else:
        raise ValueError(f"estimand {estimand!r} is not one of {', '.join(ESTIMANDS)}")
    return Fit(estimate, max(var, 0.0), table)


def _clustered_var(qid: np.ndarray, s: np.ndarray, y: np.ndarray, labelled: np.ndarray,
                   table: pd.DataFrame, n_all: int) -> float:
    """The variance over questions (ultimate clusters) of the estimate's linearisation: each
    answer contributes its stratum's mean / N, each labelled answer also its residual, expanded
    by N_h / (n_h N)."""
    mean = table["mean"].reindex(s).to_numpy()
    expand = (table["N"] / table["n"]).reindex(s).to_numpy()
    u = mean / n_all + np.where(labelled, expand * (np.nan_to_num(y) - mean) / n_all, 0.0)
    per_q = pd.Series(u).groupby(qid).sum().to_numpy()
    q = per_q.size
    if q < 2:
        return float("nan")
    floor = float((table["N"] ** 2 * table["s2"] / table["n"]).sum()) / n_all**2
    return max(float(q / (q - 1) * ((per_q - per_q.mean()) ** 2).sum()), floor)


def interval(f: Fit, level: float = LEVEL) -> tuple[float, float]:
    """The Korn–Graubard interval of a fit; the point itself when its variance is 0 (every
    answer labelled, "these answers")."""
    if f.var <= 0:
        return f.estimate, f.estimate
    p = min(max(f.estimate, 0.0), 1.0)
    n = int(f.table["n"].sum())
    pt = (p * n + 1) / (n + 2)  # as the strata's floor: 0 or 1 labels-wide is no certainty
    return beta_interval(p, pt * (1 - pt) / f.var, level)


def labels_for(f: Fit, half: float = TARGET_HALF / 100, level: float = LEVEL,
               estimand: str = DEFAULT_ESTIMAND) -> int | None:
    """The labels in all, allocated across the strata as now (proportionally where none yet),
    at which the interval's half-width reaches `half`, from the fit's own s²; None when no
    number of the scope's answers reaches it."""
    from scipy.stats import norm

    t = f.table
    n_all = t["N"].sum()
    z = norm.ppf(1 - (1 - level) / 2)
    w = (t["N"] / n_all).to_numpy()
    share = (t["N"] / n_all).to_numpy()  # proportional allocation
    s2 = t["s2"].to_numpy()
    for m in range(max(int(t["n"].sum()), 2), int(n_all) + 1):
        nh = np.clip(np.maximum(share * m, 1.0), 1.0, t["N"].to_numpy())
        fpc = 1 - nh / t["N"].to_numpy() if estimand == "these answers" else 1.0
        if z * np.sqrt((w**2 * fpc * s2 / nh).sum()) <= half:
            return m
    return None


METHOD = ("stratified estimate on the judge's verdict (system × judged 5), "
          "Korn–Graubard interval")


def share(frame: pd.DataFrame, y: np.ndarray, estimand: str = DEFAULT_ESTIMAND,
          level: float = LEVEL, min_labels: int = MIN_SYSTEM_LABELS,
          cannot_tell: np.ndarray | None = None, target: float = SYSTEM_TARGET_HALF) -> Share:
    """One scope's share correct with its interval (None below `min_labels` labels, with the
    reason) and the labels it needs for ±`target` points. `cannot_tell` marks sampled answers
    labelled only "cannot tell": left out of the estimate, they bound it (all wrong, all
    correct), and the interval spans both."""
    y = np.asarray(y, float)
    n, big_n = int((~np.isnan(y)).sum()), len(frame)
    method = METHOD + (" with the finite-population correction" if estimand == "these answers"
                       else ", variance clustered by question")
    if n == 0:
        return Share(None, None, 0, big_n, method, reason="no label yet", target=target)
    f = fit(frame, y, estimand)
    to_target = labels_for(f, target / 100, level, estimand) if n >= 2 else None
    if n < min_labels:
        return Share(f.estimate, None, n, big_n, method, to_target=to_target, target=target,
                     reason=f"too few labels for an interval ({n}; from {min_labels} on)")
    lo, hi = interval(f, level)
    bounds = None
    if cannot_tell is not None and cannot_tell.any():
        worst = fit(frame, np.where(cannot_tell, 0.0, y), estimand)
        best = fit(frame, np.where(cannot_tell, 1.0, y), estimand)
        bounds = (worst.estimate, best.estimate)
        if best.estimate - worst.estimate > 0.01:
            lo, hi = min(lo, interval(worst, level)[0]), max(hi, interval(best, level)[1])
    return Share(f.estimate, (lo, hi), n, big_n, method, se=float(np.sqrt(f.var)),
                 bounds=bounds, to_target=to_target, target=target)
