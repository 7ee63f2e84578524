"""Score_IR across questions: mean curves over the token budget N with their intervals, the
paper's Table 3.1 (§3.1), breakdowns by question metadata, the best retriever, and downsampling
of sorted curves for plotting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.frames import at_budget, order_systems
from ragdash.calibration.survey import beta_interval


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


def mean_curves(ir: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean Score_IR per (retriever, budget) with its interval over questions (`mean_interval`).

    Columns: retriever, budget, mean, lo, hi, n.
    """
    rows = []
    for ret, g in ir.groupby("retriever", sort=False):
        m = g.pivot_table(index="qid", columns="budget", values="score", aggfunc="first")
        m = m.sort_index(axis=1).ffill(axis=1).fillna(0.0)
        values = m.to_numpy()
        n = len(values)
        lo, hi = mean_interval(values, (0.0, 1.0), level)
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
