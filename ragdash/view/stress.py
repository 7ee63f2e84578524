"""The controlled contexts on the LLM results page (and in the report): the stress stage's
summary (`ragdash.stress.summary`), the run's own answers by Score_IR beside it, the run's h and
k when they were fitted at the generation budget, and the sentences that read them, built by
pure functions so the page only lays them out.

    page = stress(view)
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import frames
from ragdash.stress.summary import Summary, observed_curve, summary
from ragdash.view import RunView


@dataclass(frozen=True)
class Stress:
    """`summary` of the controlled contexts; `observed`: the run's answers' accuracy by Score_IR
    at the generation `budget` (None without reference scores); `h`, `k`: the run's thresholds
    when fitted at that budget; `questions`, `contexts`: how many; `sentences`: what they say."""

    summary: Summary
    observed: pd.DataFrame | None
    h: float | None
    k: float | None
    budget: int
    questions: int
    contexts: int
    sentences: list[str]
    position_ratio: float | None


def noise_sentence(s: Summary) -> str | None:
    """How accuracy moves from the lowest to the highest noise ratio that still holds
    evidence, with both intervals."""
    held = s.by_ratio[s.by_ratio.index < 1.0]
    if len(held) < 2:
        return None
    first, last = held.iloc[0], held.iloc[-1]
    move = "falls" if last["accuracy"] < first["accuracy"] else \
        "rises" if last["accuracy"] > first["accuracy"] else "stays"
    return (f"Accuracy {move} from {first['accuracy']:.0%} (95 % CI {first['lo']:.0%}–"
            f"{first['hi']:.0%}) with {held.index[0]:.0%} noise to {last['accuracy']:.0%} "
            f"({last['lo']:.0%}–{last['hi']:.0%}) with {held.index[-1]:.0%} noise.")


def rejection_sentence(s: Summary) -> str | None:
    """RGB's negative rejection: the share refused when the context holds no evidence."""
    if s.rejection is None:
        return None
    lo, hi = s.rejection_ci
    verdict = ("it mostly declines, as it should" if s.rejection >= 0.5 else
               "it mostly answers anyway: what it says then comes from memory or is made up")
    return (f"With no evidence in its context the generator refused {s.rejection:.0%} of "
            f"{s.rejection_n} questions (95 % CI {lo:.0%}–{hi:.0%}): {verdict}.")


def position_sentence(s: Summary) -> str | None:
    """Where the evidence stands: the best and worst position, or that they do not differ."""
    p = s.by_position
    if len(p) < 2:
        return None
    best, worst = p["accuracy"].idxmax(), p["accuracy"].idxmin()
    if p.loc[best, "lo"] <= p.loc[worst, "hi"]:
        each = ", ".join(f"{pos} {a:.0%}" for pos, a in p["accuracy"].items())
        return f"Where the evidence stands makes no clear difference here ({each}; the " \
            "intervals overlap)."
    said = (f"Evidence placed {best} is used best ({p.loc[best, 'accuracy']:.0%}), placed "
            f"{worst} worst ({p.loc[worst, 'accuracy']:.0%}).")
    cut = p.loc[worst, "score_ir"]
    if cut < p.loc[best, "score_ir"] - 0.1:  # the budget cut the evidence off, not the model
        said += (f" Placed {worst}, much of it lies past the budget N (mean Score_IR "
                 f"{cut:.2f} against {p.loc[best, 'score_ir']:.2f}): the cut, not the model's "
                 "attention, loses it.")
    return said


def integration_sentence(s: Summary) -> str | None:
    """RGB's information integration: accuracy with one part's evidence and with every
    part's, for the questions whose parts lie in different chunks."""
    p = s.by_parts
    if len(p) < 2:
        return None
    one, every = p.iloc[0], p.iloc[1]
    return (f"For the {int(every['n'])} questions whose parts lie in different chunks, the "
            f"generator is right {every['accuracy']:.0%} of the time with every part's "
            f"evidence ({every['lo']:.0%}–{every['hi']:.0%}) and {one['accuracy']:.0%} with one "
            f"part's ({one['lo']:.0%}–{one['hi']:.0%}).")


def stress(view: RunView) -> Stress | None:
    """The page's section; None before `ragdash stress` has run."""
    table = view.run.table("stress")
    if table is None or table.empty:
        return None
    s = summary(table)
    budget = int(table["budget"].iloc[0])  # the generation budget the stage cut C_N at
    observed = None
    ref = frames.primary(view.reference(), budget)
    ir = view.ir_scores()
    if ref is not None and budget is not None and budget in set(ir["budget"]):
        observed = observed_curve(frames.at_budget(ir, budget), ref)
    cal = view.run.calibration()
    h = k = None
    if cal is not None and cal.budget == budget:
        h, k = cal.h, cal.k
    ratio = table.loc[table["test"] == "position", "ratio"]
    return Stress(s, observed, h, k, budget, int(table["qid"].nunique()), len(table),
                  [t for t in (noise_sentence(s), rejection_sentence(s), position_sentence(s),
                               integration_sentence(s)) if t],
                  float(ratio.iloc[0]) if len(ratio) else None)
