"""The paper's semantic chunker (§3.1), with exact offsets and batched embedding.

Per document: sentence split (regex ``(?<=[.?!])\\s+``); greedy merge of sentences into pieces of
at least `min_chars` characters, counted as the paper builds them (`buffer + " " + s`, so every
piece starts with a space); for each piece a window of the pieces ±`buffer_size` around it joined
with single spaces; cosine distances between consecutive window embeddings; a break after piece i
when d_i > numpy.percentile(distances, percentile) of *that* document.

Boundaries are the same in both spacing modes (the windows embedded are always the paper's
strings); only the chunk text differs. Unlike the paper, windows of all documents are embedded in
a few batched calls, each distinct window once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ragdash.chunking.base import Progress, Span, Ticker
from ragdash.data.schema import Document
from ragdash.embeddings import DEFAULT_MODEL
from ragdash.text import sentence_spans

SPACINGS = ("exact", "reference")
EMBED_BLOCK = 256  # windows per embed_documents call (one progress step)


def sentences(text: str) -> list[tuple[int, int]]:
    """The paper's sentences as spans, including the empty last one `re.split` yields when the
    text ends with a break (punctuation + whitespace). Empty text gives none.
    """
    spans = sentence_spans(text)
    if spans and spans[-1][1] < len(text):
        spans.append((len(text), len(text)))
    return spans


def merge_sentences(lengths: Sequence[int], min_chars: int = 200) -> list[tuple[int, int]]:
    """Group sentences into pieces as the paper does; returns sentence index ranges [i, j).

    candidate = buffer + " " + s; if len(candidate) < min_chars it stays in the buffer, else it is
    emitted. A non-empty buffer left at the end is emitted (it may be shorter than min_chars).
    """
    groups: list[tuple[int, int]] = []
    first, buffered = 0, 0
    for k, n in enumerate(lengths):
        candidate = buffered + 1 + n
        if candidate < min_chars:
            buffered = candidate
        else:
            groups.append((first, k + 1))
            first, buffered = k + 1, 0
    if first < len(lengths):
        groups.append((first, len(lengths)))
    return groups


def windows(pieces: Sequence[str], buffer_size: int = 3) -> list[str]:
    """For each piece, the pieces [i - buffer_size, i + buffer_size] (clipped) joined by spaces."""
    n = len(pieces)
    return [" ".join(pieces[max(0, i - buffer_size): i + buffer_size + 1]) for i in range(n)]


def distances(vectors: np.ndarray) -> np.ndarray:
    """Cosine distance 1 - cos(v_i, v_{i+1}) between consecutive rows."""
    v = np.asarray(vectors, dtype=np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return 1.0 - np.einsum("ij,ij->i", v[:-1], v[1:])


def breakpoints(dists: np.ndarray, percentile: float = 80.0) -> list[int]:
    """Indices i with a break after piece i: d_i strictly greater than the percentile of dists."""
    if len(dists) == 0:
        return []
    threshold = np.percentile(dists, percentile)
    return [int(i) for i in np.flatnonzero(dists > threshold)]


def chunk_semantic(
    documents: Sequence[Document],
    *,
    buffer_size: int = 3,
    percentile: float = 80.0,
    min_chars: int = 200,
    model: str = DEFAULT_MODEL,
    spacing: Literal["exact", "reference"] = "exact",
    embedder: Any = None,
    progress: Progress = False,
) -> list[list[Span]]:
    """Semantic chunking as in the paper's code (all-MiniLM-L6-v2, ±3 pieces, 80th percentile).

    spacing="exact": chunk text is document.text[start:end], from its first sentence to its
    last. spacing="reference": the paper's text, pieces joined with a space, each piece starting
    with one (a leading space and double spaces); start/end are the span it covers.
    A 1-piece document is one chunk. Empty text gives no chunk (the paper yields " "), and a
    chunk holding only the empty sentence after a trailing break is dropped too.
    `embedder` (any LangChain `Embeddings`) replaces `model`, e.g. with a fake in tests.
    MiniLM truncates windows at 256 word-pieces, as in the paper.
    """
    if spacing not in SPACINGS:
        raise ValueError(f"semantic: spacing must be one of {SPACINGS}, got {spacing!r}")
    if buffer_size < 0 or min_chars < 0 or not 0 <= percentile <= 100:
        raise ValueError(f"semantic: need buffer_size >= 0, min_chars >= 0 and 0 <= percentile "
                         f"<= 100, got buffer_size={buffer_size}, min_chars={min_chars}, "
                         f"percentile={percentile}")
    plans = []  # per document: sentences, sentence groups, paper piece strings
    for doc in documents:
        sents = sentences(doc.text)
        groups = merge_sentences([e - s for s, e in sents], min_chars)
        pieces = ["".join(" " + doc.text[s:e] for s, e in sents[a:b]) for a, b in groups]
        plans.append((sents, groups, pieces))

    # Documents with at most max(2, buffer_size + 1) pieces never split (a single distance, or
    # identical windows, equal the threshold), so only the others need embeddings.
    min_pieces = max(2, buffer_size + 1)
    wins = [windows(p, buffer_size) if len(p) > min_pieces else [] for _, _, p in plans]
    vectors = _embed_unique([w for ws in wins for w in ws], model, embedder, progress)

    out = []
    for doc, (sents, groups, pieces), ws in zip(documents, plans, wins, strict=True):
        cuts = breakpoints(distances(np.stack([vectors[w] for w in ws])), percentile) if ws else []
        bounds = [0, *(i + 1 for i in cuts), len(pieces)] if pieces else []
        spans = []
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            first, last = groups[lo][0], groups[hi - 1][1]
            ends = [e for s, e in sents[first:last] if e > s]
            if not ends:
                continue  # only the empty trailing sentence
            start, end = sents[first][0], ends[-1]
            text = doc.text[start:end] if spacing == "exact" else " ".join(pieces[lo:hi])
            spans.append(Span(start, end, text))
        out.append(spans)
    return out


def _embed_unique(texts: list[str], model: str, embedder: Any, progress: Progress) -> dict:
    """Embed each distinct text once, longest first, in blocks of EMBED_BLOCK."""
    unique = sorted(set(texts), key=len, reverse=True)
    if not unique:
        return {}
    if embedder is None:
        from ragdash.embeddings import get_embedder

        embedder = get_embedder(model)
    ticker = Ticker(progress, "semantic chunking: embedding windows", len(unique), "window")
    vectors: dict[str, np.ndarray] = {}
    try:
        for i in range(0, len(unique), EMBED_BLOCK):
            block = unique[i: i + EMBED_BLOCK]
            for text, vec in zip(block, embedder.embed_documents(block), strict=True):
                vectors[text] = np.asarray(vec, dtype=np.float64)
            ticker.update(len(block))
    finally:
        ticker.close()
    return vectors
