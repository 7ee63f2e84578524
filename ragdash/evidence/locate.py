"""Where an answer occurs in a corpus: the sentences (units) that hold it.

Units are English sentences (`ragdash.evidence.sentences`: initials, abbreviations and decimal
numbers do not cut), further cut at blank lines, and at line breaks beside a layout line (a
heading, a Markdown `#` line or a table row, `ragdash.text.is_layout_line`) or before a list
item, so that a heading, a table row or a list item without a full stop is a unit of its own and
never rides along with the sentence after it (text extracted from PDF keeps a heading on the
line above its paragraph). Other single line breaks (a sentence wrapped in a PDF column) do not
cut.
A unit that is a whole line and a title or heading (`sentences.is_title_line`: a Markdown
heading, a heading of the document's layout, any document's title or heading, a short line
without sentence punctuation that reads as a heading, or a document's first line so) is a title
unit: never a part on its own. An answer found only in titles gets the title with the sentence
it heads; where it also occurs elsewhere, the titles are dropped.
An answer occurrence gives the run of units it touches, so an answer cut by a sentence break
still yields one candidate.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ragdash.data.schema import Document
from ragdash.evidence.normalize import FoldedText, fold, is_bounded
from ragdash.evidence.sentences import MARKDOWN_HEADING, is_title_line, sentence_spans, title_keys
from ragdash.text import is_layout_line, line_span, starts_list_item

MAX_MATCHES = 1000
"""The most distinct candidate spans kept per answer form (an answer like '1' is everywhere)."""
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_MARKER_ONLY = re.compile(r"\s*(?:\d+|[A-Za-z]|[IVXLC]+)[.)]\s*$")
TITLE_MAX_WORDS = 15
"""A document's first line without sentence punctuation is its title up to this many words."""


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
        layout = is_layout_line(line) or bool(MARKDOWN_HEADING.match(line.lstrip()))
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
    """The sentences of text[start:end]; a list marker alone ('3.' from '3. Other rules')
    stays with what follows it."""
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text[start:end]):
        if out and _MARKER_ONLY.match(text, start + out[-1][0], start + out[-1][1]):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return [(start + s, start + e) for s, e in out]


def title_units(text: str, spans: Sequence[tuple[int, int]], own: frozenset[str],
                names: frozenset[str], heading_starts: Sequence[int] = ()) -> set[int]:
    """Indices of the `spans` (units of `text`) that are title units (module docstring): whole
    lines that start a layout heading or are titles by `sentences.is_title_line`, with `own`
    the document's title and headings and `names` every document's (`sentences.title_keys`).
    A document of one unit has only layout headings and Markdown headings as titles."""
    out = set()
    starts = set(heading_starts)
    for i, (s, e) in enumerate(spans):
        line_start, line_end = line_span(text, s)
        if e > line_end or text[line_start:s].strip() or text[e:line_end].strip():
            continue  # not a whole line
        line = text[s:e]
        first = i == 0 and len(line.split()) <= TITLE_MAX_WORDS
        if s in starts or MARKDOWN_HEADING.match(line) or (
                len(spans) > 1 and is_title_line(line, own, names, first)):
            out.add(i)
    return out


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
    two documents. `titles`: the indices of the title units (module docstring).
    """

    def __init__(self, documents: Sequence[Document]):
        self.documents = list(documents)
        self.units: list[tuple[int, int, int]] = []  # (doc, start, end)
        self.titles: set[int] = set()
        names = title_keys([*(d.title for d in self.documents),
                            *(h.text for d in self.documents for h in d.headings)])
        self._first_unit: list[int] = []  # index of each document's first unit
        self._unit_starts: list[list[int]] = []
        self._folded: dict[int, FoldedText] = {}  # built for documents with a match only
        self._doc_starts: list[int] = []
        texts, pos = [], 0
        for d, doc in enumerate(self.documents):
            spans = unit_spans(doc.text)
            own = title_keys([doc.title, *(h.text for h in doc.headings)])
            self.titles.update(len(self.units) + i for i in title_units(
                doc.text, spans, own, names, [h.start for h in doc.headings]))
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

    def is_title(self, span: Span) -> bool:
        """Whether every unit of a span is a title unit."""
        return all(u in self.titles for u in range(span.first, span.last + 1))

    def headed(self, span: Span) -> Span | None:
        """A span of title units with the sentence they head (the next unit of the document
        that is not a title), or None when the document has no such unit."""
        end = self._first_unit[span.doc] + len(self._unit_starts[span.doc])
        after = next((u for u in range(span.last + 1, end) if u not in self.titles), None)
        return None if after is None else Span(span.doc, span.first, after)

    def untitled(self, spans: Sequence[Span]) -> list[Span]:
        """`spans` without those that are titles alone; when all are, each with the sentence
        it heads (module docstring)."""
        kept = [s for s in spans if not self.is_title(s)]
        if kept:
            return kept
        return list(dict.fromkeys(h for s in spans if (h := self.headed(s)) is not None))

    def locate(self, forms: Sequence[str]) -> tuple[list[Span], bool]:
        """The candidates of an answer: the spans holding its first form that occurs as whole
        words, else as part of a word (titles alone dropped or merged, `untitled`); and whether
        whole-word occurrences were found."""
        for bounded in (True, False):
            for form in forms:
                spans = self.untitled(self.find(form, bounded))
                if spans:
                    return spans, bounded
        return [], False
