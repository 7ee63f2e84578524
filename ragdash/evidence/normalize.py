"""Answer and text normalisation for evidence matching, with a map back to the original text.

Normalised text: runs of whitespace become one space and case is folded (`str.casefold`).
A normalised answer also loses punctuation at its ends; its forms are the answer itself and,
when it starts with an English article, the answer without it.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

ARTICLES = ("the", "a", "an")
YES_NO = frozenset({"yes", "no"})
_WORD = re.compile(r"\S+")


def _is_edge_junk(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def strip_punctuation(text: str) -> str:
    """`text` without punctuation (Unicode category P*) or whitespace at either end."""
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed, punctuation stripped at the ends."""
    return strip_punctuation(" ".join(text.casefold().split()))


def answer_forms(answer: str) -> list[str]:
    """The normalised answer, then (if it starts with 'the', 'a' or 'an' followed by more
    words) the answer without that article; empty when nothing is left."""
    full = normalise(answer)
    if not full:
        return []
    forms = [full]
    first, _, rest = full.partition(" ")
    rest = strip_punctuation(rest)
    if first in ARTICLES and rest:
        forms.append(rest)
    return forms


def is_yes_no(answer: str) -> bool:
    """A yes/no answer: its words occur in countless sentences that do not support it."""
    return normalise(answer) in YES_NO


def fold(text: str) -> str:
    """Case folded, whitespace runs as one space (the text `FoldedText` maps back)."""
    return " ".join(_WORD.findall(text.casefold()))


def contains_answer(text: str, answer: str) -> bool:
    """Whether the normalised `text` holds one of the answer's forms."""
    folded = fold(text)
    return any(form in folded for form in answer_forms(answer))


def is_bounded(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is not cut out of a longer word: an end that is a letter or
    digit has no letter or digit beside it."""
    before = start > 0 and text[start].isalnum() and text[start - 1].isalnum()
    after = end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
    return not (before or after)


class FoldedText:
    """A text with whitespace runs collapsed to one space (and case folded when `fold`), and a
    map from spans of the folded text back to the original.

    A word whose case folding changes its length (German 'ß' -> 'ss') maps back whole.
    """

    def __init__(self, text: str, fold: bool = True):
        pieces: list[str] = []
        self._starts: list[int] = []  # where each word starts in the folded text
        self._words: list[tuple[int, int, bool]] = []  # (start, end, same length) in `text`
        pos = 0
        for m in _WORD.finditer(text):
            word = m.group().casefold() if fold else m.group()
            pieces.append(word)
            self._starts.append(pos)
            self._words.append((m.start(), m.end(), len(word) == m.end() - m.start()))
            pos += len(word) + 1
        self.text = " ".join(pieces)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the folded span [start, end) comes from."""
        return self._at(start, last=False), self._at(end - 1, last=True)

    def _at(self, pos: int, last: bool) -> int:
        i = bisect_right(self._starts, pos) - 1
        s, e, exact = self._words[i]
        offset = pos - self._starts[i]
        if not exact or offset >= e - s:  # a word that changed length, or the space after it
            return e if last else s
        return s + offset + 1 if last else s + offset


def answer_spans(text: str, answer: str) -> list[tuple[int, int]]:
    """(start, end) in `text` of every occurrence of the answer's first form found in it."""
    folded = FoldedText(text)
    for form in answer_forms(answer):
        out, pos = [], folded.text.find(form)
        while pos != -1:
            out.append(folded.original(pos, pos + len(form)))
            pos = folded.text.find(form, pos + len(form))
        if out:
            return out
    return []
