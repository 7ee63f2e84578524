"""Where a character of a document lies: its page (PDF) and the headings above it (HTML h1-h3,
DOCX Heading styles, Markdown #).

A document keeps its full extracted text; its layout is a list of page starts (the character
offset where each page begins, page 1 at 0) and a list of headings (offset, level, text). The
page and section of any offset, e.g. a chunk's start, are read from these: one home for both.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

MAX_LEVEL = 3
"""Headings of levels 1 to MAX_LEVEL are kept (h1-h3, Heading 1-3, # to ###)."""
SEPARATOR = " › "


class Heading(NamedTuple):
    """A heading of a document: it starts at character `start` of the text."""

    start: int
    level: int
    text: str


def page_at(pages: Sequence[int], offset: int) -> int | None:
    """The 1-based page holding character `offset`, or None when the document has no pages."""
    if len(pages) == 0:
        return None
    return max(1, bisect_right(pages, offset))


def section_paths(headings: Sequence[Heading]) -> list[str]:
    """For each heading, the path of headings it sits under and itself, e.g. 'A › B'."""
    stack: list[Heading] = []
    out = []
    for h in headings:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        out.append(SEPARATOR.join(x.text for x in stack))
    return out


class Layout:
    """The page and section of offsets in one document (headings sorted by start)."""

    def __init__(self, pages: Iterable[int] = (), headings: Iterable[Heading] = ()):
        self.pages = sorted(int(p) for p in pages)
        self.headings = sorted((Heading(*h) for h in headings), key=lambda h: h.start)
        self._starts = [h.start for h in self.headings]
        self._paths = section_paths(self.headings)

    def page(self, offset: int) -> int | None:
        return page_at(self.pages, offset)

    def heading(self, offset: int) -> str | None:
        """The section holding `offset` as a path of headings, or None before the first one."""
        i = bisect_right(self._starts, offset)
        return self._paths[i - 1] if i else None


class TextBuilder:
    """Joins text blocks with blank lines, noting where pages and headings start."""

    GAP = "\n\n"

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.length = 0
        self.pages: list[int] = []
        self.headings: list[Heading] = []

    def _next_start(self) -> int:
        return self.length + (len(self.GAP) if self.blocks else 0)

    def new_page(self) -> None:
        """The next block starts a page (an empty page starts where the next text does)."""
        self.pages.append(self._next_start())

    def add(self, text: str, heading_level: int | None = None) -> None:
        """Append a block (blank ones are dropped); a heading of level 1..MAX_LEVEL is noted."""
        text = text.strip()
        if not text:
            return
        start = self._next_start()
        if heading_level is not None and 1 <= heading_level <= MAX_LEVEL:
            self.headings.append(Heading(start, heading_level, " ".join(text.split())))
        self.blocks.append(text)
        self.length = start + len(text)

    def text(self) -> str:
        return self.GAP.join(self.blocks)

    def page_starts(self) -> tuple[int, ...]:
        """Page starts, those past the end (trailing empty pages) clamped to the text's end."""
        return tuple(min(p, self.length) for p in self.pages)


def to_columns(pages: Sequence[Sequence[int]], headings: Sequence[Sequence[Heading]]
               ) -> dict[str, list]:
    """The layout of documents as table columns: `pages` (lists of offsets) and `headings`
    (lists of {start, level, text}); {} when no document has one, so plain corpora keep their
    tables as they were."""
    if not any(len(p) for p in pages) and not any(len(h) for h in headings):
        return {}
    return {"pages": [[int(x) for x in p] for p in pages],
            "headings": [[Heading(*h)._asdict() for h in hs] for hs in headings]}


def from_columns(pages: object, headings: object) -> tuple[tuple[int, ...], tuple[Heading, ...]]:
    """A document's layout from the columns `to_columns` writes, as a table read back gives them
    (lists or arrays of offsets and of {start, level, text} or Heading; None or NaN when the
    table has no such column or the value is missing)."""
    def items(value: object) -> list:
        return [] if value is None or isinstance(value, float) else list(value)

    def heading(h: object) -> Heading:
        start, level, text = (h["start"], h["level"], h["text"]) if isinstance(h, dict) else h
        return Heading(int(start), int(level), str(text))

    return tuple(int(p) for p in items(pages)), tuple(heading(h) for h in items(headings))


def readable(documents: pd.DataFrame) -> pd.DataFrame:
    """A documents table for people: `pages` as a page count and `headings` as their texts
    joined with ' · ' (each left out when no document has one)."""
    import pandas as pd

    if not set(documents.columns) & {"pages", "headings"}:
        return documents
    rows = [from_columns(p, h) for p, h in zip(
        documents.get("pages", pd.Series(None, index=documents.index)),
        documents.get("headings", pd.Series(None, index=documents.index)), strict=True)]
    out = documents.assign(
        pages=[len(p) or None for p, _ in rows],
        headings=[" · ".join(h.text for h in hs) for _, hs in rows]).astype({"pages": "Int64"})
    return out.drop(columns=[c for c in ("pages", "headings")
                             if not out[c].replace("", None).notna().any()])
