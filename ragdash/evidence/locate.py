"""Where an answer occurs in a corpus: the sentences (units) that hold it.

Units are the paper's sentences (a break after '.', '?' or '!' followed by whitespace), further
cut at blank lines, and at line breaks beside a layout line (a heading or a table row,
`ragdash.text.is_layout_line`) or before a list item, so that a heading, a table row or a list
item without a full stop is a unit of its own and never rides along with the sentence after it
(text extracted from PDF keeps a heading on the line above its paragraph). Other single line
breaks (a sentence wrapped in a PDF column) do not cut.
An answer occurrence gives the run of units it touches, so an answer cut by a sentence break
("St. Louis") still yields one candidate.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ragdash.data.schema import Document
from ragdash.evidence.normalize import FoldedText, fold, is_bounded
from ragdash.text import is_layout_line, sentence_spans, starts_list_item

MAX_MATCHES = 1000
"""The most distinct candidate spans kept per answer form (an answer like '1' is everywhere)."""
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_MARKER_ONLY = re.compile(r"\s*(?:\d+|[A-Za-z]|[IVXLC]+)[.)]\s*$")


@dataclass(frozen=True)
class Span:
    """Units first..last (inclusive, indices into `Corpus.units`) of one document."""

    doc: int
    first: int
    last: int


def _layout_cuts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """text[start:end] cut at the line breaks beside a layout line or before a list item."""
    out, pos, prev_layout = [], start, False
    line_start = start
    while line_start <= end:
        nl = text.find("\n", line_start, end)
        line_end = end if nl == -1 else nl
        line = text[line_start:line_end]
        layout = is_layout_line(line)
        if line_start > start and line.strip() and (
                layout or prev_layout or starts_list_item(line)):
            out.append((pos, line_start - 1))
            pos = line_start
        if line.strip():
            prev_layout = layout
        if nl == -1:
            break
        line_start = nl + 1
    out.append((pos, end))
    return out


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The paper's sentences of text[start:end]; a list marker alone ('3.' from '3. Other
    rules') stays with what follows it."""
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text[start:end]):
        if out and _MARKER_ONLY.match(text, start + out[-1][0], start + out[-1][1]):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return [(start + s, start + e) for s, e in out]


def unit_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the units of a text, without surrounding whitespace."""
    blocks, pos = [], 0
    for m in _BLANK_LINE.finditer(text):
        blocks.append((pos, m.start()))
        pos = m.end()
    blocks.append((pos, len(text)))
    out = [unit for block in blocks for line in _layout_cuts(text, *block)
           for unit in _sentences(text, *line)]
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), s + len(text[s:e].rstrip()))
            for s, e in out if text[s:e].strip()]


class Corpus:
    """The documents, their units, and one case-folded text of the whole corpus to search.

    Documents are joined with '\\n', which no normalised answer holds, so no match crosses
    two documents.
    """

    def __init__(self, documents: Sequence[Document]):
        self.documents = list(documents)
        self.units: list[tuple[int, int, int]] = []  # (doc, start, end)
        self._first_unit: list[int] = []  # index of each document's first unit
        self._unit_starts: list[list[int]] = []
        self._folded: dict[int, FoldedText] = {}  # built for documents with a match only
        self._doc_starts: list[int] = []
        texts, pos = [], 0
        for d, doc in enumerate(self.documents):
            spans = unit_spans(doc.text)
            self._first_unit.append(len(self.units))
            self._unit_starts.append([s for s, _ in spans])
            self.units += [(d, s, e) for s, e in spans]
            texts.append(fold(doc.text))
            self._doc_starts.append(pos)
            pos += len(texts[-1]) + 1
        self.joined = "\n".join(texts)

    def folded(self, doc: int) -> FoldedText:
        if doc not in self._folded:
            self._folded[doc] = FoldedText(self.documents[doc].text)
        return self._folded[doc]

    def unit_text(self, unit: int) -> str:
        d, s, e = self.units[unit]
        return self.documents[d].text[s:e]

    def span_offsets(self, span: Span) -> tuple[int, int]:
        """(start, end) of a span in its document's text."""
        return self.units[span.first][1], self.units[span.last][2]

    def span_text(self, span: Span) -> str:
        """The document's own text of a span (verbatim, so it is a relevant part)."""
        s, e = self.span_offsets(span)
        return self.documents[span.doc].text[s:e]

    def covering(self, doc: int, start: int, end: int) -> Span | None:
        """The run of units of document `doc` that overlaps [start, end)."""
        starts = self._unit_starts[doc]
        if not starts:
            return None
        base = self._first_unit[doc]
        first = max(bisect_right(starts, start) - 1, 0)
        if self.units[base + first][2] <= start and first + 1 < len(starts):
            first += 1  # the occurrence starts in the whitespace after a unit
        last = max(bisect_right(starts, end - 1) - 1, first)
        return Span(doc, base + first, base + last)

    def find(self, form: str, bounded: bool = True) -> list[Span]:
        """The distinct unit runs holding `form` (a normalised answer), in corpus order;
        with `bounded`, only occurrences that are not cut out of a longer word."""
        out: dict[Span, None] = {}
        joined, pos = self.joined, self.joined.find(form)
        while pos != -1 and len(out) < MAX_MATCHES:
            end = pos + len(form)
            if not bounded or is_bounded(joined, pos, end):
                d = bisect_right(self._doc_starts, pos) - 1
                base = self._doc_starts[d]
                start, stop = self.folded(d).original(pos - base, end - base)
                span = self.covering(d, start, stop)
                if span is not None:
                    out[span] = None
            pos = joined.find(form, pos + 1)
        return list(out)

    def locate(self, forms: Sequence[str]) -> tuple[list[Span], bool]:
        """The candidates of an answer: the spans holding its first form that occurs as whole
        words, else as part of a word; and whether whole-word occurrences were found."""
        for bounded in (True, False):
            for form in forms:
                spans = self.find(form, bounded)
                if spans:
                    return spans, bounded
        return [], False
