"""The Data page's model: a loaded dataset's validation report, its records as tables (with the
relevant parts found on the page instead of its own, when reviewed), their statistics and the
questions' preview, built by pure functions so the page only lays them out and each is tested
without a browser.

    examples, documents = record_tables(loaded, parts)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from ragdash.analysis import frames
from ragdash.data import Dataset

STAT_NAMES = {"n_parts": "relevant parts per question", "part_chars_mean": "part length (chars)",
              "part_chars_min": "shortest part (chars)",
              "part_chars_max": "longest part (chars)",
              "question_chars": "question length (chars)",
              "answer_chars": "answer length (chars)"}
"""The statistics' rows as the page names them."""

PART_SEPARATOR = " ‖ "
"""Between a question's relevant parts in the preview's one cell."""


def issues_table(issues: Sequence) -> pd.DataFrame:
    """The validation report: severity, file (its name only), record, field and message."""
    table = pd.DataFrame([asdict(i) for i in issues],
                         columns=["severity", "file", "record", "field", "message"])
    return table.assign(file=table["file"].map(lambda f: Path(f).name))[
        ["severity", "file", "record", "field", "message"]]


def record_tables(loaded: Dataset, parts: Mapping[str, list[str]] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The examples (qid, question, answer, parts and metadata) and the documents; `parts`
    replaces each question's relevant parts (none for a question it lacks)."""
    examples = pd.DataFrame([{"qid": e.qid, "question": e.question, "answer": e.answer,
                              "parts": list(e.parts), **e.meta} for e in loaded.examples])
    if parts is not None:
        examples["parts"] = [parts.get(q, []) for q in examples["qid"]]
    return examples, pd.DataFrame([asdict(d) for d in loaded.documents])


def statistics(examples: pd.DataFrame) -> pd.DataFrame:
    """Mean, min, median and max of each per-question statistic (`frames.example_stats`)."""
    desc = frames.example_stats(examples).drop(columns="qid").describe().T
    return desc[["mean", "min", "50%", "max"]].rename(index=STAT_NAMES,
                                                      columns={"50%": "median"})


def preview(examples: pd.DataFrame, rows: int = 200) -> pd.DataFrame:
    """The first `rows` questions with their parts in one cell, separated by PART_SEPARATOR."""
    head = examples.head(rows)
    return head.assign(parts=head["parts"].map(lambda ps: PART_SEPARATOR.join(map(str, ps))))


ESTIMATE_SAMPLE = 200
"""The most questions the Data page's estimate runs the evidence finder on in the server: a
larger upload is estimated on a seeded sample of them, its calls scaled to the whole (finding
the evidence itself runs as a job, `ragdash.evidence.task`)."""


def evidence_estimate(loaded: Dataset, llm: Mapping[str, Any], runs_root: str | Path,
                      sample: int = ESTIMATE_SAMPLE) -> str:
    """What "Also ask an LLM" would send for `loaded` (the finder run with nothing sent,
    `evidence.finder.call_plan`: quotes, and which sentences support an answer in other
    words), priced with `llm` (an `llm` config section); those the runs root's reply cache
    answers are left out and said. Over `sample` questions, the finder runs on a seeded sample
    of `sample` and the estimate is scaled up, as it says. ValueError for a bad LLM setting."""
    from ragdash.embeddings import configured
    from ragdash.evidence.finder import call_plan
    from ragdash.evidence.settings import EvidenceSettings
    from ragdash.llm.plan import answered_note
    from ragdash.llm.settings import LLMSettings
    from ragdash.rundir.root import RunsRoot

    settings = LLMSettings.from_config(dict(llm))
    root = RunsRoot(runs_root)
    examples, n = loaded.examples, len(loaded.examples)
    if n > sample:
        examples = [examples[i] for i in sorted(random.Random(0).sample(range(n), sample))]
    with configured(root.path):
        plan = call_plan(examples, loaded.documents, EvidenceSettings(llm=True), settings)
    est, cached = plan.price(settings, root)
    if len(examples) == n:
        return f"{est}" + (f" ({answered_note('evidence', cached)})" if cached else "")
    factor = n / len(examples)
    cached = round(cached * factor)
    return (f"about {est.scaled(factor)} (the finder run on {len(examples):,} of the {n:,} "
            f"questions, drawn at random, and scaled up"
            + (f"; {answered_note('evidence', cached)}" if cached else "") + ")")

