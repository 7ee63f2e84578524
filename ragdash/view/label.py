"""The Label page's model: the sample's box (its size, rule and seed, fixed once drawn), the
labeller's progress, the answer to label as a card (never the judge's score), what a label or
an undo says, the context the answer had, and the agreement between labellers, built by pure
functions so the page only lays them out and each is tested without a browser. HTML here is
escaped; `name` renders a system's name.

    box = sample_box(store.read_sample(run), len(store.labelable(run)))
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from ragdash.constants import LLM_ONLY
from ragdash.labels import store, tables
from ragdash.labels.exchange import DEFAULT_SAMPLE

CHOICES = (("correct", "1"), ("partly correct", "2"), ("wrong", "3"), ("cannot tell", "4"))
"""The four labels with their keys, in the order the page's buttons show them (all alike: no
button suggests an answer)."""


@dataclass(frozen=True)
class SampleBox:
    """The sample's box: its title, what the stored sample is (None before it is drawn), the
    size the number box starts at and its largest, the rule and seed (fixed once drawn) and the
    draw button's words."""

    title: str
    caption: str | None
    size: int
    largest: int
    rule: str
    seed: int
    drawn: int
    button: str

    @property
    def fixed(self) -> bool:
        """Whether the rule and seed are fixed: a sample is drawn."""
        return self.drawn > 0


def sample_box(sample: pd.DataFrame | None, total: int, rules: Mapping[str, str]) -> SampleBox:
    """The box of the stored `sample` (`store.read_sample`) among `total` labelable answers;
    `rules`: each rule's name in words."""
    largest = max(total, 1)
    if sample is None:
        return SampleBox("The sample to label", None, min(DEFAULT_SAMPLE, largest), largest,
                         store.RULES[0], 0, 0, "Draw the sample")
    rule, seed = str(sample["rule"].iloc[0]), int(sample["seed"].iloc[0])
    when = str(sample["drawn"].iloc[0])[:16].replace("T", " ")
    return SampleBox(f"The sample to label: {len(sample)} answers",
                     f"Drawn {when} UTC by rule **{rules.get(rule, rule)}**, seed {seed}, from "
                     f"{total:,} answers. A larger size extends it in the same random order.",
                     min(max(len(sample), DEFAULT_SAMPLE), largest), largest, rule, seed,
                     len(sample), "Extend the sample")


@dataclass(frozen=True)
class Progress:
    """The progress bar: its fraction and its words (the labeller's name as `md` renders it)."""

    fraction: float
    text: str
    labelled: int
    sample: int

    @property
    def finished(self) -> str:
        """What the page says once every answer of the sample is labelled by this labeller."""
        return (f"All {self.sample} answers of the sample are labelled by you. Extend the "
                "sample above to label more, or see what the labels say.")


def progress(mine: Mapping[str, int], everyone: Mapping[str, int], labeller: str,
             md: Callable[[str], str] = str) -> Progress:
    """`store.progress` of the labeller (`mine`) and of anyone: '12 of 40 labelled by Ana ·
    20 of 40 by anyone' (the second part only when others labelled too)."""
    text = f"{mine['labelled']} of {mine['sample']} labelled by {md(labeller)}"
    if everyone["labelled"] != mine["labelled"]:
        text += f" · {everyone['labelled']} of {everyone['sample']} by anyone"
    return Progress(mine["labelled"] / max(mine["sample"], 1), text, mine["labelled"],
                    mine["sample"])


def card_html(item: store.Item, chip: str) -> str:
    """The answer to label: where it is in the sample, its question, gold answers and answer,
    every text escaped; `chip`: the system's chip (HTML, the caller's)."""
    golds = "".join(f"<li>{html.escape(g)}</li>" for g in item.gold_answers) or \
        "<li><i>none given</i></li>"
    return (f'<div style="overflow-wrap:anywhere"><div class="rd-note">Answer '
            f"{item.position} of the sample · question {html.escape(item.qid)} · {chip}</div>"
            f'<h3 style="margin:0.4rem 0">{html.escape(item.question)}</h3>'
            f"<div><b>Gold answer(s):</b><ul style='margin:0'>{golds}</ul></div>"
            f'<div style="font-size:1.15rem;margin-top:0.6rem;padding:10px 14px;'
            f'background:#f1f3f5;border-radius:6px"><b>Answer:</b> '
            f"{html.escape(item.answer)}</div></div>")


def saved_note(item: store.Item, choice: str, name: Callable[[str], str] = str) -> str:
    """The toast after a label: 'Saved: wrong (q12, BM25)'."""
    return f"Saved: {choice} ({item.qid}, {name(item.system)})"


def undone_note(row: Mapping[str, object] | None, name: Callable[[str], str] = str) -> str:
    """The toast after an undo (`store.undo_last`'s row, None: nothing to undo)."""
    if row is None:
        return "Nothing to undo"
    return f"Undone: {row['label']} ({row['qid']}, {name(str(row['system']))})"


@dataclass(frozen=True)
class Context:
    """What the page shows under the answer: a note (LLM only, or no context setting), or the
    question's relevant parts and the budget of the context to cut."""

    note: str | None
    parts: tuple[str, ...] = ()
    budget: int | None = None


def context_of(item: store.Item, examples: pd.DataFrame | None, budget: int | None) -> Context:
    """The context the answer was generated from: none for an LLM-only answer; else the
    question's relevant parts (highlighted in it) and the generation budget N."""
    if item.system == LLM_ONLY:
        return Context("This answer was generated without retrieval (LLM only).")
    if budget is None:
        return Context(None)
    row = None if examples is None else examples[examples["qid"].astype(str) == item.qid]
    parts = tuple(map(str, row["parts"].iloc[0])) if row is not None and len(row) else ()
    return Context(None, parts, budget)


def agreement(labels: pd.DataFrame) -> pd.DataFrame | None:
    """Two or more labellers on the same answers ("cannot tell" left out): per pair, the
    answers both labelled, the share with the same label and Cohen's kappa; None with one
    labeller."""
    given = labels[labels["label"] != "cannot tell"]
    if given["labeller"].nunique() < 2:
        return None
    from ragdash.calibration.agreement import inter_annotator

    return tables.annotators_frame({"annotators": inter_annotator(given)})
