"""What every chunker shares: the Chunk record, spans, progress and the max_chars split."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ragdash.text import sentence_spans

ProgressFn = Callable[[str, int, int], None]  # (message, done, total)
Progress = bool | ProgressFn | None


@dataclass(frozen=True)
class Chunk:
    """One chunk of a document; `start`/`end` are character offsets in the document's text.
    `page` (PDF, 1-based) and `heading` (the section's headings, 'A › B') are those at `start`,
    `last_page` that of the chunk's last character; None when the document has no such layout."""

    chunk_id: str  # f"{doc_id}#{i}", i = 0-based index of the chunk within its document
    doc_id: str
    title: str
    text: str
    start: int
    end: int
    page: int | None = None
    heading: str | None = None
    last_page: int | None = None


class Span(NamedTuple):
    """A chunk before it gets an id: its text and the document span it covers."""

    start: int
    end: int
    text: str


def stripped(text: str, start: int, end: int) -> Span | None:
    """The slice text[start:end] without surrounding whitespace, or None if it is blank."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    trail = len(piece) - len(piece.rstrip())
    if lead == len(piece):
        return None
    return Span(start + lead, end - trail, piece[lead: len(piece) - trail])


class Ticker:
    """Progress over `total` units: a tqdm bar (progress=True), a callback, or nothing."""

    def __init__(self, progress: Progress, desc: str, total: int, unit: str = "it"):
        self.desc, self.total, self.done = desc, total, 0
        self._fn = progress if callable(progress) else None
        self._bar = None
        if progress is True:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit)
        if self._fn:
            self._fn(desc, 0, total)

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        if self._fn:
            self._fn(self.desc, self.done, self.total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# --- max_chars ------------------------------------------------------------------------------

_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")


def split_text(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Local spans of `text`, each at most `max_chars` long and not blank.

    Whole sentences are packed greedily; a sentence longer than `max_chars` is cut at its last
    whitespace within the limit, else hard at `max_chars` characters.
    """
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in sentence_spans(text):
        if cur is not None and e - cur[0] <= max_chars:
            cur = (cur[0], e)
            continue
        if cur is not None:
            out.append(cur)
            cur = None
        if e - s <= max_chars:
            cur = (s, e)
        else:
            out.extend(_hard_cuts(text, s, e, max_chars))
    if cur is not None:
        out.append(cur)
    return [(s, e) for s, e in out if text[s:e].strip()]


def _hard_cuts(text: str, s: int, e: int, max_chars: int) -> list[tuple[int, int]]:
    out = []
    pos = s
    while True:
        while pos < e and text[pos].isspace():
            pos += 1
        if e - pos <= max_chars:
            if pos < e:
                out.append((pos, e))
            return out
        window = text[pos + 1: pos + max_chars + 1]  # a cut at index 1..max_chars
        m = _LAST_SPACE.search(window)
        cut = m.start() + 1 if m is not None else max_chars
        piece_end = pos + cut
        while piece_end > pos and text[piece_end - 1].isspace():
            piece_end -= 1
        out.append((pos, piece_end))
        pos += cut


def split_span(doc_text: str, span: Span, max_chars: int) -> list[Span]:
    """Split an over-long chunk into pieces of at most `max_chars`, keeping document offsets.

    Works for exact slices and for texts that differ from the document only in whitespace (the
    `reference` spacing of the semantic chunker), by aligning non-whitespace characters.
    """
    local = split_text(span.text, max_chars)
    if doc_text[span.start: span.end] == span.text:
        return [Span(span.start + a, span.start + b, span.text[a:b]) for a, b in local]
    src = [i for i, ch in enumerate(span.text) if not ch.isspace()]
    dst = [span.start + i for i, ch in enumerate(doc_text[span.start: span.end])
           if not ch.isspace()]
    aligned = len(src) == len(dst) and all(
        span.text[i] == doc_text[j] for i, j in zip(src, dst, strict=True))
    out = []
    for a, b in local:
        lo, hi = bisect_left(src, a), bisect_left(src, b) - 1
        if aligned and lo <= hi:
            out.append(Span(dst[lo], dst[hi] + 1, span.text[a:b]))
        else:
            out.append(Span(span.start, span.end, span.text[a:b]))
    return out
