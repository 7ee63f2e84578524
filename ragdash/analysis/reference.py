"""Reference metrics: each generated answer against the dataset's gold answers, with no LLM.

SQuAD v1.1's official definitions. Both texts are normalised (lower case, punctuation removed,
the articles a/an/the removed, whitespace collapsed); exact match (EM) is 1 when the normalised
texts are equal; token F1 is the harmonic mean of the precision and recall of the answer's tokens
against the gold answer's (as multisets). `contains`: a normalised gold answer occurs in the
normalised answer as a run of whole tokens. Each is the maximum over the question's gold answers.
An empty or failed answer scores 0 (contains False); an answer to a question without any gold
answer has no score (NaN, and <NA> for contains) and is left out of the summaries.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ragdash.analysis.frames import order_systems, primary

COLUMNS = ("qid", "system", "budget", "em", "f1", "contains")
"""The columns of reference.parquet, one row per answer."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", str(text).lower().translate(_PUNCTUATION)).split())


def exact_match(answer: str, gold: str) -> float:
    """1.0 when the normalised texts are equal, else 0.0."""
    return float(normalize(answer) == normalize(gold))


def token_f1(answer: str, gold: str) -> float:
    """SQuAD's token F1 of `answer` against `gold` (0 when they share no token)."""
    said, truth = normalize(answer).split(), normalize(gold).split()
    same = sum((Counter(said) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(said), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def contains(answer: str, gold: str) -> bool:
    """Whether the normalised gold answer occurs in the normalised answer as whole tokens."""
    truth = normalize(gold)
    return bool(truth) and f" {truth} " in f" {normalize(answer)} "


class Scores(NamedTuple):
    """An answer's reference metrics, each the maximum over the gold answers."""

    em: float
    f1: float
    contains: bool | None


def score(answer: str | None, golds: Iterable[str]) -> Scores:
    """The metrics of one answer against a question's gold answers. No answer (None or blank)
    scores 0; no gold answer gives no score (NaN, None)."""
    golds = [g for g in golds if isinstance(g, str) and g.strip()]
    if not golds:
        return Scores(float("nan"), float("nan"), None)
    if answer is None or not str(answer).strip():
        return Scores(0.0, 0.0, False)
    return Scores(max(exact_match(answer, g) for g in golds),
                  max(token_f1(answer, g) for g in golds),
                  any(contains(answer, g) for g in golds))


def gold_answers(examples: pd.DataFrame) -> dict[str, list[str]]:
    """qid -> every gold answer (`answers`; `answer` alone for a table without that column)."""
    qids = examples["qid"].astype(str)
    if "answers" in examples.columns:
        return {q: [str(a) for a in (golds if golds is not None else [])]
                for q, golds in zip(qids, examples["answers"], strict=True)}
    return {q: [a] if isinstance(a, str) else []
            for q, a in zip(qids, examples["answer"], strict=True)}


def _text(answer: object, error: object) -> str | None:
    """The answer's text, or None for a failed call or a missing answer."""
    if (error is not None and not pd.isna(error)) or answer is None or pd.isna(answer):
        return None
    return str(answer)


def score_answers(answers: pd.DataFrame, examples: pd.DataFrame) -> pd.DataFrame:
    """One row per answer (answers.parquet's order): qid, system, budget, em, f1, contains.
    A failed call (`error` set) or an empty answer scores 0; a qid the examples lack, or one
    without a gold answer, gets no score."""
    golds = gold_answers(examples)
    errors = answers["error"] if "error" in answers.columns else [None] * len(answers)
    rows = [score(_text(a, e), golds.get(str(q), ()))
            for q, a, e in zip(answers["qid"], answers["answer"], errors, strict=True)]
    budget = answers["budget"] if "budget" in answers.columns else np.nan
    return pd.DataFrame({
        "qid": answers["qid"].astype(str).to_numpy(), "system": answers["system"].to_numpy(),
        "budget": budget if np.isscalar(budget) else budget.to_numpy(),
        "em": [r.em for r in rows], "f1": [r.f1 for r in rows],
        "contains": pd.array([r.contains for r in rows], dtype="boolean")},
        columns=list(COLUMNS))


def summary(reference: pd.DataFrame, order: Sequence[str] = (),
            budget: int | None = None) -> pd.DataFrame:
    """Per system (one budget of a sweep, as `frames.primary`): n (answers with a gold answer),
    mean EM, mean F1 and the share containing a gold answer, as fractions in [0, 1]."""
    r = primary(reference, budget)
    r = r[r["em"].notna()]
    rows = [(s, len(g), float(g["em"].mean()), float(g["f1"].mean()),
             float(g["contains"].astype(bool).mean()))
            for s in order_systems(r["system"].unique(), order)
            for g in [r[r["system"] == s]]]
    return pd.DataFrame(rows, columns=["system", "n", "em", "f1", "contains"])
