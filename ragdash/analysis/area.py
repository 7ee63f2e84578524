"""A headline that depends on no budget the user never chose: the area under each retriever's
Score_IR curve over the run's budgets N (the paper's §2.2 curves, Table 3.1), with its
interval over questions (`survey.mean_interval`), and the budgets where the leader's lead over
the runner-up is significant.

The area is the trapezoid rule over N divided by the budget range, i.e. the curve's mean height
in [0, 1]. It is linear in the scores, so the area of the mean curve is the mean of the
questions' areas, and the interval is over those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragdash.analysis import compare
from ragdash.analysis.frames import order_systems, score_matrix

ALPHA = 0.05
"""A lead is significant at a budget when its Holm-adjusted Wilcoxon p-value is below this."""


def _weights(budgets: Sequence[float]) -> np.ndarray:
    """Trapezoid weights over sorted budgets, summing to 1 (one budget: weight 1)."""
    x = np.asarray(budgets, dtype=float)
    if len(x) == 1 or x[-1] == x[0]:
        return np.full(len(x), 1 / len(x))
    w = np.zeros(len(x))
    w[:-1] += np.diff(x) / 2
    w[1:] += np.diff(x) / 2
    return w / (x[-1] - x[0])


def curve_area(budgets: Sequence[float], means: Sequence[float]) -> float:
    """The area under a Score_IR curve over the budget range, in [0, 1] (module docstring); NaN
    without a budget."""
    x, y = np.asarray(budgets, dtype=float), np.asarray(means, dtype=float)
    if len(x) == 0:
        return float("nan")
    order = np.argsort(x)
    return float(_weights(x[order]) @ y[order])


def question_areas(ir: pd.DataFrame) -> pd.DataFrame:
    """Each question's area (rows: qid, columns: retriever), over the budgets every retriever
    scored for it; a question some retriever lacks a budget of is left out."""
    wide = ir.pivot_table(index="qid", columns=["retriever", "budget"], values="score")
    wide = wide.dropna(how="any")
    budgets = sorted({int(b) for b in wide.columns.get_level_values("budget")})
    w = _weights(budgets)
    return pd.DataFrame({r: wide[r][budgets].to_numpy(dtype=float) @ w
                         for r in wide.columns.get_level_values("retriever").unique()},
                        index=wide.index)


def area_table(ir: pd.DataFrame, order: Sequence[str] = (), level: float = 0.95
               ) -> pd.DataFrame:
    """retriever, area, lo, hi (its interval over questions), n; largest area first."""
    areas = question_areas(ir)
    rows = []
    for r in order_systems(areas.columns, order):
        lo, hi = compare.mean_ci(areas[r].to_numpy(), level, (0.0, 1.0))
        rows.append({"retriever": r, "area": float(areas[r].mean()), "lo": lo, "hi": hi,
                     "n": len(areas)})
    out = pd.DataFrame(rows, columns=["retriever", "area", "lo", "hi", "n"])
    return out.sort_values("area", ascending=False, kind="stable").reset_index(drop=True)


def lead_by_budget(ir: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """a − b per budget: budget, mean_diff, win, tie, loss, n, pvalue, p_holm (Holm over the
    budgets), significant (a leads with p_holm < ALPHA)."""
    rows = []
    for budget in sorted({int(x) for x in ir["budget"]}):
        m = score_matrix(ir, budget)
        d = compare.differences(m[a], m[b])
        rows.append({"budget": budget, **compare.counts(d), **compare.wilcoxon_test(d)})
    out = pd.DataFrame(rows)
    out["p_holm"] = compare.holm(out["pvalue"].tolist())
    out["significant"] = [p is not None and p < ALPHA and diff > 0
                          for p, diff in zip(out["p_holm"], out["mean_diff"], strict=True)]
    return out[["budget", "mean_diff", "win", "tie", "loss", "n", "pvalue", "p_holm",
                "significant"]]


def ranges(budgets: Sequence[int], among: Sequence[int]) -> str:
    """`budgets` as runs of consecutive entries of `among` ("200–800, 2,000")."""
    chosen, runs = set(budgets), []
    run: list[int] = []
    for b in sorted(among):
        if b in chosen:
            run.append(b)
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return ", ".join(f"{r[0]:,}" if len(r) == 1 else f"{r[0]:,}–{r[-1]:,}" for r in runs)


@dataclass(frozen=True)
class Headline:
    """Who leads by area, by how much, and at which budgets the lead is significant."""

    areas: pd.DataFrame  # area_table
    leader: str
    runner_up: str | None
    lead: float | None  # mean paired difference of areas, leader − runner-up
    lead_lo: float | None
    lead_hi: float | None
    by_budget: pd.DataFrame | None  # lead_by_budget(leader, runner_up)

    @property
    def significant(self) -> list[int]:
        if self.by_budget is None:
            return []
        return [int(b) for b in self.by_budget.loc[self.by_budget["significant"], "budget"]]

    @property
    def told_apart(self) -> bool:
        """Whether the leader is told apart from the runner-up (the interval of the paired lead
        excludes zero), or has none."""
        return self.runner_up is None or (self.lead_lo is not None and self.lead_lo > 0)

    @property
    def all_tied(self) -> bool:
        """Whether the leader and the runner-up score the same on every question at every
        budget: nothing to test, and no interval of their difference to show."""
        bb = self.by_budget
        return bb is not None and len(bb) > 0 and bool((bb["tie"] == bb["n"]).all())

    @property
    def tied(self) -> list[int]:
        """Budgets where every question ties."""
        if self.by_budget is None:
            return []
        bb = self.by_budget
        return [int(b) for b in bb.loc[bb["tie"] == bb["n"], "budget"]]


def headline(ir: pd.DataFrame, order: Sequence[str] = ()) -> Headline:
    """The area leader, the runner-up, the paired lead with its interval, per-budget tests."""
    areas = area_table(ir, order)
    leader = str(areas["retriever"].iloc[0])
    if len(areas) < 2:
        return Headline(areas, leader, None, None, None, None, None)
    runner = str(areas["retriever"].iloc[1])
    q = question_areas(ir)
    d = (q[leader] - q[runner]).to_numpy()
    lo, hi = compare.mean_ci(d)
    return Headline(areas, leader, runner, float(d.mean()), lo, hi,
                    lead_by_budget(ir, leader, runner))


def sentences(h: Headline, name=str) -> list[str]:
    """The headline in words, every number from `h` (`name` turns a retriever into a label)."""
    budgets = sorted({int(b) for b in h.by_budget["budget"]}) if h.by_budget is not None else []
    top = h.areas.iloc[0]
    span = f"N = {ranges(budgets, budgets)}" if budgets else "the run's budgets"
    area = (f"{top['area']:.3f} (95% CI {top['lo']:.3f}–{top['hi']:.3f}, {int(top['n'])} "
            "questions)")
    if h.runner_up is None:
        return [f"Over {span}, {name(h.leader)}'s area under its Score_IR curve is {area}."]
    second = h.areas.iloc[1]
    if h.all_tied:  # an interval beside "every question ties" would be no result
        return [f"Over {span}, {name(h.leader)} and {name(h.runner_up)} score the same on "
                "every question at every budget: nothing tells them apart, so no test is run.",
                f"The area under each one's Score_IR curve is {area}."]
    lead = f"{h.lead:+.3f} (95% CI {h.lead_lo:+.3f} to {h.lead_hi:+.3f})"
    if h.told_apart:
        out = [f"Over {span}, {name(h.leader)} has the largest area under its Score_IR curve: "
               f"{area}.", f"{name(h.runner_up)} follows with {second['area']:.3f}; the paired "
               f"lead is {lead}, a lead whose interval excludes zero."]
    else:  # no ranking in words that the numbers do not support
        out = [f"Over {span}, {name(h.leader)} and {name(h.runner_up)} are not told apart "
               f"overall: areas under their Score_IR curves {area} and {second['area']:.3f}; "
               f"the paired difference is {lead}, an interval that includes zero."]
    sig, tied = h.significant, h.tied
    if sig:
        out.append(f"The difference between {name(h.leader)} and {name(h.runner_up)} is "
                   f"significant at N = {ranges(sig, budgets)} (Wilcoxon, Holm-adjusted "
                   f"p < {ALPHA}) and not at the other budgets.")
    else:
        out.append(f"At no single budget is the difference between {name(h.leader)} and "
                   f"{name(h.runner_up)} significant (Wilcoxon, Holm-adjusted p < {ALPHA}).")
    if tied:
        out.append(f"At N = {ranges(tied, budgets)} every question ties: both retrievers "
                   "score the same, so a headline at those budgets cannot tell them apart.")
    return out


def leader_card(h: Headline, name=str) -> tuple[str, str, str]:
    """(title, value, caption) of the run's top card: "Best retriever" only when told apart
    from the runner-up; otherwise a tie, with the difference and its interval."""
    top = h.areas.iloc[0]
    area = f"area {top['area']:.3f} [{top['lo']:.3f}, {top['hi']:.3f}]"
    if h.runner_up is None:
        return "Best retriever over all budgets", name(h.leader), area
    if h.all_tied:
        return ("Largest area over all budgets", f"{name(h.leader)} ≈ {name(h.runner_up)}",
                f"tie: difference {h.lead:+.3f}, every question ties at every budget")
    diff = f"{h.lead:+.3f} [{h.lead_lo:+.3f}, {h.lead_hi:+.3f}]"
    if h.told_apart:
        return ("Best retriever over all budgets", name(h.leader),
                f"{area} · {diff} vs {name(h.runner_up)}")
    return ("Largest area over all budgets", f"{name(h.leader)} ≈ {name(h.runner_up)}",
            f"tie: difference {diff}, not told apart")


def pair_verdict(ir: pd.DataFrame, a: str, b: str, budget: int, name=str) -> str:
    """Whether a and b differ at `budget`, by the Overview's policy: Wilcoxon on the paired
    differences, Holm-adjusted over the run's budgets."""
    table = lead_by_budget(ir, a, b)
    row = table[table["budget"] == budget]
    k = len(table)
    if row.empty or row["p_holm"].iloc[0] is None or pd.isna(row["p_holm"].iloc[0]):
        from ragdash.analysis.sentences import paired_test_phrase

        counts = row.iloc[0].to_dict() if len(row) else {"win": 0, "loss": 0, "n": 0}
        return f"At N = {budget:,}, {paired_test_phrase({**counts, 'pvalue': None})}."
    p, diff = float(row["p_holm"].iloc[0]), float(row["mean_diff"].iloc[0])
    policy = f"Wilcoxon, Holm-adjusted over the run's {k} budgets"
    if p < ALPHA and diff != 0:
        better = a if diff > 0 else b
        return (f"**{name(better)} retrieves significantly more of the relevant parts** at "
                f"N = {budget:,} ({policy}: p = {p:.2g} < {ALPHA}).")
    return f"No significant difference at N = {budget:,} ({policy}: p = {p:.2g} ≥ {ALPHA})."


def separating_budget(ir: pd.DataFrame, a: str, b: str) -> int:
    """The budget at which a and b differ most (largest |mean difference|; the smaller Holm p,
    then the smaller budget, on ties)."""
    t = lead_by_budget(ir, a, b)
    p = pd.to_numeric(t["p_holm"], errors="coerce").fillna(1.0)
    t = t.assign(size=-t["mean_diff"].abs(), p=p).sort_values(["size", "p", "budget"])
    return int(t["budget"].iloc[0])
