"""The LLM results page's model: the answers the refusal rule matches, what retrieval adds for
one retriever, the error counts and the cost line, built by pure functions so the page only
lays them out and each is tested without a browser (the launcher's form and specification:
`ragdash.view.llm_launch`). `name` renders a system's name.

    hits = refusal_hits(view.answers(), view.judgments(), rule, name=label)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import frames
from ragdash.analysis.sentences import plural
from ragdash.llm.refusal import RefusalRule


@dataclass(frozen=True)
class RefusalHits:
    """The answers the rule matches (qid, system, answer, pattern and, when judged, score
    shown as text, "—" when unscored), out of `answers`; `recorded`: those the run's judge
    stage scored by its own rule."""

    table: pd.DataFrame
    answers: int
    recorded: int

    def sentence(self) -> str:
        share = len(self.table) / self.answers if self.answers else 0.0
        return (f"**{len(self.table):,} of {self.answers:,} answers ({share:.1%}) match the "
                f"rule as shown**; the run's judge stage scored {self.recorded:,} by the rule.")


def refusal_hits(answers: pd.DataFrame, judgments: pd.DataFrame | None, rule: RefusalRule,
                 name: Callable[[str], str] = str) -> RefusalHits:
    """What the refusal rule as edited matches among the answers, beside what the run
    recorded."""
    a = answers.dropna(subset=["answer"])
    hits = a.assign(pattern=[rule.match(x) for x in a["answer"]]).dropna(subset=["pattern"])
    recorded = 0
    if judgments is not None and "rule" in judgments.columns:
        recorded = int(judgments["rule"].notna().sum())
        hits = hits.merge(judgments[["qid", "system", "score"]], on=["qid", "system"],
                          how="left")
    cols = [c for c in ("qid", "system", "answer", "pattern", "score") if c in hits]
    shown = hits[cols].assign(system=hits["system"].map(name))
    if "score" in shown:
        shown["score"] = ["—" if pd.isna(x) else f"{int(x)}" for x in shown["score"]]
    return RefusalHits(shown.reset_index(drop=True), len(a), recorded)


def gain_sentence(gain: pd.DataFrame, system: str, name: Callable[[str], str] = str) -> str:
    """How many answers `system`'s retrieval made fully correct and how many correct ones it
    lost (`judging.rag_gain`'s row for it)."""
    g = gain.set_index("system").loc[system]
    fixed, broken, n_both = int(g["fixed"]), int(g["broken"]), int(g["n"])
    return (f"With **{name(system)}**, {plural(fixed, 'answer')} became fully correct that "
            f"{'was' if fixed == 1 else 'were'} not without retrieval, and "
            f"{plural(broken, 'correct answer')} {'was' if broken == 1 else 'were'} lost (of "
            f"{plural(n_both, 'question')} judged both ways).")


def error_counts(errors: pd.DataFrame, order: Sequence[str],
                 name: Callable[[str], str] = str) -> pd.DataFrame:
    """Failed calls per stage (rows) and system (columns, in the run's order)."""
    counts = errors.groupby(["stage", "system"]).size().unstack(fill_value=0)
    return counts[frames.order_systems(counts.columns, order)].rename(columns=name)


def cost_line(cost: pd.DataFrame) -> str:
    """The run's total LLM cost, or why it is unknown."""
    unpriced = sorted({str(m) for m in cost.loc[cost["usd"].isna(), "model"]})
    total = float(cost["usd"].sum())
    money = (f"unknown ({', '.join(unpriced)} not in the price table)" if unpriced else
             f"${total:,.2f}" if total == 0 or total >= 1 else f"${total:,.4f}")
    return (f"**Total cost:** {money} — from recorded tokens and `ragdash.llm.cost`'s price "
            "table (local models cost $0).")
