"""Exact threshold fits by a sorted sweep, the paper's differential-evolution fit, the objective
curve and question-level bootstrap intervals.

A rule turns a retrieval score x into a yes/no prediction of a binary outcome y:
``">"`` predicts y when x > t (the paper's k, y = [judge = 5]) and ``"<"`` predicts y when
x < t (the paper's h, y = [judge = 1]). The objective is the agreement (0–1 accuracy) of the
prediction with y; the paper's "MLE" Σ log(a·b + (1−a)(1−b) + 1e−10) is the same quantity up to
a constant factor (§3.3).

Between consecutive distinct scores u_j < u_{j+1} the agreement is constant: on [u_j, u_{j+1})
for ">" and on (u_j, u_{j+1}] for "<". The sweep evaluates every such plateau with prefix sums
(O(n log n)), merges adjacent optimal plateaus into intervals, and reports the chosen interval
[lo, hi] and its midpoint. Thresholds are restricted to `bounds` (default [0, 1]).
Tie rule: when several disjoint intervals reach the maximum, ``tie="lowest"`` (default) picks
the one with the smallest thresholds, ``tie="highest"`` the largest; `n_plateaus` says how many.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from ragdash.rundir.calibration import ThresholdFit  # the record (of calibration.json's fits)

Rule = Literal[">", "<"]
Tie = Literal["lowest", "highest"]
_BLOCK = 50  # bootstrap resamples processed at once (bounds memory to ~50 x n values)


def _check(x: np.ndarray, y: np.ndarray, rule: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y).ravel().astype(bool)
    if rule not in (">", "<"):
        raise ValueError(f"rule must be '>' or '<', got {rule!r}")
    if x.size == 0:
        raise ValueError("cannot fit a threshold on empty input (no scored and judged pairs)")
    if x.size != y.size:
        raise ValueError(f"x and y_positive differ in length ({x.size} vs {y.size})")
    if not np.isfinite(x).all():
        raise ValueError(f"x holds {int((~np.isfinite(x)).sum())} NaN/inf retrieval scores")
    return x, y


def _plateaus(u: np.ndarray, rule: str, bounds: tuple[float, float]):
    """lo, hi and non-emptiness of the m+1 plateaus j = 0..m within `bounds`."""
    b0, b1 = bounds
    left = np.concatenate([[-np.inf], u])
    right = np.concatenate([u, [np.inf]])
    lo, hi = np.maximum(left, b0), np.minimum(right, b1)
    # ">": t in [left, right); "<": t in (left, right]
    valid = (lo < right) & (lo <= b1) if rule == ">" else (hi > left) & (hi >= b0)
    return lo, hi, valid


def _agreement(pos_le: np.ndarray, neg_le: np.ndarray, rule: str) -> np.ndarray:
    """Agreement per plateau from cumulative positive/negative counts at or below u_j."""
    if rule == ">":  # predicted positive: x > u_j
        return neg_le + (pos_le[..., -1:] - pos_le)
    return pos_le + (neg_le[..., -1:] - neg_le)  # predicted positive: x <= u_j (< t)


def _select(agree: np.ndarray, valid: np.ndarray, tie: str):
    """(start, end, n_runs) of the chosen run of optimal plateaus, per row of `agree`."""
    a = np.where(valid, agree, -1)
    opt = a == a.max(axis=1, keepdims=True)
    idx = np.arange(a.shape[1])
    if tie == "lowest":
        start = opt.argmax(axis=1)
        stop = np.where(~opt & (idx >= start[:, None]), idx, a.shape[1]).min(axis=1)
        end = stop - 1
    elif tie == "highest":
        end = a.shape[1] - 1 - opt[:, ::-1].argmax(axis=1)
        start = np.where(~opt & (idx <= end[:, None]), idx, -1).max(axis=1) + 1
    else:
        raise ValueError(f"tie must be 'lowest' or 'highest', got {tie!r}")
    runs = opt[:, 0].astype(int) + (opt[:, 1:] & ~opt[:, :-1]).sum(axis=1)
    return start, end, runs


def _counts(x: np.ndarray, y: np.ndarray):
    u, inv = np.unique(x, return_inverse=True)
    pos = np.bincount(inv, weights=y, minlength=u.size)
    tot = np.bincount(inv, minlength=u.size)
    pos_le = np.concatenate([[0], np.cumsum(pos)]).astype(np.int64)
    neg_le = np.concatenate([[0], np.cumsum(tot)]).astype(np.int64) - pos_le
    return u, pos_le, neg_le


def _sweep(x, y, rule, bounds, tie) -> ThresholdFit:
    u, pos_le, neg_le = _counts(x, y)
    lo, hi, valid = _plateaus(u, rule, bounds)
    agree = _agreement(pos_le, neg_le, rule)
    start, end, runs = _select(agree[None, :], valid, tie)
    s, e = int(start[0]), int(end[0])
    return ThresholdFit(rule=rule, threshold=float((lo[s] + hi[e]) / 2), lo=float(lo[s]),
                        hi=float(hi[e]), accuracy=float(agree[s] / x.size), n=int(x.size),
                        n_positive=int(y.sum()), n_plateaus=int(runs[0]))


def agreement_at(x: np.ndarray, y_positive: np.ndarray, thresholds, rule: Rule = ">"
                 ) -> np.ndarray:
    """Exact share of pairs where the rule at each threshold agrees with `y_positive`."""
    x, y = _check(x, y_positive, rule)
    pos, neg = np.sort(x[y]), np.sort(x[~y])
    t = np.asarray(thresholds, dtype=float)
    if rule == ">":  # agree: negatives with x <= t, positives with x > t
        hits = np.searchsorted(neg, t, "right") + pos.size - np.searchsorted(pos, t, "right")
    else:  # agree: positives with x < t, negatives with x >= t
        hits = np.searchsorted(pos, t, "left") + neg.size - np.searchsorted(neg, t, "left")
    return hits / x.size


def _de(x, y, rule, bounds, seed, decimals) -> ThresholdFit:
    """The paper's fit: differential evolution (scipy defaults, seeded), rounded."""
    from scipy.optimize import differential_evolution

    n = x.size

    def disagreements(t: np.ndarray) -> float:  # = paper's −Σlog(...) / 23.03
        return float(n * (1.0 - agreement_at(x, y, t[0], rule)))

    res = differential_evolution(disagreements, [bounds], rng=seed)
    t = float(np.clip(round(float(res.x[0]), decimals), *bounds))
    u, pos_le, neg_le = _counts(x, y)
    lo, hi, valid = _plateaus(u, rule, bounds)
    agree = _agreement(pos_le, neg_le, rule)
    j = int(np.searchsorted(u, t, "right" if rule == ">" else "left"))
    same = valid & (agree == agree[j])
    idx = np.arange(agree.size)
    s = int(np.where(~same & (idx < j), idx, -1).max()) + 1
    e = int(np.where(~same & (idx > j), idx, agree.size).min()) - 1
    best = _sweep(x, y, rule, bounds, "lowest")
    return ThresholdFit(rule=rule, threshold=t, lo=float(lo[s]), hi=float(hi[e]),
                        accuracy=float(agree[j] / n), n=int(n), n_positive=int(y.sum()),
                        method="de", n_plateaus=best.n_plateaus)


def fit_threshold(x, y_positive, rule: Rule = ">", method: str = "sweep",
                  bounds: tuple[float, float] = (0.0, 1.0), tie: Tie = "lowest", seed: int = 0,
                  decimals: int = 2) -> ThresholdFit:
    """Fit one threshold: exact sorted sweep (`method="sweep"`) or the paper's seeded
    differential evolution rounded to `decimals` (`method="de"`)."""
    x, y = _check(x, y_positive, rule)
    if method == "sweep":
        return _sweep(x, y, rule, bounds, tie)
    if method == "de":
        return _de(x, y, rule, bounds, seed, decimals)
    raise ValueError(f"method must be 'sweep' or 'de', got {method!r}")


def objective_curve(x, y_positive, rule: Rule = ">", grid=None,
                    bounds: tuple[float, float] = (0.0, 1.0)) -> pd.DataFrame:
    """Exact agreement (0–1) over thresholds: DataFrame(threshold, agreement).

    Without `grid`, the thresholds are the bounds, every distinct score between them and the
    midpoints between consecutive ones of these: the whole step function, with its value at each
    jump and on each plateau.
    """
    x, y = _check(x, y_positive, rule)
    if grid is None:
        u = np.unique(np.concatenate([list(bounds), x]))
        u = u[(u >= bounds[0]) & (u <= bounds[1])]
        grid = np.unique(np.concatenate([u, (u[1:] + u[:-1]) / 2]))
    grid = np.asarray(grid, dtype=float)
    return pd.DataFrame({"threshold": grid, "agreement": agreement_at(x, y, grid, rule)})


def bootstrap_ci(x, y_positive, groups, rule: Rule = ">", n_boot: int = 200, seed: int = 0,
                 level: float = 0.95, bounds: tuple[float, float] = (0.0, 1.0),
                 tie: Tie = "lowest") -> dict:
    """Percentile bootstrap interval of the swept threshold, resampling whole `groups` (question
    ids) with replacement so that all pairs of a question stay together.

    Returns {lo, hi, level, n_boot, seed, samples (array of the n_boot refitted thresholds)}.
    """
    x, y = _check(x, y_positive, rule)
    groups = np.asarray(groups).ravel()
    if groups.size != x.size:
        raise ValueError(f"groups and x differ in length ({groups.size} vs {x.size})")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"need n_boot >= 1 and 0 < level < 1 (got {n_boot}, {level})")
    gidx, uniq = pd.factorize(groups)
    n_groups = uniq.size
    order = np.argsort(x, kind="stable")
    xs, ys, gs = x[order], y[order].astype(np.int64), gidx[order]
    u, first = np.unique(xs, return_index=True)
    ends = np.append(first[1:], xs.size) - 1  # last position of each distinct value
    lo, hi, valid = _plateaus(u, rule, bounds)
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    for b0 in range(0, n_boot, _BLOCK):
        b = min(_BLOCK, n_boot - b0)
        draws = rng.integers(0, n_groups, size=(b, n_groups))
        counts = np.bincount((draws + np.arange(b)[:, None] * n_groups).ravel(),
                             minlength=b * n_groups).reshape(b, n_groups)
        w = counts[:, gs]
        zero = np.zeros((b, 1), dtype=np.int64)
        pos_le = np.hstack([zero, np.cumsum(w * ys, axis=1)[:, ends]])
        neg_le = np.hstack([zero, np.cumsum(w, axis=1)[:, ends]]) - pos_le
        start, end, _ = _select(_agreement(pos_le, neg_le, rule), valid, tie)
        out[b0:b0 + b] = (lo[start] + hi[end]) / 2
    alpha = (1.0 - level) / 2
    q_lo, q_hi = np.quantile(out, [alpha, 1.0 - alpha])
    return {"lo": float(q_lo), "hi": float(q_hi), "level": float(level), "n_boot": int(n_boot),
            "seed": int(seed), "samples": out}
