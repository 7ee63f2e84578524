"""Small text helpers shared by loaders and chunkers."""

from __future__ import annotations

import re

# The paper's sentence splitter: break on whitespace that follows '.', '?' or '!'.
SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the sentences of `text`, split as the paper's chunker does.

    The whitespace consumed by a break belongs to no sentence. Empty text gives no span.
    """
    spans, start = [], 0
    for m in SENTENCE_BREAK.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def split_sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# Layout lines of extracted documents (PDF/HTML/DOCX): headings and list markers carry no
# statement a question could rest on.
_SECTION_NUMBER = re.compile(
    r"^(?:#+\s*|\d+(?:\.\d+)+[.)]?\s+|(?:\d+|[IVXLC]+|[A-Za-z])[.)]\s+)")
_LIST_MARKER_AFTER = re.compile(r"[.)](?:\s|$)")
HEADING_MAX_WORDS = 8


def line_span(text: str, pos: int) -> tuple[int, int]:
    """(start, end) of the line of `text` that holds position `pos`, line breaks excluded."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end == -1 else end


def is_heading(line: str) -> bool:
    """Whether a line reads as a heading: at most HEADING_MAX_WORDS words, no sentence or clause
    punctuation at its end, no table separator, no digit past a leading section number, and
    either marked (`#`, `3.`, `2.1`, `IV.`) or capitalised (every word of four letters or more
    starts with a capital)."""
    line = line.strip()
    if not line or len(line.split()) > HEADING_MAX_WORDS or line[-1] in ".!?,;:" \
            or "|" in line or "\t" in line:
        return False
    marker = _SECTION_NUMBER.match(line)
    body = line[marker.end():] if marker else line
    if not body or any(ch.isdigit() for ch in body):
        return False
    long_words = [w for w in re.findall(r"[^\W\d_]+", body) if len(w) >= 4]
    return bool(marker) or (bool(long_words) and all(w[0].isupper() for w in long_words))


_TABLE_GAPS = re.compile(r"\S(?: {2,}|\t)\S.*\S(?: {2,}|\t)\S")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u25aa\u25cf\u2013]\s+|(?:\d+|[A-Za-z])[.)]\s+)")


def is_layout_line(line: str) -> bool:
    """A heading (`is_heading`) or a table row ('|' in it, or two column gaps of two spaces or a
    tab): lines a relevant part should not carry beside its sentence."""
    return is_heading(line) or "|" in line or bool(_TABLE_GAPS.search(line.strip()))


def starts_list_item(line: str) -> bool:
    """Whether a line opens a list item (a bullet, or a marker like '3.' or 'b)')."""
    return bool(_BULLET.match(line))


def in_layout(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a list marker (alone at its line's start, followed by '.' or
    ')') or lies on a heading line (`is_heading`)."""
    line_start, line_end = line_span(text, start)
    if end > line_end:
        return False
    if not text[line_start:start].strip(" \t(") and _LIST_MARKER_AFTER.match(text, end):
        return True
    return is_heading(text[line_start:line_end])
