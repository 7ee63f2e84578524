"""A look at the chunks before a run: count, lengths, the first chunks, and warnings when the
chunking would make Score_IR meaningless (one chunk per document; a retrieved context that
covers most of the corpus, so every score is close to 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ragdash.chunking import Chunk, chunk_documents
from ragdash.data import Document

LONG_DOCUMENT = 1000
"""Documents longer than this (characters, on average) are expected to give several chunks."""
COVERAGE_WARN = 0.5
"""Warn when k chunks of mean length hold this share of the corpus's characters or more."""


@dataclass
class ChunkPreview:
    documents: int  # documents chunked for the preview
    corpus_documents: int
    corpus_chars: int
    lengths: list[int]  # characters per chunk
    first: list[Chunk]
    warnings: list[str] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return len(self.lengths)

    @property
    def mean_chars(self) -> float:
        return sum(self.lengths) / len(self.lengths) if self.lengths else 0.0


def preview(documents: Sequence[Document], method: str, params: dict | None = None,
            max_chars: int | None = None, k: int = 10, max_documents: int = 20,
            show: int = 5) -> ChunkPreview:
    """Chunk the first `max_documents` documents as the run would; `k` is the largest number of
    chunks a retriever keeps."""
    docs = list(documents)[:max_documents]
    chunks = chunk_documents(docs, method, max_chars=max_chars, **(params or {}))
    out = ChunkPreview(len(docs), len(documents), sum(len(d.text) for d in documents),
                       [len(c.text) for c in chunks], chunks[:show])
    doc_chars = sum(len(d.text) for d in docs) / len(docs) if docs else 0.0
    if len(docs) > 1 and out.chunks <= len(docs) and doc_chars > LONG_DOCUMENT:
        out.warnings.append(
            f"{method} made one chunk per document ({out.chunks} chunks for {len(docs)} "
            f"documents of {doc_chars:,.0f} characters on average): retrieval then picks whole "
            "documents. Try a lower percentile, a smaller chunk size, or split long chunks "
            "(max characters).")
    covered = k * out.mean_chars / out.corpus_chars if out.corpus_chars else 0.0
    if covered >= COVERAGE_WARN:
        out.warnings.append(
            f"{k} chunks of about {out.mean_chars:,.0f} characters hold {min(covered, 1):.0%} of "
            f"the corpus ({out.corpus_chars:,} characters): every retriever will find almost "
            "everything, every Score_IR will be close to 1, and the comparison means little. "
            "Use a larger corpus, smaller chunks or a smaller k.")
    return out
