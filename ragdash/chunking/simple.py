"""Baseline chunkers: LangChain recursive splitting, fixed token windows, whole documents."""

from __future__ import annotations

from collections.abc import Sequence

from ragdash.chunking.base import Progress, Span, Ticker, stripped
from ragdash.data.schema import Document

TOKEN_BLOCK = 512  # documents per tokenizer call (one progress step)


def chunk_recursive(
    documents: Sequence[Document],
    *,
    chunk_size: int = 1000,
    chunk_overlap: int = 100,
    progress: Progress = False,
) -> list[list[Span]]:
    """LangChain `RecursiveCharacterTextSplitter` (paragraphs, lines, words, characters)."""
    if chunk_size <= 0 or not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"recursive: need chunk_size > 0 and 0 <= chunk_overlap < chunk_size, "
                         f"got chunk_size={chunk_size}, chunk_overlap={chunk_overlap}")
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap, add_start_index=True)
    ticker = Ticker(progress, "recursive chunking", len(documents), "doc")
    out = []
    for doc in documents:
        spans, floor = [], 0
        for d in splitter.create_documents([doc.text]) if doc.text else []:
            text, start = d.page_content, d.metadata.get("start_index", -1)
            if start < 0 or doc.text[start: start + len(text)] != text:
                start = doc.text.find(text, floor)  # LangChain's offset guess failed
            if start < 0 or not text.strip():
                continue
            floor = start
            spans.append(Span(start, start + len(text), text))
        out.append(spans)
        ticker.update(1)
    ticker.close()
    return out


def chunk_tokens(
    documents: Sequence[Document],
    *,
    size: int = 200,
    overlap: int = 50,
    tokenizer: str = "llama3",
    progress: Progress = False,
) -> list[list[Span]]:
    """Windows of `size` tokens, each starting `size - overlap` tokens after the previous one.

    Chunk text is the exact character slice from the window's first to its last token, without
    surrounding whitespace; the last window ends with the document's last token.
    """
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"tokens: need size > 0 and 0 <= overlap < size, "
                         f"got size={size}, overlap={overlap}")
    from ragdash.budget import get_tokenizer

    tok = get_tokenizer(tokenizer)
    ticker = Ticker(progress, "token chunking", len(documents), "doc")
    out = []
    for b in range(0, len(documents), TOKEN_BLOCK):
        block = documents[b: b + TOKEN_BLOCK]
        for doc, ends in zip(block, tok.token_ends([d.text for d in block]), strict=True):
            spans, n, i = [], len(ends), 0
            while i < n:
                j = min(i + size, n)
                start = int(ends[i - 1]) if i > 0 else 0
                span = stripped(doc.text, start, int(ends[j - 1]))
                if span is not None:
                    spans.append(span)
                if j >= n:
                    break
                i += size - overlap
            out.append(spans)
        ticker.update(len(block))
    ticker.close()
    return out


def chunk_whole(documents: Sequence[Document], *, progress: Progress = False) -> list[list[Span]]:
    """One chunk per document: its whole text."""
    return [[Span(0, len(d.text), d.text)] if d.text.strip() else [] for d in documents]
