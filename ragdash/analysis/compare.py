"""Paired comparisons of two score columns over the questions both have (two retrievers of a
run, or two (run, retriever) pairs of runs on the same dataset): win/tie/loss counts, the mean
difference with its interval (`survey.mean_interval`), the Wilcoxon signed-rank test with Holm
adjustment, the mean difference across budgets with its band, and the questions where they differ
most."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.frames import score_matrix
from ragdash.calibration.survey import mean_interval

TIE = 1e-9
"""Two Score_IR values closer than this are a tie."""
DIFFERENCES = (-1.0, 1.0)
"""The range of a difference of two scores in [0, 1]."""
MIN_DIFFERING = 2
"""Questions that must differ (not tie) before the Wilcoxon signed-rank test is run."""


def differences(a: pd.Series, b: pd.Series) -> np.ndarray:
    """a − b on the questions (index values) both score, in `a`'s order."""
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    return (both["a"] - both["b"]).to_numpy(dtype=float)


def counts(d: np.ndarray, tol: float = TIE) -> dict:
    """How many differences are positive (win), zero within `tol` (tie) or negative (loss)."""
    return {"win": int((d > tol).sum()), "tie": int((np.abs(d) <= tol).sum()),
            "loss": int((d < -tol).sum()), "n": int(len(d))}


def wilcoxon_test(d: np.ndarray) -> dict:
    """Wilcoxon signed-rank test of paired differences (zero differences dropped, 'wilcox').

    Returns {statistic, pvalue, n, n_nonzero, mean_diff, median_diff}; a difference within `TIE`
    of zero is a tie (as `counts` says); pvalue is None with fewer than `MIN_DIFFERING`
    non-tied differences.
    """
    nz = int((np.abs(d) > TIE).sum())
    out = {"statistic": None, "pvalue": None, "n": int(len(d)), "n_nonzero": nz,
           "mean_diff": float(d.mean()) if len(d) else float("nan"),
           "median_diff": float(np.median(d)) if len(d) else float("nan")}
    if nz >= MIN_DIFFERING:
        out.update(zip(("statistic", "pvalue"), _signed_rank(d[np.abs(d) > TIE]), strict=True))
    return out


EXACT_BELOW = 14
"""SciPy's own limit: with tied |differences| the p-value is exact (all 2^n signs) below it."""


def _signed_rank(d: np.ndarray) -> tuple[float, float]:
    """SciPy's Wilcoxon statistic and two-sided p-value of non-zero differences `d`. With tied
    |d| and fewer than `EXACT_BELOW` of them SciPy enumerates every sign pattern by calling its
    statistic once each (4.6 s at 13 differences); here the same permutation test runs with
    the statistic vectorised over the patterns (the ranks of |d| do not change when signs flip),
    which gives SciPy's p-value in milliseconds."""
    from scipy.stats import permutation_test, rankdata, wilcoxon

    ranks = rankdata(np.abs(d))
    if len(d) >= EXACT_BELOW or len(np.unique(ranks)) == len(d):
        res = wilcoxon(d, zero_method="wilcox")
        return float(res.statistic), float(res.pvalue)
    plus = float(ranks[d > 0].sum())
    p = permutation_test((d,), lambda x, axis: (ranks * (x > 0)).sum(axis=axis),
                         permutation_type="samples", vectorized=True,
                         n_resamples=np.inf).pvalue
    return min(plus, float(ranks.sum()) - plus), float(p)


def mean_ci(d: np.ndarray, level: float = 0.95, bounds: tuple[float, float] = DIFFERENCES
            ) -> tuple[float, float]:
    """Interval of the mean of `d` over questions (`survey.mean_interval`; its values within
    `bounds`; NaN when empty)."""
    lo, hi = mean_interval(np.asarray(d, dtype=float).reshape(-1, 1), bounds, level)
    return float(lo[0]), float(hi[0])


def paired(a: pd.Series, b: pd.Series, tol: float = TIE, level: float = 0.95) -> dict:
    """Everything about a − b over the questions both score (two scores in [0, 1]): win/tie/loss
    and n, the Wilcoxon test (statistic, pvalue, n_nonzero), mean_diff with its interval (lo,
    hi) and median_diff."""
    d = differences(a, b)
    lo, hi = mean_ci(d, level)
    return {**counts(d, tol), **wilcoxon_test(d), "lo": lo, "hi": hi}


def win_tie_loss(ir: pd.DataFrame, a: str, b: str, budget: int, tol: float = TIE) -> dict:
    """How often `a` scores above, equal to (within `tol`) or below `b` on the same question."""
    m = score_matrix(ir, budget)
    return counts(differences(m[a], m[b]), tol)


def paired_test(ir: pd.DataFrame, a: str, b: str, budget: int) -> dict:
    """Wilcoxon signed-rank test of retriever a − b at `budget` over questions (see
    `wilcoxon_test`)."""
    m = score_matrix(ir, budget)
    return wilcoxon_test(differences(m[a], m[b]))


PAIR_COLUMNS = ["a", "b", "win", "tie", "loss", "n", "mean_diff", "lo", "hi", "median_diff",
                "pvalue", "p_holm"]


def pairwise_columns(matrix: pd.DataFrame, pairs: Iterable[tuple[str, str]],
                     level: float = 0.95) -> pd.DataFrame:
    """`paired` for each (a, b) of columns of a questions × systems matrix, with Holm-adjusted
    p-values over the pairs compared: a, b, win, tie, loss, n, mean_diff, lo, hi, median_diff,
    pvalue, p_holm."""
    rows = [{"a": a, "b": b, **paired(matrix[a], matrix[b], level=level)} for a, b in pairs]
    out = pd.DataFrame(rows, columns=PAIR_COLUMNS[:-1])
    out["p_holm"] = holm(out["pvalue"].tolist())
    return out


def pairwise(ir: pd.DataFrame, retrievers: Sequence[str], budget: int) -> pd.DataFrame:
    """Every pair of `retrievers` at `budget`: win/tie/loss, mean difference (with its
    interval), Wilcoxon p and Holm-adjusted p."""
    return pairwise_columns(score_matrix(ir, budget), itertools.combinations(retrievers, 2))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values (None stays None)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not np.isnan(p)]
    order = sorted(idx, key=lambda i: pvalues[i])
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * float(pvalues[i])))
        out[i] = running
    return out


def difference_curve(ir: pd.DataFrame, a: str, b: str, level: float = 0.95) -> pd.DataFrame:
    """Mean paired difference a − b per budget with its band (`mean_ci` per budget): budget,
    mean, lo, hi, n. At a budget where every question ties, no band (lo, hi NaN): there is
    nothing to test, and an interval beside "every question ties" would read as a result."""
    pa = ir[ir["retriever"] == a].pivot_table(index="qid", columns="budget", values="score")
    pb = ir[ir["retriever"] == b].pivot_table(index="qid", columns="budget", values="score")
    d = (pa - pb).dropna(how="any").sort_index(axis=1)
    values = d.to_numpy()
    n = len(values)
    if n == 0:
        return pd.DataFrame(columns=["budget", "mean", "lo", "hi", "n"])
    lo, hi = mean_interval(values, DIFFERENCES, level)
    tied = (values == 0).all(axis=0)
    lo, hi = np.where(tied, np.nan, lo), np.where(tied, np.nan, hi)
    return pd.DataFrame({"budget": [int(c) for c in d.columns], "mean": values.mean(axis=0),
                         "lo": lo, "hi": hi, "n": n})


def largest_differences(ir: pd.DataFrame, examples: pd.DataFrame, a: str, b: str, budget: int,
                        n: int = 10) -> pd.DataFrame:
    """The `n` questions where a − b is largest in absolute value: qid, question, a, b, diff."""
    m = score_matrix(ir, budget)[[a, b]].dropna()
    m["diff"] = m[a] - m[b]
    m = m.reindex(m["diff"].abs().sort_values(ascending=False, kind="stable").index).head(n)
    q = examples.assign(qid=examples["qid"].astype(str)).set_index("qid")["question"]
    m.insert(0, "question", q.reindex(m.index).to_numpy())
    return m.reset_index()
