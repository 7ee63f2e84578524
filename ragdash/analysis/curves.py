"""Score_IR across questions: mean curves over the token budget N with their intervals
(`calibration.survey.mean_interval`), the paper's Table 3.1 (§3.1), breakdowns by question
metadata, the best retriever, and downsampling of sorted curves for plotting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.frames import at_budget, order_systems
from ragdash.calibration.survey import beta_interval, mean_interval


def mean_interval_at_ends(values: np.ndarray, level: float = 0.95
                          ) -> tuple[np.ndarray, np.ndarray]:
    """`mean_interval` of each column of Score_IRs (questions × columns), except a column whose
    every question scores 1 (or 0): there the exact bound, Clopper–Pearson at n. For a score in
    [0, 1] with mean μ, P(n questions all score 1) = P(X = 1)^n ≤ μ^n, so the bound
    μ ≥ (α/2)^(1/n) holds whatever the scores' distribution: 40 questions at 1.0 give
    [0.912, 1], never zero width and never the 0.82 of the general floor."""
    lo, hi = mean_interval(values, (0.0, 1.0), level)
    n = len(values)
    if n:
        for j in range(values.shape[1]):
            col = values[:, j]
            if col.min() == col.max() and col[0] in (0.0, 1.0):
                lo[j], hi[j] = beta_interval(float(col[0]), float(n), level)
    return lo, hi


def mean_curves(ir: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean Score_IR per (retriever, budget) with its interval over questions
    (`mean_interval_at_ends`).

    Columns: retriever, budget, mean, lo, hi, n.
    """
    rows = []
    for ret, g in ir.groupby("retriever", sort=False):
        m = g.pivot_table(index="qid", columns="budget", values="score", aggfunc="first")
        m = m.sort_index(axis=1).ffill(axis=1).fillna(0.0)
        values = m.to_numpy()
        n = len(values)
        lo, hi = mean_interval_at_ends(values, level)
        for j, b in enumerate(m.columns):
            rows.append((ret, int(b), float(values[:, j].mean()), float(lo[j]), float(hi[j]), n))
    return pd.DataFrame(rows, columns=["retriever", "budget", "mean", "lo", "hi", "n"])


def summary_table(ir: pd.DataFrame, order: Sequence[str] = (), mode: str = "corrected"
                  ) -> pd.DataFrame:
    """Mean Score_IR per budget × retriever (the paper's Table 3.1), retrievers in display order
    (`order_systems(…, order)`: pass the retrievers in their configured order to keep it).

    Corrected mode averages every question (a short context keeps its whole-context score);
    reference mode averages only the questions whose context reaches N, as the original code did.
    A retriever with no row left keeps an all-NaN column.
    """
    data = ir[ir["reached"]] if mode == "reference" else ir
    table = data.pivot_table(index="budget", columns="retriever", values="score", aggfunc="mean")
    return table.reindex(columns=order_systems(ir["retriever"], order))


def breakdown(ir: pd.DataFrame, examples: pd.DataFrame, by: str, budget: int) -> pd.DataFrame:
    """Mean Score_IR at `budget` per (group of `by`, retriever): columns group, retriever, mean,
    sem, n."""
    at = at_budget(ir, budget)
    meta = examples[["qid", by]].assign(qid=examples["qid"].astype(str))
    df = at.merge(meta, on="qid", how="left")
    df[by] = df[by].astype(str).where(df[by].notna(), "(none)")
    g = df.groupby([by, "retriever"], sort=True)["score"]
    out = g.agg(["mean", "sem", "count"]).reset_index()
    return out.rename(columns={by: "group", "count": "n"})


def best_retriever(ir: pd.DataFrame, budget: int) -> tuple[list[str], float]:
    """The retrievers with the highest mean Score_IR at `budget` (several on a tie, to 1e-9),
    and that mean."""
    means = at_budget(ir, budget).groupby("retriever", sort=False)["score"].mean()
    top = float(means.max())
    return [str(r) for r, m in means.items() if m >= top - 1e-9], top


def downsample_sorted(values: np.ndarray, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """(index, value) of a sorted curve at ≤ `points` evenly spaced ranks (ends included)."""
    n = len(values)
    if n <= points:
        return np.arange(n), values
    idx = np.unique(np.linspace(0, n - 1, points).round().astype(int))
    return idx, values[idx]
