"""The share of correct answers from a labelled sample, as a survey statistician would give it.

The share section gives the regression estimate of `ragdash.calibration.assisted` (a predictor
of each label cross-fitted on the labels) over the strata, weights and interval of this module,
and this module's stratified mean where no predictor can be fitted.

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

Every stratum with a label keeps its own mean, whatever its sampling fraction, so the estimate
is unbiased for any allocation (by enumeration, tests/test_survey.py); a stratum with one label
gets the largest variance labels in [0, 1] can have (Popoviciu), one without labels the mean of
its nearest stratum with labels (the same verdict of the nearest system: the judge is kept).
From 2 labels a stratum's s_h² is never taken below p̃(1 − p̃), p̃ = (Σy + 1) / (n_h + 2), so a
few identical labels do not make a stratum look certain.

The interval is Clopper–Pearson at the design's effective sample size (Korn & Graubard, 1998):
n* = p̂(1 − p̂) / v̂ with the design's own variance, capped by the floors' p̃(1 − p̃) / v̂ (p̃ =
Σ W_h p̃_h shrunk as the floors are), times the degrees-of-freedom factor (t_{n−1} / t_df)²; at
p̂ = 0 or 1 the design's own Clopper–Pearson bound (n* = n when the labels are proportional).
Never zero-width before every answer is labelled; coverage by simulation in
benchmarks/bench_ppi_coverage.py. The planner (`labels_for`) counts the labels at which that
same interval, projected, is within ±target.

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
VERSION = 4
"""The method's version, stored with the share section: a calibration.json share section of
another version is worked out again (2: issue 50's strata, effective n and planner; 3: the
regression estimate, `ragdash.calibration.assisted`, where a predictor can be fitted; 4: a
census below the label floor is exact, `census`)."""
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
    answers included: the judge did not say 5). A `stratum` column (the strata stored with the
    sample when it was drawn) is used where it is set."""
    if "stratum" in frame and frame["stratum"].notna().all():
        return frame["stratum"].astype(str)
    five = frame["judged5"].fillna(0).to_numpy(float) >= 0.5
    now = frame["system"].astype(str) + np.where(five, "|5", "|<5")
    if "stratum" not in frame:
        return now
    return frame["stratum"].where(frame["stratum"].notna(), now).astype(str)


def _clopper_pearson(p: np.ndarray, n_eff: np.ndarray, level: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson bounds at x = p·n_eff of n_eff (arrays; clipped to hold p)."""
    from scipy.special import betaincinv  # the beta distribution's quantile, as a ufunc

    a = (1 - level) / 2
    p, n_eff = np.asarray(p, float), np.asarray(n_eff, float)
    x = p * n_eff
    with np.errstate(invalid="ignore"):
        lo = np.where(x <= 0, 0.0, betaincinv(np.maximum(x, 1e-300), n_eff - x + 1, a))
        hi = np.where(x >= n_eff, 1.0, betaincinv(x + 1, np.maximum(n_eff - x, 1e-300), 1 - a))
    return np.maximum(0.0, np.minimum(lo, p)), np.minimum(1.0, np.maximum(hi, p))


def beta_interval(p: float, n_eff: float, level: float) -> tuple[float, float]:
    """Clopper–Pearson at an effective sample size (Korn & Graubard, 1998)."""
    lo, hi = _clopper_pearson(np.array(p), np.array(n_eff), level)
    return float(lo), float(hi)


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


def _cells(names: np.ndarray, big_n: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The cell of each stratum: its own when it has a label; a stratum without labels joins
    the nearest stratum with labels, whose mean then stands for it: the same verdict first
    (the judge's strata kept), of the system whose share judged 5 is nearest, then the one
    with more labels; within one system, its other verdict."""
    system = np.array([str(x).rsplit("|", 1)[0] for x in names])
    five = np.array([str(x).endswith("|5") for x in names], float)
    share5 = {s: float((big_n * five)[system == s].sum() / big_n[system == s].sum())
              for s in set(system)}
    judge = np.array([share5[s] for s in system])
    out = np.arange(len(names))
    have = np.flatnonzero(n > 0)
    for h in np.flatnonzero(n == 0):
        out[h] = min(have, key=lambda g: (2 * abs(five[g] - five[h]) + abs(judge[g] - judge[h]),
                                          -n[g], str(names[g])))
    return np.unique(out, return_inverse=True)[1]


def _spread(raw: np.ndarray, n: np.ndarray, big_n: np.ndarray, mean: np.ndarray,
            floor: bool) -> np.ndarray:
    """Each cell's s²: from 2 labels on, the labels' own (ddof 1), floored at p̃(1 − p̃) with
    p̃ = (n·mean + 1) / (n + 2) (a few alike labels prove no certainty); from 1 label, the
    largest any labels in [0, 1] can have, N / (4 (N − 1)) (Popoviciu's bound on the
    stratum's S²), so the variance is conservative whatever the stratum holds."""
    pt = (n * mean + 1) / (n + 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        most = np.where(big_n > 1, big_n / (4 * (big_n - 1)), 0.25)
    own = np.fmax(raw, pt * (1 - pt)) if floor else raw
    return np.where(n >= 2, own, most)


@dataclass(frozen=True)
class Fit:
    """The stratified estimate of one scope with what its interval and planner need.

    `cells` has a column per cell (a stratum with labels, with the strata without labels
    that take its mean) and rows N, n (labels), mean, s2 (`_spread`) and raw (the labels' own
    s², NaN below 2); `table` is the same as a DataFrame. `var` is the estimate's variance
    for the estimand; `shrunk` Σ W p̃, the p̃ of the floors; `df` the variance's degrees of
    freedom; for "new questions" also `clustered` (the variance over questions before its
    floor), `between` (the part labels do not shrink), `questions` (with a label) and
    `all_questions`; `unfloored` the variance without the floors (the clustered one for "new
    questions")."""

    estimate: float
    var: float
    cells: np.ndarray
    estimand: str = DEFAULT_ESTIMAND
    labels: int = 0
    unfloored: float = float("nan")
    shrunk: float = float("nan")
    df: float = float("nan")
    clustered: float = float("nan")
    between: float = 0.0
    questions: int = 0
    all_questions: int = 0

    @property
    def table(self) -> pd.DataFrame:
        """`cells` as a DataFrame (columns N, n, mean, s2, raw)."""
        return pd.DataFrame(self.cells.T, columns=["N", "n", "mean", "s2", "raw"]).astype(
            {"N": int, "n": int})


def fit(frame: pd.DataFrame, y: np.ndarray, estimand: str = DEFAULT_ESTIMAND,
        floor: bool = True) -> Fit:
    """The stratified estimate p̂ = Σ_h W_h ȳ_h over `frame`'s answers from labels `y` (NaN:
    unlabelled) and its variance for the estimand (`floor=False`: the labels' own s², for
    checking by enumeration).

    Every stratum with a label keeps its own mean, so p̂ is unbiased for any allocation once
    each stratum has a label; a stratum with one label gets the largest variance labels can
    have (`_spread`), one without labels its nearest stratum's mean (`_cells`)."""
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand {estimand!r} is not one of {', '.join(ESTIMANDS)}")
    y = np.asarray(y, float)
    labelled = ~np.isnan(y)
    labels = int(labelled.sum())
    if not labels:
        raise ValueError("no labels to estimate from")
    codes, names = pd.factorize(strata(frame).to_numpy(), sort=True)
    nh = np.bincount(codes[labelled], minlength=len(names)).astype(float)
    cell = _cells(np.asarray(names), np.bincount(codes, minlength=len(names)), nh)[codes]
    k = int(cell.max()) + 1
    big_n = np.bincount(cell, minlength=k).astype(float)
    n = np.bincount(cell[labelled], minlength=k).astype(float)
    yl = np.where(labelled, y, 0.0)
    mean = np.bincount(cell, yl, minlength=k) / n
    resid = np.where(labelled, yl - mean[cell], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.where(n > 1, np.bincount(cell, resid**2, minlength=k) / (n - 1), np.nan)
    s2 = _spread(raw, n, big_n, mean, floor)
    weight = big_n / big_n.sum()
    estimate = float(weight @ mean)
    cells = np.vstack([big_n, n, mean, s2, raw])
    pt = (n * mean + 1) / (n + 2)
    common = {"cells": cells, "estimand": estimand, "labels": labels,
              "shrunk": float(weight @ pt)}
    if estimand == "these answers":
        fpc = np.clip(1 - n / big_n, 0.0, 1.0)
        var, unfloored = (float(np.where(fpc > 0, weight**2 * fpc * v / n, 0.0).sum())
                          for v in (s2, _spread(raw, n, big_n, mean, floor=False)))
        return Fit(estimate, var, df=max(labels - k, 1), unfloored=unfloored, **common)
    qcodes, qnames = pd.factorize(frame["qid"].astype(str).to_numpy())
    q = len(qnames)
    asked = int(np.unique(qcodes[labelled]).size)
    part = (mean[cell] - estimate) / big_n.sum()
    expand = np.where(labelled, (big_n / n)[cell] * resid / big_n.sum(), 0.0)
    clustered = _over_questions(qcodes, q, part + expand)
    var = max(clustered, float((weight**2 * s2 / n).sum())) if q > 1 else float("nan")
    return Fit(estimate, var, df=max(asked - 1, 1), clustered=clustered, unfloored=clustered,
               between=_over_questions(qcodes, q, part), questions=asked, all_questions=q,
               **common)


def _over_questions(qcodes: np.ndarray, q: int, u: np.ndarray) -> float:
    """q / (q − 1) Σ_q (u_q − ū)², u_q each question's sum of `u`, the answers' linearised
    contributions (ŷ − p̂) / N (questions as ultimate clusters); NaN below 2 questions."""
    if q < 2:
        return float("nan")
    per_q = np.bincount(qcodes, u, minlength=q)
    return float(q / (q - 1) * ((per_q - per_q.mean()) ** 2).sum())


def _extreme_n(n: np.ndarray, weight: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """The effective labels when every label is alike (all 0; all 1 by symmetry): the n* at
    which Clopper–Pearson's bound is the stratified design's own. Its bound U is the largest
    share Σ W_h q_h whose likeliest strata shares still give every label 0 with probability
    (1 − level) / 2 (max Π (1 − q_h)^{n_h}: q_h = max(0, 1 − n_h / (μ W_h)), by bisection on
    μ); n* = log((1 − level) / 2) / log(1 − U). Proportional labels give n* = n (Korn &
    Graubard 1998's n* = n at p̂ = 0 or 1); a cell with few labels for its weight, less.
    `n`: labels per cell, one row per case (or one case)."""
    n = np.atleast_2d(np.asarray(n, float))
    weight = np.asarray(weight, float)
    alpha = np.log((1 - level) / 2)
    ratio = n / weight
    lo, hi = ratio.min(axis=1), ratio.max(axis=1) * 1e6
    for _ in range(60):
        mid = np.sqrt(lo * hi)
        q = np.clip(1 - ratio / mid[:, None], 0.0, 1 - 1e-15)
        above = (n * np.log1p(-q)).sum(axis=1) > alpha
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    upper = np.clip(1 - ratio / lo[:, None], 0.0, 1.0) @ weight
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((upper > 0) & (upper < 1), alpha / np.log1p(-upper), n.sum(axis=1))
    return out if out.size > 1 else out.reshape(())


def _df_factor(labels: np.ndarray | float, df: np.ndarray | float, level: float
               ) -> np.ndarray:
    """Korn & Graubard's (1998) degrees-of-freedom factor (t_{n−1} / t_df)²."""
    from scipy.special import stdtrit  # Student's t quantile, as a ufunc

    q = 1 - (1 - level) / 2
    labels = np.maximum(np.asarray(labels, float), 2.0)
    df = np.maximum(np.asarray(df, float), 1.0)
    return (stdtrit(labels - 1, q) / stdtrit(df, q)) ** 2


def _neff(p: float, var: np.ndarray, unfloored: np.ndarray, shrunk: np.ndarray,
          labels: np.ndarray, df: np.ndarray, extreme: np.ndarray, level: float) -> np.ndarray:
    """The effective sample size of Korn & Graubard (1998), p̂(1 − p̂) / v̂ with the design's own
    variance, times the degrees-of-freedom factor; capped by the floors, p̃(1 − p̃) / v̂ with
    both shrunk alike (p̃ = Σ W_h p̃_h in the numerator, the strata's floors in v̂), so a few
    alike labels never make a stratum look certain, and the cap is never below n / deff of
    the floors themselves (a pooled p̃ over per-stratum floors overstated the design effect
    at the extremes). At p̂ = 0 or 1, where v̂ says nothing, `_extreme_n`."""
    var = np.asarray(var, float)
    if p <= 0 or p >= 1:
        return np.asarray(extreme, float) * np.ones_like(var)
    with np.errstate(divide="ignore"):
        n_eff = np.minimum(p * (1 - p) / np.asarray(unfloored, float),
                           shrunk * (1 - shrunk) / var)
    return n_eff * _df_factor(labels, df, level)


def interval(f: Fit, level: float = LEVEL) -> tuple[float, float] | None:
    """The Korn–Graubard interval of a fit: Clopper–Pearson at `_neff`; the point itself
    when its variance is 0 (every answer labelled, "these answers"); None when the variance
    cannot be estimated (fewer than 2 questions, "new questions")."""
    if np.isnan(f.var):
        return None
    if f.var <= 0:
        return f.estimate, f.estimate
    p = min(max(f.estimate, 0.0), 1.0)
    extreme = _extreme_fit(f, f.cells[1][None, :], np.array(f.questions),
                           p, level)
    n_eff = float(_neff(p, np.array(f.var), np.array(f.unfloored), np.array(f.shrunk),
                        np.array(f.labels), np.array(f.df), extreme, level))
    return beta_interval(p, n_eff, level)


def _extreme_fit(f: Fit, n: np.ndarray, asked: np.ndarray, p: float, level: float
                 ) -> np.ndarray:
    """`_extreme_n` of `f`'s cells at labels `n` (one row per case), for "new questions" at
    most the questions `asked` (every label of a question may be alike); NaN unless p̂ is 0
    or 1, where alone it is used."""
    if p not in (0.0, 1.0):
        return np.full(len(n), np.nan)
    weight = f.cells[0] / f.cells[0].sum()
    out = _extreme_n(n, weight, level)
    return out if f.estimand == "these answers" else np.minimum(out, asked)


def _projected(f: Fit, m: np.ndarray, level: float) -> tuple[np.ndarray, ...]:
    """(var, unfloored, shrunk, df, extreme_n) of `f` at each of m labels in all: each cell's
    labels scaled from now (at most its answers), its own s² as now with the floors at the new
    counts; for "new questions" the part between questions kept, the rest shrinking as 1/m.
    At m = the labels now, `f`'s own."""
    big_n, now, mean, _, raw = f.cells
    n = np.minimum(now * (m / f.labels)[:, None], big_n)
    weight = big_n / big_n.sum()
    pt = (n * mean + 1) / (n + 2)
    p = min(max(f.estimate, 0.0), 1.0)
    asked = np.minimum(f.questions * m / f.labels, f.all_questions)
    extreme = _extreme_fit(f, n, asked, p, level)
    if f.estimand == "these answers":
        fpc = np.clip(1 - n / big_n, 0.0, 1.0)
        var, unfloored = (np.where(fpc > 0, weight**2 * fpc * _spread(raw, n, big_n, mean, fl)
                                   / n, 0.0).sum(axis=1) for fl in (True, False))
        return var, unfloored, pt @ weight, np.maximum(m - len(big_n), 1), extreme
    clustered = f.between + (f.clustered - f.between) * f.labels / m
    var = np.maximum((weight**2 * _spread(raw, n, big_n, mean, True) / n).sum(axis=1),
                     clustered)
    return var, clustered, pt @ weight, np.maximum(asked - 1, 1), extreme


def labels_for(f: Fit, half: float = TARGET_HALF / 100, level: float = LEVEL) -> int | None:
    """The labels in all at which the interval the pages show (`interval`, of the fit
    projected by `_projected`: labels allocated across the strata as now) has a half-width
    of at most `half`; None when no number of the scope's answers reaches it ("new
    questions" keeps the variance between questions that labels do not remove). At the
    labels now it is the interval now, so the count is at most the labels exactly when that
    interval is within; beyond, the first count within on a geometric grid, then by
    bisection below it."""
    if f.labels < 2 or np.isnan(f.var):
        return None
    p = min(max(f.estimate, 0.0), 1.0)

    def width(m: np.ndarray) -> np.ndarray:
        var, unfloored, shrunk, df, extreme = _projected(f, m.astype(float), level)
        lo, hi = _clopper_pearson(np.full(m.size, p),
                                  _neff(p, var, unfloored, shrunk, m, df, extreme, level), level)
        return np.where(var > 0, (hi - lo) / 2, 0.0)

    low = f.labels
    if width(np.array([low]))[0] <= half:
        return low
    grid = np.unique(np.round(np.geomspace(low, int(f.cells[0].sum()), 33)).astype(int))
    ok = np.flatnonzero(width(grid) <= half)
    if not ok.size:
        return None
    low, high = int(grid[ok[0] - 1]), int(grid[ok[0]])
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if width(np.array([mid]))[0] <= half else (mid, high)
    return high


METHOD = ("stratified estimate on the judge's verdict (system × judged 5), "
          "Korn–Graubard interval")


def census(labels: int, answers: int, estimand: str) -> bool:
    """Whether every answer of a scope is labelled and the share is about these answers: the
    share is then the share itself, exact, however few answers the scope has (no interval's
    coverage to check, so no label floor)."""
    return estimand == "these answers" and labels == answers > 0


def share(frame: pd.DataFrame, y: np.ndarray, estimand: str = DEFAULT_ESTIMAND,
          level: float = LEVEL, min_labels: int = MIN_SYSTEM_LABELS,
          cannot_tell: np.ndarray | None = None, target: float = SYSTEM_TARGET_HALF) -> Share:
    """One scope's share correct with its interval (None below `min_labels` labels, with the
    reason, unless every answer is labelled: `census`) and the labels it needs for ±`target`
    points. `cannot_tell` marks sampled answers labelled only "cannot tell": left out of the
    estimate, they bound it (all wrong, all correct), and the interval spans both."""
    y = np.asarray(y, float)
    n, big_n = int((~np.isnan(y)).sum()), len(frame)
    method = METHOD + (" with the finite-population correction" if estimand == "these answers"
                       else ", variance clustered by question")
    if n == 0:
        return Share(None, None, 0, big_n, method, reason="no label yet", target=target)
    f = fit(frame, y, estimand)
    to_target = labels_for(f, target / 100, level)
    if n < min_labels and not census(n, big_n, estimand):
        return Share(f.estimate, None, n, big_n, method, to_target=to_target, target=target,
                     reason=f"too few labels for an interval ({n}; from {min_labels} on)")
    ci = interval(f, level)
    if ci is None:
        return Share(f.estimate, None, n, big_n, method, target=target,
                     reason="answers to one question only: no interval for new questions")
    lo, hi = ci
    bounds = None
    if cannot_tell is not None and cannot_tell.any():
        worst = fit(frame, np.where(cannot_tell, 0.0, y), estimand)
        best = fit(frame, np.where(cannot_tell, 1.0, y), estimand)
        bounds = (worst.estimate, best.estimate)
        if best.estimate - worst.estimate > 0.01:
            lo, hi = min(lo, interval(worst, level)[0]), max(hi, interval(best, level)[1])
    return Share(f.estimate, (lo, hi), n, big_n, method, se=float(np.sqrt(f.var)),
                 bounds=bounds, to_target=to_target, target=target)
