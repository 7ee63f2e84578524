"""Step 1: the chunks questions are written on, sampled across documents so that no document
dominates.

The documents are cut by a `ragdash.chunking` method; chunks shorter than MIN_CHUNK_CHARS are
left out (unless every chunk is that short). The sample is round-robin over the documents: the
documents in a seeded order, each document's chunks in a seeded order, one chunk per document
per round. So a document gives at most ceil(n / documents) chunks unless the others have run
out. For a multi-hop question the first chunk is drawn so, and its partner is the chunk of
another document closest to it by BM25 (`bm25s`, the chunk's text as the query: shared names
are what a question can bridge), each partner used once, and each pair of chunks once (in
either order), while others are left.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ragdash.chunking import Chunk, chunk_documents
from ragdash.data.schema import Document
from ragdash.synth.settings import MIN_CHUNK_CHARS, SynthSettings


@dataclass(frozen=True)
class Item:
    """One pair to generate: its id and the chunk(s) it is written on (two chunks of two
    documents for a multi-hop question)."""

    qid: str
    chunks: tuple[Chunk, ...]


def eligible(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks long enough to ask about (all of them when none is)."""
    long = [c for c in chunks if len(c.text.strip()) >= MIN_CHUNK_CHARS]
    return long or list(chunks)


def stratified(chunks: Sequence[Chunk], n: int, seed: int) -> list[Chunk]:
    """Up to `n` chunks, round-robin over their documents (module docstring)."""
    rng = random.Random(seed)
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    queues = list(by_doc.values())
    for q in queues:
        rng.shuffle(q)
    rng.shuffle(queues)
    out: list[Chunk] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def partners(firsts: Sequence[Chunk], pool: Sequence[Chunk]) -> list[Chunk]:
    """For each chunk, the chunk of another document closest to it by BM25; a partner, or a
    pair, is used again only when every other candidate has been."""
    from ragdash.evidence.rank import Lexical, order

    if len({c.doc_id for c in pool}) < 2:
        raise ValueError("multi-hop questions need a corpus of at least two documents")
    lexical = Lexical([c.text for c in pool])
    used: set[str] = set()
    pairs: set[frozenset[str]] = set()
    out = []
    for first in firsts:
        ranked = [pool[i] for i in order(lexical.scores(first.text))
                  if pool[i].doc_id != first.doc_id]
        pick = next((c for c in ranked if c.chunk_id not in used
                     and frozenset((first.chunk_id, c.chunk_id)) not in pairs), ranked[0])
        used.add(pick.chunk_id)
        pairs.add(frozenset((first.chunk_id, pick.chunk_id)))
        out.append(pick)
    return out


def sample(documents: Sequence[Document], settings: SynthSettings) -> list[Item]:
    """The items to generate, ids `synth-001`, ... in sample order."""
    pool = eligible(chunk_documents(documents, settings.chunker))
    firsts = stratified(pool, settings.n, settings.seed)
    pairs: list[tuple[Chunk, ...]] = [(c,) for c in firsts]
    if settings.multihop:
        pairs = [(a, b) for a, b in zip(firsts, partners(firsts, pool), strict=True)]
    width = max(3, len(str(len(pairs))))
    return [Item(f"synth-{i + 1:0{width}d}", chunks) for i, chunks in enumerate(pairs)]
