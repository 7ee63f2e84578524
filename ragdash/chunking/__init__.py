"""Chunking the corpus: the paper's semantic chunker, LangChain recursive, token windows, none.

    chunks = chunk_documents(documents, "semantic", percentile=80, max_chars=2000)

Every chunk keeps its document's id and title and its character offsets in the document; with
exact spacing (every method but semantic's `spacing="reference"`) `doc.text[c.start:c.end] ==
c.text`. Chunk ids are `f"{doc_id}#{i}"`. Chunks are never blank: empty or blank documents give
none. A chunk of a document with a layout (PDF pages, headings) gets the page and section of its
start. `default_params(method)` lists a method's tunable parameters and their defaults.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from ragdash.chunking.base import Chunk, Progress, Span, split_span, split_text
from ragdash.chunking.semantic import SPACINGS, chunk_semantic
from ragdash.chunking.simple import chunk_recursive, chunk_tokens, chunk_whole
from ragdash.data.layout import Layout
from ragdash.data.schema import Document
from ragdash.embeddings import DEFAULT_MODEL
from ragdash.params import MAX_CHARS, Param, check_all, defaults

Chunker = Callable[..., list[list[Span]]]
CHUNKERS: dict[str, Chunker] = {
    "semantic": chunk_semantic, "recursive": chunk_recursive, "tokens": chunk_tokens,
    "none": chunk_whole,
}
_HIDDEN = {"embedder"}  # accepted by chunk_documents (tests, custom models) but not listed


def _p(name: str, kind: type, default: Any, help: str, **kw: Any) -> Param:
    return Param(name, kind, default, help, text_numbers=True, **kw)


MAX_BUFFER = 100
"""The most sentences on each side of a semantic window: the embedding model reads 256
word-pieces of it, and every sentence's window is built in memory."""

PARAMS: dict[str, tuple[Param, ...]] = {
    "semantic": (
        _p("buffer_size", int, 3, "semantic: sentences on each side joined into the window that "
           "is embedded", low=0, high=MAX_BUFFER),
        _p("percentile", float, 80.0, "semantic: a chunk ends where the distance between "
           "neighbouring windows is above this percentile (higher: fewer, longer chunks)",
           low=0, high=100),
        _p("min_chars", int, 200, "semantic: shorter chunks are merged into the next", low=0,
           high=MAX_CHARS),
        _p("model", str, DEFAULT_MODEL, "sentence-embedding model"),
        _p("spacing", str, "exact", "semantic: exact slices of the document, or the paper's "
           "joined text", choices=SPACINGS),
    ),
    "recursive": (
        _p("chunk_size", int, 1000, "recursive: most characters per chunk", low=1,
           high=MAX_CHARS),
        _p("chunk_overlap", int, 100, "recursive: characters shared by neighbouring chunks",
           low=0, high=MAX_CHARS),
    ),
    "tokens": (
        _p("size", int, 200, "tokens: tokens per chunk", low=1, high=MAX_CHARS),
        _p("overlap", int, 50, "tokens: tokens shared by neighbouring chunks", low=0,
           high=MAX_CHARS),
        _p("tokenizer", str, "llama3", "tokens: the tokenizer that counts them (a name or a "
           "tokenizer.json path)"),
    ),
    "none": (),
}
"""Every chunking method's tunable parameters, declared once (`ragdash.params`): the defaults,
the checks, the Build page's inputs and docs/config.md come from here."""

PARAM_HELP: dict[str, str] = {p.name: p.help for ps in PARAMS.values() for p in ps}
"""One line per chunking parameter (derived from PARAMS)."""


def _chunker(method: str) -> Chunker:
    if method not in CHUNKERS:
        raise ValueError(f"unknown chunking method '{method}': use one of {', '.join(CHUNKERS)}")
    return CHUNKERS[method]


def params_of(method: str) -> tuple[Param, ...]:
    """The declared parameters of chunking method `method`."""
    _chunker(method)
    return PARAMS[method]


def default_params(method: str) -> dict[str, Any]:
    """The tunable parameters of a chunking method and their defaults."""
    return defaults(params_of(method))


def describe(method: str) -> str:
    """One line saying what a chunking method does."""
    return (inspect.getdoc(_chunker(method)) or "").splitlines()[0]


def resolve_params(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults updated with `params`, each checked against its declaration; numbers given as
    strings (CLI) are converted. Unknown parameters, wrong types and values outside a
    parameter's bounds or choices raise ValueError naming it."""
    params = dict(params or {})
    hidden = {k: params.pop(k) for k in _HIDDEN & set(params)}
    return {**check_all(method, params_of(method), params), **hidden}


def check_unique_ids(doc_ids: Iterable[str]) -> None:
    """ValueError naming the first doc_id given twice (its chunk ids would collide)."""
    seen: set[str] = set()
    for doc_id in doc_ids:
        if doc_id in seen:
            raise ValueError(f"duplicate doc_id '{doc_id}': chunk ids would collide")
        seen.add(doc_id)


def chunk_documents(
    documents: Iterable[Document],
    method: str = "semantic",
    *,
    max_chars: int | None = None,
    progress: Progress = False,
    **params: Any,
) -> list[Chunk]:
    """Chunk every document with `method` (see CHUNKERS and default_params).

    max_chars: split chunks longer than this at sentence boundaries, else at the last whitespace
    within the limit, else hard, keeping offsets. progress: True for tqdm bars, or a callback
    (message, done, total).
    """
    chunker = _chunker(method)
    kwargs = resolve_params(method, params)
    if isinstance(max_chars, str) and max_chars.strip().isdigit():
        max_chars = int(max_chars)
    if max_chars is not None and (isinstance(max_chars, bool) or not isinstance(max_chars, int)
                                  or max_chars <= 0):
        raise ValueError(f"max_chars must be a positive integer or None, got {max_chars!r}")
    docs = list(documents)
    check_unique_ids(doc.doc_id for doc in docs)
    chunks: list[Chunk] = []
    for doc, spans in zip(docs, chunker(docs, progress=progress, **kwargs), strict=True):
        pieces: list[Span] = []
        for span in spans:
            if not span.text.strip():
                continue
            if max_chars is not None and len(span.text) > max_chars:
                pieces.extend(split_span(doc.text, span, max_chars))
            else:
                pieces.append(span)
        if not (doc.pages or doc.headings):
            chunks.extend(Chunk(f"{doc.doc_id}#{i}", doc.doc_id, doc.title, p.text, p.start,
                                p.end) for i, p in enumerate(pieces))
            continue
        layout = Layout(doc.pages, doc.headings)
        chunks.extend(Chunk(f"{doc.doc_id}#{i}", doc.doc_id, doc.title, p.text, p.start, p.end,
                            layout.page(p.start), layout.heading(p.start),
                            layout.page(max(p.start, p.end - 1)))
                      for i, p in enumerate(pieces))
    return chunks


__all__ = ["CHUNKERS", "PARAMS", "PARAM_HELP", "Chunk", "Span", "check_unique_ids",
           "chunk_documents", "default_params", "describe", "params_of", "resolve_params",
           "split_text"]
