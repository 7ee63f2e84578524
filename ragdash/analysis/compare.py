"""Paired comparisons of two retrievers over the same questions: win/tie/loss counts, the
Wilcoxon signed-rank test with Holm adjustment, the mean difference across budgets with a
bootstrap band, and the questions where they differ most."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.curves import bootstrap_band
from ragdash.analysis.frames import score_matrix


def win_tie_loss(ir: pd.DataFrame, a: str, b: str, budget: int, tol: float = 1e-9) -> dict:
    """How often `a` scores above, equal to (within `tol`) or below `b` on the same question."""
    m = score_matrix(ir, budget)[[a, b]].dropna()
    d = m[a] - m[b]
    return {"win": int((d > tol).sum()), "tie": int((d.abs() <= tol).sum()),
            "loss": int((d < -tol).sum()), "n": int(len(d))}


def paired_test(ir: pd.DataFrame, a: str, b: str, budget: int) -> dict:
    """Wilcoxon signed-rank test of a − b over questions (zero differences dropped, 'wilcox').

    Returns {statistic, pvalue, n, n_nonzero, mean_diff, median_diff}; pvalue is None when every
    difference is zero or there are fewer than 2 non-zero differences.
    """
    from scipy.stats import wilcoxon

    m = score_matrix(ir, budget)[[a, b]].dropna()
    d = (m[a] - m[b]).to_numpy()
    nz = int((np.abs(d) > 1e-12).sum())
    out = {"statistic": None, "pvalue": None, "n": int(len(d)), "n_nonzero": nz,
           "mean_diff": float(d.mean()) if len(d) else float("nan"),
           "median_diff": float(np.median(d)) if len(d) else float("nan")}
    if nz >= 2:
        res = wilcoxon(d[np.abs(d) > 1e-12], zero_method="wilcox")
        out.update(statistic=float(res.statistic), pvalue=float(res.pvalue))
    return out


def pairwise(ir: pd.DataFrame, retrievers: Sequence[str], budget: int) -> pd.DataFrame:
    """Every pair of `retrievers`: win/tie/loss, mean difference, Wilcoxon p and Holm-adjusted p."""
    rows = []
    for a, b in itertools.combinations(retrievers, 2):
        w = win_tie_loss(ir, a, b, budget)
        t = paired_test(ir, a, b, budget)
        rows.append({"a": a, "b": b, **w, "mean_diff": t["mean_diff"],
                     "median_diff": t["median_diff"], "pvalue": t["pvalue"]})
    out = pd.DataFrame(rows, columns=["a", "b", "win", "tie", "loss", "n", "mean_diff",
                                      "median_diff", "pvalue"])
    out["p_holm"] = holm(out["pvalue"].tolist())
    return out


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


def difference_curve(ir: pd.DataFrame, a: str, b: str, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0) -> pd.DataFrame:
    """Mean paired difference a − b per budget with a bootstrap band: budget, mean, lo, hi, n."""
    pa = ir[ir["retriever"] == a].pivot_table(index="qid", columns="budget", values="score")
    pb = ir[ir["retriever"] == b].pivot_table(index="qid", columns="budget", values="score")
    d = (pa - pb).dropna(how="any").sort_index(axis=1)
    values = d.to_numpy()
    n = len(values)
    if n == 0:
        return pd.DataFrame(columns=["budget", "mean", "lo", "hi", "n"])
    lo, hi = bootstrap_band(values, np.random.default_rng(seed), n_boot, level)
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
