"""The LLM results page's model: the answers the refusal rule matches, what retrieval adds for one
retriever, the error counts, the cost line and the sections' captions (abstention, truthfulness,
signal agreement, eRAG, controlled contexts), built by pure functions so the page only lays them out
and each is tested without a browser (the launcher's form and specification:
`ragdash.view.llm_launch`). `name` renders a system's name.

    hits = refusal_hits(view.answers(), view.judgments(), rule, name=label)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import frames
from ragdash.analysis.sentences import plural
from ragdash.analysis.signals import cost_text
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


def failed_line(failed: str) -> str:
    """The error box when every judgment failed (`judging.all_failed`'s sentence)."""
    return f"{failed} See the errors below."


def abstention_intro(budget: int) -> str:
    """The line above the abstention table: RAG answers the rule matches, by how much of the
    relevant parts C_N held at the generation budget N = `budget`."""
    return (f"**Does the generator abstain when the evidence is missing?** RAG answers matched "
            f"by the rule, by how much of the relevant parts C_{budget} held (a generator that "
            "uses its context abstains more when it is missing).")


def truthfulness_caption(sources: str, md: Callable[[str], str] = str) -> str:
    """The caption of CRAG's truthfulness table; `sources`: what said an answer correct."""
    return ("Each answer is correct (+1), missing (0: it declines, by the refusal rule above) "
            "or incorrect (−1), as CRAG scores them (Yang et al., NeurIPS 2024): a system "
            "that answers wrongly scores below one that abstains. The score is the mean over "
            "its questions, with a 95 % interval over questions. Correct by: "
            f"{md(sources)}.")


def agreement_captions(truth: str) -> list[str]:
    """The captions of "Which signal agrees with the truth here?" for the truth named `truth`:
    what the table holds, and a warning when the truth is itself a reference metric."""
    lines = [f"Truth: {truth}. Per signal (Score_IR at the generation budget, the judge as 5 > "
             "3 > 2 > 1 = 4, the reference metrics, RAGAS and RAGChecker metrics when "
             "measured): the AUC for \"correct\" with its 95 % interval over questions "
             "(never narrower than their number allows), and Spearman's rho with the truth; "
             "best first (docs/metrics.md)."]
    if truth.startswith("reference metric"):
        lines.append("The truth here is itself computed from the gold answers, as the other "
                     "reference metrics are: their agreement with it is partly by "
                     "construction. Label a sample of answers (Label answers page) for a truth "
                     "independent of every signal.")
    return lines


def erag_caption(spent: tuple[float, float] | None) -> str:
    """The eRAG section's caption with the LLM calls and tokens its labels cost (`spent`, None
    when not recorded)."""
    return ("Each retrieved chunk given alone to the generator with the question; its answer "
            "against the gold answers is the chunk's relevance label, and the labels of the "
            "top k make precision, MAP, MRR, nDCG and hit at k (Salemi & Zamani, SIGIR "
            "2024). Its LLM cost: " + cost_text(*(spent or (float("nan"),) * 2))
            + "; Score_IR's: none. How each agrees with the truth is in the table above.")


def stress_captions(contexts: int, questions: int, budget: int,
                    fitted: bool) -> tuple[str, str]:
    """The controlled-contexts section's captions: what was answered (`contexts` contexts for
    `questions` questions), and under the dose-response figure at N = `budget` (`fitted`:
    whether h and k were fitted there)."""
    return (f"The generator answered {contexts:,} contexts built from this run's own chunks "
            f"for {questions:,} questions: the chunks holding a relevant part, with chunks the "
            "retrievers ranked high that hold none as noise (RGB's tests, Chen et al. AAAI "
            "2024). Correct: the answer contains a gold answer; intervals are 95 % Wilson "
            "intervals over questions.",
            f"Score_IR of each context at the generation budget N = {budget:,}. The controlled "
            "curve changes the evidence and nothing else; the observed one is what the run's "
            "retrievers gave. Where they agree, Score_IR's link to answer quality is causal for "
            "this generator; where the observed curve lies higher, questions that retrieve well "
            "are also easier." + ("" if fitted else " (h and k were not fitted at this N: no "
                                  "lines.)"))
