"""RAGAS's metrics (Es et al. 2024, and the ragas documentation's definitions) from the LLM's
parsed verdicts; NaN where the verdicts are missing (the caller records why)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

NAN = math.nan
Embed = Callable[[list[str]], np.ndarray]
"""Texts -> L2-normalised vectors (MiniLM by default, `minilm`)."""


def faithfulness(supported: Sequence[bool] | None) -> float:
    """Share of the answer's statements the context supports; NaN without statements (as
    ragas)."""
    if supported is None or not len(supported):
        return NAN
    return float(np.mean(np.asarray(supported, bool)))


def answer_relevancy(question: str, generated: Sequence[str] | None, noncommittal: bool,
                     embed: Embed) -> float:
    """Mean cosine of the questions generated from the answer with the question, times 0 for a
    noncommittal answer (ragas); clipped at 0 so it stays in [0, 1]."""
    if not generated:
        return NAN
    vectors = np.asarray(embed([question, *generated]), dtype=float)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    cosine = float(np.mean(vectors[1:] @ vectors[0]))
    return 0.0 if noncommittal else float(np.clip(cosine, 0.0, 1.0))


def context_precision(useful: Sequence[bool] | None) -> float:
    """Average precision of the chunks in rank order, each judged useful or not to reach the
    gold answer: sum_k precision@k * v_k / (number useful); 0 when none is (ragas)."""
    if useful is None or not len(useful):
        return NAN
    v = np.asarray(useful, dtype=float)
    at_k = np.cumsum(v) / np.arange(1, len(v) + 1)
    return float((at_k * v).sum() / v.sum()) if v.sum() else 0.0


def context_recall(attributed: Sequence[bool] | None) -> float:
    """Share of the gold answer's sentences attributable to the retrieved context."""
    if attributed is None or not len(attributed):
        return NAN
    return float(np.mean(np.asarray(attributed, bool)))


def minilm() -> Embed:
    """The MiniLM sentence embedder ragdash retrieves with (`ragdash.embeddings`)."""
    from ragdash.embeddings import get_embedder

    embedder = get_embedder()
    return lambda texts: np.asarray(embedder.embed_documents(list(texts)), dtype=float)
