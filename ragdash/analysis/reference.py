"""Reference metrics: each generated answer against the dataset's gold answers, with no LLM.

SQuAD v1.1's official definitions. Both texts are normalised (lower case, punctuation removed,
the articles a/an/the removed, whitespace collapsed); exact match (EM) is 1 when the normalised
texts are equal; token F1 is the harmonic mean of the precision and recall of the answer's tokens
against the gold answer's (as multisets). `contains`: a normalised gold answer occurs in the
normalised answer as a run of whole tokens. For long answers written in other words (Lin, 2004,
and a meaning score): `rouge_l`, ROUGE-L's F-measure (longest common subsequence of the stemmed
tokens, the `rouge-score` package), and `similarity`, the cosine of the MiniLM embeddings of the
answer and the gold answer. Each is the maximum over the question's gold answers.
An empty or failed answer scores 0 (contains False); an answer to a question without any gold
answer has no score (NaN, and <NA> for contains) and is left out of the summaries.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from ragdash.analysis.frames import order_systems, primary
from ragdash.constants import REFERENCE_METRICS

COLUMNS = ("qid", "system", "budget", "em", "f1", "contains", "rouge_l", "similarity")
"""The columns of reference.parquet, one row per answer."""
LEXICAL = ("em", "f1", "contains", "rouge_l")
"""The metrics computed from the texts alone (`similarity` needs the embedding model)."""

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


@cache
def _rouge():
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(answer: str, gold: str) -> float:
    """ROUGE-L F-measure of `answer` against `gold` (stemmed tokens; 0 when either is empty)."""
    return float(_rouge().score(str(gold), str(answer))["rougeL"].fmeasure)


class Scores(NamedTuple):
    """An answer's lexical reference metrics, each the maximum over the gold answers."""

    em: float
    f1: float
    contains: bool | None
    rouge_l: float


def score(answer: str | None, golds: Iterable[str]) -> Scores:
    """The metrics of one answer against a question's gold answers. No answer (None or blank)
    scores 0; no gold answer gives no score (NaN, None)."""
    golds = [g for g in golds if isinstance(g, str) and g.strip()]
    if not golds:
        return Scores(float("nan"), float("nan"), None, float("nan"))
    if answer is None or not str(answer).strip():
        return Scores(0.0, 0.0, False, 0.0)
    return Scores(max(exact_match(answer, g) for g in golds),
                  max(token_f1(answer, g) for g in golds),
                  any(contains(answer, g) for g in golds),
                  max(rouge_l(answer, g) for g in golds))


def similarities(pairs: Sequence[tuple[str | None, Sequence[str]]],
                 embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """Per (answer, gold answers): the largest cosine between the answer's embedding and a gold
    answer's (`embed` maps texts to rows of vectors); 0 for no answer, NaN for no gold answer.
    Each distinct text is embedded once."""
    golds = [[g for g in gs if isinstance(g, str) and g.strip()] for _, gs in pairs]
    texts = sorted({t for (a, _), gs in zip(pairs, golds, strict=True) if gs
                    for t in ([a] if a and a.strip() else []) + gs})
    if not texts:
        return np.array([np.nan if not gs else 0.0 for gs in golds], dtype=float)
    vectors = np.asarray(embed(texts), dtype=float)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {t: i for i, t in enumerate(texts)}
    out = []
    for (answer, _), gs in zip(pairs, golds, strict=True):
        if not gs:
            out.append(np.nan)
        elif not answer or not answer.strip():
            out.append(0.0)
        else:
            a = vectors[row[answer]]
            out.append(float(max(np.clip(vectors[row[g]] @ a, -1.0, 1.0) for g in gs)))
    return np.array(out, dtype=float)


def minilm_embed(texts: list[str]) -> np.ndarray:
    """The MiniLM embeddings of `texts` (the model the dense retrievers use)."""
    from ragdash.embeddings import get_embedder

    return np.asarray(get_embedder().embed_documents(texts), dtype=float)


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


def score_answers(answers: pd.DataFrame, examples: pd.DataFrame,
                  embed: Callable[[list[str]], np.ndarray] | None = None) -> pd.DataFrame:
    """One row per answer (answers.parquet's order): qid, system, budget and each metric of
    COLUMNS. A failed call (`error` set) or an empty answer scores 0; a qid the examples lack, or
    one without a gold answer, gets no score. `similarity` needs `embed` (e.g. `minilm_embed`);
    without it the column is NaN."""
    golds = gold_answers(examples)
    errors = answers["error"] if "error" in answers.columns else [None] * len(answers)
    pairs = [(_text(a, e), golds.get(str(q), ()))
             for q, a, e in zip(answers["qid"], answers["answer"], errors, strict=True)]
    rows = [score(a, gs) for a, gs in pairs]
    budget = answers["budget"] if "budget" in answers.columns else np.nan
    return pd.DataFrame({
        "qid": answers["qid"].astype(str).to_numpy(), "system": answers["system"].to_numpy(),
        "budget": budget if np.isscalar(budget) else budget.to_numpy(),
        "em": [r.em for r in rows], "f1": [r.f1 for r in rows],
        "contains": pd.array([r.contains for r in rows], dtype="boolean"),
        "rouge_l": [r.rouge_l for r in rows],
        "similarity": similarities(pairs, embed) if embed is not None and pairs
        else np.full(len(pairs), np.nan)},
        columns=list(COLUMNS))


def is_correct(metric: str, values: pd.Series | np.ndarray) -> np.ndarray:
    """Whether each value of a reference metric counts as correct (`REFERENCE_METRICS`'
    cut-off); NaN counts as not correct (callers drop the answers without a score first)."""
    return np.asarray(pd.Series(values, dtype=float).fillna(-np.inf)
                      >= REFERENCE_METRICS[metric].correct_at)


def metrics_of(reference: pd.DataFrame) -> list[str]:
    """The reference metrics `reference` holds a value of (display order): a run scored before
    ROUGE-L and similarity existed, or without the embedding model, lacks them."""
    return [m for m in REFERENCE_METRICS
            if m in reference.columns and reference[m].notna().any()]


def summary(reference: pd.DataFrame, order: Sequence[str] = (),
            budget: int | None = None) -> pd.DataFrame:
    """Per system (one budget of a sweep, as `frames.primary`): n (answers with a gold answer)
    and the mean of each metric it holds (`contains`: the share), as fractions in [0, 1]."""
    r = primary(reference, budget)
    r = r[r["em"].notna()]
    metrics = metrics_of(r)
    rows = [(s, len(g), *(float(g[m].astype(float).mean()) for m in metrics))
            for s in order_systems(r["system"].unique(), order)
            for g in [r[r["system"] == s]]]
    return pd.DataFrame(rows, columns=["system", "n", *metrics])
