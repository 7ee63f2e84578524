"""The LLM-assisted variant: for answers that occur verbatim in no document, ask the model to
quote the supporting sentence from the passages most similar to question + answer, and accept
the quote only when it occurs verbatim in one of those passages' documents.

Passages are the documents cut into pieces of at most PASSAGE_CHARS (whole sentences); they are
ranked like candidates (`ragdash.evidence.rank`, query = question + answer), and the best
`settings.passages` are shown. A quote is accepted when, after whitespace is collapsed (case and
punctuation kept), it holds at least MIN_WORDS words, occurs in a shown document and is not a
title or heading alone (`ragdash.evidence.locate`); the part is then the document's own text
span. Replies go through the LLM reply cache, as generation does.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragdash.chunking.base import split_text
from ragdash.evidence.locate import Corpus
from ragdash.evidence.normalize import FoldedText
from ragdash.evidence.rank import PRESELECT, Lexical, Vectors, combine, order
from ragdash.evidence.records import Candidate, QuestionEvidence
from ragdash.evidence.settings import QUOTE_STEP, EvidenceSettings
from ragdash.llm.prompts import NO_QUOTE, quote_messages

if TYPE_CHECKING:
    from pathlib import Path

    from ragdash.llm.cache import LLMCache
    from ragdash.llm.runner import CallOutcome
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend, Messages

PASSAGE_CHARS = 1200
MIN_WORDS = 3
REJECTED = "the LLM's quote occurs verbatim in none of the shown documents"
NO_SUPPORT = "the LLM found no supporting sentence"
TITLE = "the LLM quoted a title or heading, not a sentence"
_LABEL = re.compile(r"^\s*(?:\[\d+\]|passage\s*\d+\s*:|sentence\s*:)\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’«»`"


class Passages:
    """The corpus cut into passages, searchable by BM25 and MiniLM."""

    def __init__(self, corpus: Corpus, vectors: Vectors):
        self.corpus, self.vectors = corpus, vectors
        self.spans = [(d, s, e) for d, doc in enumerate(corpus.documents)
                      for s, e in split_text(doc.text, PASSAGE_CHARS)]
        self.lexical = Lexical([self.text(i) for i in range(len(self.spans))])

    def text(self, i: int) -> str:
        d, s, e = self.spans[i]
        return self.corpus.documents[d].text[s:e]

    def best(self, query: str, n: int, pool: int = PRESELECT) -> list[int]:
        """The `n` passages most similar to `query` (BM25 preselects `pool`, MiniLM reranks)."""
        bm25 = self.lexical.scores(query)
        top = order(bm25)[:pool]
        cos = self.vectors.cosine(query, [self.text(i) for i in top])
        return [top[i] for i in order(combine(bm25[top], cos))[:n]]


def messages(qe: QuestionEvidence, texts: Sequence[str]) -> Messages:
    """The quote prompt (`ragdash.llm.prompts.quote_messages`) for a question."""
    return quote_messages(qe.question, qe.answer, texts)


def clean(reply: str) -> str:
    """The quote in a reply: whitespace collapsed, a leading label and surrounding quotation
    marks removed."""
    text = " ".join(_LABEL.sub("", reply.strip()).split())
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def locate_quote(quote: str, corpus: Corpus, docs: Sequence[int]) -> tuple[int, int, int] | None:
    """(doc, start, end) of the first of `docs` holding `quote` verbatim (whitespace
    collapsed), or None."""
    if len(quote.split()) < MIN_WORDS or quote.upper() == NO_QUOTE:
        return None
    for d in dict.fromkeys(docs):
        folded = FoldedText(corpus.documents[d].text, fold=False)
        pos = folded.text.find(quote)
        if pos != -1:
            start, end = folded.original(pos, pos + len(quote))
            return d, start, end
    return None


def _accept(qe: QuestionEvidence, outcome: CallOutcome, corpus: Corpus, docs: list[int],
            vectors: Vectors) -> None:
    if outcome.result is None:
        qe.reason = f"{qe.reason}; the LLM call failed: {outcome.error}"
        return
    quote = clean(outcome.result.text)
    if quote.upper() == NO_QUOTE:
        qe.reason = f"{qe.reason}; {NO_SUPPORT}"
        return
    hit = locate_quote(quote, corpus, docs)
    if hit is None:
        qe.reason = f"{qe.reason}; {REJECTED}"
        return
    d, start, end = hit
    span = corpus.covering(d, start, end)
    if span is not None and corpus.is_title(span):
        qe.reason = f"{qe.reason}; {TITLE}"
        return
    text = corpus.documents[d].text[start:end]
    bm25 = Lexical([text]).scores(qe.question)
    cos = vectors.cosine(qe.question, [text])
    score = float(combine(bm25, cos)[0])
    qe.candidates = [Candidate(corpus.documents[d].doc_id, start, end, text, round(score, 4),
                               round(float(bm25[0]), 4), round(float(cos[0]), 4), "llm")]
    qe.kept, qe.reason = [0], None


def quote_evidence(questions: Sequence[QuestionEvidence], corpus: Corpus, vectors: Vectors,
                   settings: EvidenceSettings, llm: LLMSettings, *,
                   cache: LLMCache | str | Path | None = None, backend: Backend | None = None,
                   progress: Callable[[str, int, int], None] | None = None) -> None:
    """Ask the LLM for a quote for each question (module docstring); an accepted quote becomes
    the question's one kept candidate, otherwise its reason says what happened."""
    if not questions or not corpus.documents:
        return
    from ragdash.llm.cache import open_cache
    from ragdash.llm.factory import open_backend
    from ragdash.llm.runner import chat_call, run_calls

    passages = Passages(corpus, vectors)
    shown = [passages.best(f"{q.question} {q.answer}", settings.passages) for q in questions]
    calls = [chat_call(messages(q, [passages.text(i) for i in top]))
             for q, top in zip(questions, shown, strict=True)]
    store = open_cache(cache)
    tick = (lambda d, t: progress(QUOTE_STEP, d, t)) \
        if progress else None
    try:
        with (contextlib.nullcontext(backend) if backend is not None
              else open_backend(llm, cache=store)) as be:
            outcomes = run_calls(be, calls, llm.concurrency or 1, tick)
    finally:
        if store is not None and store is not cache:
            store.close()
    for q, top, outcome in zip(questions, shown, outcomes, strict=True):
        _accept(q, outcome, corpus, [passages.spans[i][0] for i in top], vectors)
