"""English sentences for evidence: where corpus text and answers are cut into sentences, and
which lines are titles or headings rather than sentences.

Sentences come from `sentencex` (Wikimedia's rule-based segmenter, compiled, with its English
abbreviation list built in: nothing to download at run time). It keeps initials ("Robert E.
Lee"), abbreviations ("U.S.", "e.g.", "No. 1"), decimal numbers ("3.5 million") and a closing
quotation mark with their sentence; a single line break does not cut. It never cuts inside a
pair of quotation marks, so the apostrophe of a clitic split off by a tokeniser ("the show 's",
"they 're", as in Natural Questions text) is hidden from it: taken for an opening quotation mark,
it would join the sentences up to the next apostrophe. Only evidence uses it: chunkers and
loaders keep the paper's splitter (`ragdash.text.sentence_spans`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sentencex import get_sentence_boundaries

from ragdash.text import is_heading

LANGUAGE = "en"
MARKDOWN_HEADING = re.compile(r"#{1,6}(?:\s|$)")
"""A Markdown heading line starts so (after optional indentation)."""
_CLITIC = re.compile(r"(?<=\s)['’](?=(?:s|re|ll|ve|d|m)\b)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?:[.!?…]|'')[\s\"'”’»)\]]*$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the sentences of `text`, surrounding whitespace
    excluded; blank text gives none."""
    out = []
    for b in get_sentence_boundaries(LANGUAGE, _CLITIC.sub("x", text)):  # same length
        start, end = b["start_index"], b["end_index"]
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            start += len(piece) - len(piece.lstrip())
            out.append((start, start + len(stripped)))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` (`sentence_spans`)."""
    return [text[s:e] for s, e in sentence_spans(text)]


def ends_sentence(text: str) -> bool:
    """Whether `text` ends as a sentence does ('.', '!', '?', '…' or "''", maybe then closing
    quotation marks or brackets, spaced or not)."""
    return bool(_SENTENCE_END.search(text.rstrip()))


def title_key(text: str) -> str:
    """A title or heading compared case- and spacing-blind, without Markdown's leading '#'."""
    text = text.strip()
    if MARKDOWN_HEADING.match(text):
        text = text.lstrip("#")
    return " ".join(text.casefold().split())


def title_keys(titles: Iterable[str]) -> frozenset[str]:
    """`title_key` of each non-blank title."""
    return frozenset(k for k in map(title_key, titles) if k)


def is_title_line(line: str, own: frozenset[str] = frozenset(),
                  names: frozenset[str] = frozenset(), first: bool = False) -> bool:
    """Whether a whole line is a title or heading, never a part on its own: a Markdown heading
    (`# ...`), the document's own title or a heading of its layout (`own`, as `title_keys`),
    or a line without sentence punctuation at its end that is another document's title or
    heading (`names`: a copy's), reads as a heading (`ragdash.text.is_heading`) or is the
    document's first line (`first`: a text file's title)."""
    text = line.strip()
    if not text or "\n" in text:
        return False
    if MARKDOWN_HEADING.match(text) or title_key(text) in own:
        return True
    return not ends_sentence(text) and (title_key(text) in names or first or is_heading(text))
