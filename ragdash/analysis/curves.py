"""Score_IR across questions: mean curves over the token budget N with bootstrap bands, the
paper's Table 3.1 (§3.1), breakdowns by question metadata, the best retriever, and downsampling
of sorted curves for plotting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.frames import at_budget, order_systems
from ragdash.calibration.survey import beta_interval


def bootstrap_band(values: np.ndarray, rng: np.random.Generator, n_boot: int = 1000,
                   level: float = 0.95, bounds: tuple[float, float] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap band (lo, hi) of the column means of `values` (questions × columns),
    resampling rows: one resample of questions is shared by all columns.

    With `bounds` (the values' range), a column whose every question sits at one end has no
    percentile width (0.000 [0.000–0.000] for a system that never matches exactly); it gets
    the exact one-sided bound instead, Clopper–Pearson's for 0 of n: a question's value is
    above the low end with probability at least the (scaled) mean, so n questions all at it
    are as unlikely as n binomial failures."""
    n = len(values)
    counts = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)
    boots = counts @ values / n
    alpha = (1 - level) / 2
    lo, hi = np.quantile(boots, [alpha, 1 - alpha], axis=0)
    if bounds is not None and n:
        low_end, high_end = bounds
        reach = (high_end - low_end) * beta_interval(0.0, n, level)[1]
        hi = np.where((values == low_end).all(axis=0), low_end + reach, hi)
        lo = np.where((values == high_end).all(axis=0), high_end - reach, lo)
    return lo, hi


def bootstrap_curves(ir: pd.DataFrame, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0) -> pd.DataFrame:
    """Mean Score_IR per (retriever, budget) with a percentile bootstrap band over questions.

    Columns: retriever, budget, mean, lo, hi, n. One resample of questions is shared by all
    budgets of a retriever, so each band is a band of curves.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for ret, g in ir.groupby("retriever", sort=False):
        m = g.pivot_table(index="qid", columns="budget", values="score", aggfunc="first")
        m = m.sort_index(axis=1).ffill(axis=1).fillna(0.0)
        values = m.to_numpy()
        n = len(values)
        lo, hi = bootstrap_band(values, rng, n_boot, level, bounds=(0.0, 1.0))
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
