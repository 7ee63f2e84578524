"""Step 3: a pair is kept only when each span occurs verbatim in its document and holds the
answer.

A span is found in its document's text with whitespace runs and case ignored (the
`ragdash.evidence.normalize` folding, which maps back to exact offsets), after a leading label
and surrounding quotation marks are removed (`ragdash.evidence.quotes.clean`); when it is not
found as written, it is tried once more without punctuation at its ends (a model often adds a
full stop). The occurrence inside the chunk the question was written on is taken first. The
part stored is the document's own text at the offsets found. A multi-hop reply may give the
two spans in the other order.

A question must read as one question: one line, at least MIN_QUESTION_WORDS words, and one
question mark, at its end. A question that states its own answer (the normalised answer as
whole words of the question; yes/no answers aside) is circular: it tests nothing a retriever
must find, so it is rejected.

The answer is consistent with the spans when one of them holds the normalised answer
(`contains_answer`: case, whitespace and end punctuation ignored, "the/a/an" dropped), or holds
every word of the answer but articles and MINOR_WORDS. An answer found in the spans only as a
list marker or on a heading line (`ragdash.text.in_layout`: "3" from "3. Other rules") is layout
the model misread as content, and the pair is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import permutations

from ragdash.chunking import Chunk
from ragdash.data.schema import Document
from ragdash.evidence.normalize import (
    FoldedText,
    answer_forms,
    contains_answer,
    fold,
    is_yes_no,
    strip_punctuation,
)
from ragdash.evidence.quotes import clean
from ragdash.synth.records import Attempt, Part
from ragdash.synth.settings import MIN_SPAN_WORDS
from ragdash.text import in_layout

MINOR_WORDS = frozenset({"the", "a", "an", "of", "in", "on", "at", "to", "and", "by", "for"})
_WORD = re.compile(r"\w+")
MIN_QUESTION_WORDS = 3


def answer_in(span: str, answer: str) -> bool:
    """Whether `span` states `answer` (module docstring)."""
    if contains_answer(span, answer):
        return True
    words = [w for w in _WORD.findall(answer.casefold()) if w not in MINOR_WORDS]
    have = set(_WORD.findall(span.casefold()))
    return bool(words) and all(w in have for w in words)


def is_one_question(question: str) -> bool:
    """Whether `question` reads as one question (module docstring)."""
    text = question.strip().rstrip("\"'”’ ")
    return ("\n" not in text and text.endswith("?") and text.count("?") == 1
            and len(_WORD.findall(text)) >= MIN_QUESTION_WORDS)


def answer_occurrences(text: str, start: int, end: int, answer: str) -> list[tuple[int, int]]:
    """(start, end) of each whole-word, case-insensitive occurrence of one of the answer's forms
    in text[start:end], whitespace runs matching any whitespace."""
    found = []
    for form in answer_forms(answer):
        pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, form.split())) + r"(?!\w)"
        found += [m.span() for m in re.compile(pattern, re.I).finditer(text, start, end)]
    return sorted(set(found))


def states_answer(question: str, answer: str) -> bool:
    """Whether `question` holds the normalised answer as whole words (module docstring)."""
    if is_yes_no(answer):
        return False
    text = fold(question)
    return any(re.search(rf"(?<!\w){re.escape(form)}(?!\w)", text)
               for form in answer_forms(answer))


class Verifier:
    """Checks attempts against the documents (each document folded once)."""

    def __init__(self, documents: Sequence[Document]):
        self.texts = {d.doc_id: d.text for d in documents}
        self._folded: dict[str, FoldedText] = {}

    def locate(self, span: str, chunk: Chunk) -> tuple[int, int] | None:
        """(start, end) of `span` in the chunk's document (module docstring), or None."""
        if chunk.doc_id not in self._folded:
            self._folded[chunk.doc_id] = FoldedText(self.texts[chunk.doc_id])
        folded = self._folded[chunk.doc_id]
        quote = clean(span)
        for form in dict.fromkeys((fold(quote), fold(strip_punctuation(quote)))):
            if not form:
                continue
            hits, pos = [], folded.text.find(form)
            while pos != -1:
                hits.append(folded.original(pos, pos + len(form)))
                pos = folded.text.find(form, pos + 1)
            if hits:
                inside = [h for h in hits if chunk.start <= h[0] and h[1] <= chunk.end]
                return (inside or hits)[0]
        return None

    def _parts(self, spans: Sequence[str], chunks: Sequence[Chunk]) -> list[Part] | None:
        parts = []
        for span, chunk in zip(spans, chunks, strict=True):
            hit = self.locate(span, chunk)
            if hit is None:
                return None
            start, end = hit
            parts.append(Part(chunk.doc_id, start, end, self.texts[chunk.doc_id][start:end],
                              chunk.chunk_id))
        return parts

    def check(self, attempt: Attempt) -> None:
        """Sets the attempt's parts, or rejects it with the first check it fails."""
        reply = attempt.reply
        if reply is None:
            attempt.reject("unparsable")
            return
        empty = [name for name, value in (("question", reply.question),
                                          ("answer", reply.answer)) if not value]
        empty += [f"span {i + 1}" if len(reply.spans) > 1 else "span"
                  for i, s in enumerate(reply.spans) if not clean(s)]
        if empty:
            attempt.reject("empty", ", ".join(empty))
            return
        if not is_one_question(reply.question):
            attempt.reject("not_a_question", repr(reply.question))
            return
        if states_answer(reply.question, reply.answer):
            attempt.reject("circular", repr(reply.answer))
            return
        short = [s for s in reply.spans if len(clean(s).split()) < MIN_SPAN_WORDS]
        if short:
            attempt.reject("span_too_short", repr(short[0]))
            return
        for order in permutations(range(len(reply.spans))):
            parts = self._parts([reply.spans[i] for i in order], attempt.chunks)
            if parts is not None:
                break
        else:
            attempt.reject("span_not_verbatim")
            return
        if not any(answer_in(p.text, reply.answer) for p in parts):
            attempt.reject("answer_not_in_span", repr(reply.answer))
            return
        if self._only_layout(parts, reply.answer):
            attempt.reject("answer_in_layout", repr(reply.answer))
            return
        attempt.parts = parts

    def _only_layout(self, parts: Sequence[Part], answer: str) -> bool:
        """Whether the answer occurs in the parts, and only as layout (module docstring)."""
        hits = [(self.texts[p.doc_id], s, e) for p in parts
                for s, e in answer_occurrences(self.texts[p.doc_id], p.start, p.end, answer)]
        return bool(hits) and all(in_layout(text, s, e) for text, s, e in hits)
