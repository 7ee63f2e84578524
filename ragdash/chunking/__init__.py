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

Chunker = Callable[..., list[list[Span]]]
CHUNKERS: dict[str, Chunker] = {
    "semantic": chunk_semantic, "recursive": chunk_recursive, "tokens": chunk_tokens,
    "none": chunk_whole,
}
CHOICES: dict[tuple[str, str], tuple[str, ...]] = {("semantic", "spacing"): SPACINGS}
_NOT_PARAMS = {"documents", "progress"}
_HIDDEN = {"embedder"}  # accepted by chunk_documents (tests, custom models) but not listed


PARAM_HELP: dict[str, str] = {
    "buffer_size": "semantic: sentences on each side joined into the window that is embedded",
    "percentile": "semantic: a chunk ends where the distance between neighbouring windows is "
                  "above this percentile (higher: fewer, longer chunks)",
    "min_chars": "semantic: shorter chunks are merged into the next",
    "model": "sentence-embedding model",
    "spacing": "semantic: exact slices of the document, or the paper's joined text",
    "chunk_size": "recursive: most characters per chunk",
    "chunk_overlap": "recursive: characters shared by neighbouring chunks",
    "size": "tokens: tokens per chunk",
    "overlap": "tokens: tokens shared by neighbouring chunks",
    "tokenizer": "tokens: the tokenizer that counts them",
}
"""One line per chunking parameter (dashboard help)."""


def _chunker(method: str) -> Chunker:
    if method not in CHUNKERS:
        raise ValueError(f"unknown chunking method '{method}': use one of {', '.join(CHUNKERS)}")
    return CHUNKERS[method]


def default_params(method: str) -> dict[str, Any]:
    """The tunable parameters of a chunking method and their defaults."""
    sig = inspect.signature(_chunker(method))
    return {p.name: p.default for p in sig.parameters.values()
            if p.name not in _NOT_PARAMS | _HIDDEN and p.default is not inspect.Parameter.empty}


def describe(method: str) -> str:
    """One line saying what a chunking method does."""
    return (inspect.getdoc(_chunker(method)) or "").splitlines()[0]


def resolve_params(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults updated with `params`, validated; numbers given as strings (CLI) are converted.

    Unknown parameters, wrong types and values outside a parameter's choices raise ValueError.
    """
    defaults = default_params(method)
    params = dict(params or {})
    unknown = set(params) - set(defaults) - _HIDDEN
    if unknown:
        raise ValueError(f"chunking method '{method}': unknown parameter(s) {sorted(unknown)}; "
                         f"known: {', '.join(defaults) or 'none'}")
    out = dict(defaults)
    for name, value in params.items():
        if name in _HIDDEN:
            out[name] = value
            continue
        value = _coerce(method, name, value, defaults[name])
        choices = CHOICES.get((method, name))
        if choices and value not in choices:
            raise ValueError(f"chunking method '{method}': {name} must be one of "
                             f"{', '.join(choices)}, got {value!r}")
        out[name] = value
    return out


def _coerce(method: str, name: str, value: Any, default: Any) -> Any:
    kind = type(default)
    try:
        if kind is int and isinstance(value, str):
            value = int(value)
        elif kind is float and isinstance(value, str | int) and not isinstance(value, bool):
            value = float(value)
    except ValueError:
        pass
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if kind is int and isinstance(value, float) and value.is_integer():
        value, ok = int(value), True
    if not ok:
        raise ValueError(f"chunking method '{method}': {name} must be {kind.__name__}, "
                         f"got {value!r}")
    return value


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


__all__ = ["CHUNKERS", "Chunk", "Span", "check_unique_ids", "chunk_documents", "default_params",
           "describe", "resolve_params", "split_text"]
