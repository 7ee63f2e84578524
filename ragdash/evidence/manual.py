"""A person's own evidence, in review: a passage they paste (a candidate trimmed to what
supports the answer, or a sentence that supports an answer written in other words) is found in
the corpus, or a corpus sentence is picked from those most similar to the question and answer.

Either way the part is the document's own text span, as every relevant part is (the paper's
§2.2: a relevant part is a span of the corpus), marked `method` USER. A pasted passage is found
with case and whitespace runs ignored, after surrounding quotation marks are removed; the
documents of the question's candidates are searched first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragdash.evidence.locate import Corpus
from ragdash.evidence.normalize import FoldedText, fold
from ragdash.evidence.quotes import clean
from ragdash.evidence.rank import Lexical, order
from ragdash.evidence.records import USER, Candidate, QuestionEvidence

MIN_WORDS = 2
SUGGESTED = 5


class Searchable:
    """A corpus with one folded text per document (built when first searched) and BM25 over
    its units, for pasting and picking evidence."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self._folded: dict[int, FoldedText] = {}
        self._lexical: Lexical | None = None
        self._doc_index = {d.doc_id: i for i, d in enumerate(corpus.documents)}

    def _text(self, d: int) -> FoldedText:
        if d not in self._folded:
            self._folded[d] = FoldedText(self.corpus.documents[d].text)
        return self._folded[d]

    def find(self, passage: str, prefer: Sequence[str] = ()) -> Candidate:
        """The part a pasted passage is (module docstring); ValueError says why there is none."""
        words = fold(clean(passage))
        if len(words.split()) < MIN_WORDS:
            raise ValueError(f"paste at least {MIN_WORDS} words of a document")
        first = [self._doc_index[p] for p in prefer if p in self._doc_index]
        for d in dict.fromkeys([*first, *range(len(self.corpus.documents))]):
            pos = self._text(d).text.find(words)
            if pos != -1:
                start, end = self._text(d).original(pos, pos + len(words))
                return self._candidate(d, start, end)
        raise ValueError("the passage occurs in no document (case and spacing are ignored, "
                         "every other character must match)")

    def suggest(self, query: str, n: int = SUGGESTED) -> list[Candidate]:
        """The `n` corpus units most similar to `query` by BM25 (none that shares no word,
        no title or heading, each text once)."""
        if self._lexical is None:
            self._lexical = Lexical([self.corpus.unit_text(u)
                                     for u in range(len(self.corpus.units))])
        scores = self._lexical.scores(query)
        top: dict[str, int] = {}
        for u in order(scores):
            if len(top) == n or scores[u] <= 0:
                break
            if u not in self.corpus.titles:
                top.setdefault(fold(self.corpus.unit_text(u)), u)
        return [self._candidate(*self.corpus.units[u], bm25=float(scores[u]))
                for u in top.values()]

    def _candidate(self, d: int, start: int, end: int, bm25: float = 0.0) -> Candidate:
        doc = self.corpus.documents[d]
        return Candidate(doc.doc_id, start, end, doc.text[start:end], 1.0, round(bm25, 4), 0.0,
                         USER)


def with_part(qe: QuestionEvidence, part: Candidate) -> tuple[QuestionEvidence, int]:
    """The question with `part` among its candidates (added once), and its index."""
    for i, c in enumerate(qe.candidates):
        if (c.doc_id, c.start, c.end, c.method) == (part.doc_id, part.start, part.end, USER):
            return qe, i
    return replace(qe, candidates=[*qe.candidates, part]), len(qe.candidates)
