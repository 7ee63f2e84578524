"""Finding evidence: for each question, the corpus sentences that hold its answer, ranked by
similarity to the question, the best one to `max_parts` (1-3) kept (relevant parts, the paper's
§2.2).

    result = find_evidence(dataset.examples, dataset.documents)
    result.found, result.missing          # questions with / without evidence

Steps: (1) the corpus is cut into units, English sentences (`locate`, `sentences`); (2)
candidates are the units holding the normalised answer (`normalize`), never a title alone, each
text once (copies of one document); (3) they are ranked by BM25 and MiniLM similarity to the
question and one to `settings.max_parts` are kept (`rank`); (4) answers of a sentence or more
that occur verbatim nowhere are aligned with the corpus sentences that support them (`align`;
with `settings.llm` the LLM confirms the candidates); (5) with `settings.llm`, shorter answers
that occur verbatim nowhere ask the LLM for a quote (`quotes`). A question left without evidence
keeps its reason; it is never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragdash.data.schema import Document, Example
from ragdash.evidence.locate import Corpus, Span
from ragdash.evidence.normalize import answer_forms, fold, is_yes_no
from ragdash.evidence.rank import PRESELECT, Embed, Lexical, Vectors, combine, keep, minilm, order
from ragdash.evidence.records import Candidate, EvidenceResult, QuestionEvidence
from ragdash.evidence.settings import REPLY_TOKENS, EvidenceSettings

__all__ = ["Candidate", "EvidenceResult", "QuestionEvidence", "find_evidence"]

if TYPE_CHECKING:
    from pathlib import Path

    from ragdash.llm.cache import LLMCache
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend

Progress = Callable[[str, int, int], None]
SHOWN = 5
"""Candidates kept per question for review (the kept ones are among them)."""
EMBED_BATCH = 256
"""Texts embedded between two progress reports."""
PART_WORD_PENALTY = 0.5
"""Confidence factor of a candidate where the answer occurs only inside a longer word."""

NO_ANSWER = "the answer is empty"
YES_NO = "a yes/no answer cannot be located by matching"
NOT_IN_CORPUS = "the answer occurs verbatim in no document"


def _start(example: Example) -> QuestionEvidence:
    return QuestionEvidence(example.qid, example.question, example.answer, dict(example.meta),
                            answers=example.answers)


def _locate(qe: QuestionEvidence, corpus: Corpus) -> tuple[list[Span], bool]:
    forms = answer_forms(qe.answer)
    if not forms:
        qe.reason = NO_ANSWER
        return [], False
    if is_yes_no(qe.answer):
        qe.reason = YES_NO
        return [], False
    spans, whole = corpus.locate(forms)
    qe.matches = len(spans)
    if not spans:
        qe.reason = NOT_IN_CORPUS
    return spans, whole


def _preselect(spans: list[Span], unit_scores: np.ndarray) -> tuple[list[Span], np.ndarray]:
    """The PRESELECT spans with the highest BM25 (a span scores its best unit)."""
    bm25 = np.array([unit_scores[s.first: s.last + 1].max() for s in spans], dtype=float)
    top = order(bm25)[:PRESELECT]
    return [spans[i] for i in top], bm25[top]


def candidates(corpus: Corpus, spans: Sequence[Span], bm25: np.ndarray, cosine: np.ndarray,
               factor: float = 1.0, method: str = "answer") -> list[Candidate]:
    """Candidates of one question, best first (at most SHOWN); a text found in several
    documents (two copies of one document) is listed once, where it ranks best."""
    scores = combine(bm25, cosine) * factor
    out: list[Candidate] = []
    seen: set[str] = set()
    for i in order(scores):
        span = spans[i]
        key = fold(corpus.span_text(span))
        if key in seen:
            continue
        seen.add(key)
        if len(out) == SHOWN:
            break
        start, end = corpus.span_offsets(span)
        out.append(Candidate(corpus.documents[span.doc].doc_id, start, end,
                             corpus.span_text(span), round(float(scores[i]), 4),
                             round(float(bm25[i]), 4), round(float(cosine[i]), 4), method))
    return out


def find_evidence(examples: Sequence[Example], documents: Sequence[Document],
                  settings: EvidenceSettings | None = None, *, embed: Embed | None = None,
                  llm: LLMSettings | None = None, cache: LLMCache | str | Path | None = None,
                  backend: Backend | None = None,
                  progress: Progress | None = None) -> EvidenceResult:
    """Evidence for every example (module docstring). `embed` replaces MiniLM; `llm` (with
    `settings.llm`) is the model asked for quotes, through the reply `cache`; `backend`
    replaces the one built from `llm`."""
    settings = settings or EvidenceSettings()
    say = progress or (lambda message, done, total: None)
    corpus = Corpus(documents)
    questions = [_start(e) for e in examples]
    if embed is None:  # load the model before any bar starts, so no bar stalls at 0
        say("evidence: loading the embedding model", 0, 1)
        embed = minilm()
        say("evidence: loading the embedding model", 1, 1)
    located = []
    for i, q in enumerate(questions):
        located.append(_locate(q, corpus))
        say("evidence: locating answers", i + 1, len(questions))
    vectors = Vectors(embed)
    lexical = None
    if any(spans for spans, _ in located):
        lexical = Lexical([corpus.unit_text(u) for u in range(len(corpus.units))])
        pre = [_preselect(spans, lexical.scores(q.question)) if spans else ([], np.zeros(0))
               for q, (spans, _) in zip(questions, located, strict=True)]
        texts = list(dict.fromkeys(t for q, (spans, _) in zip(questions, pre, strict=True)
                                   if spans for t in (q.question,
                                                      *(corpus.span_text(s) for s in spans))))
        for start in range(0, len(texts), EMBED_BATCH):  # the slow part, shown as it goes
            vectors.add(texts[start:start + EMBED_BATCH])
            say("evidence: embedding candidates", min(start + EMBED_BATCH, len(texts)),
                len(texts))
        for i, (q, (spans, bm25), (_, whole)) in enumerate(zip(questions, pre, located,
                                                              strict=True)):
            if spans:
                cos = vectors.cosine(q.question, [corpus.span_text(s) for s in spans])
                q.candidates = candidates(corpus, spans, bm25, cos,
                                          1.0 if whole else PART_WORD_PENALTY)
                q.kept = keep([c.confidence for c in q.candidates], settings.max_parts,
                              settings.margin)
            say("evidence: ranking candidates", i + 1, len(questions))
    from ragdash.evidence.align import align_evidence, alignable

    aligned = [q for q in questions if q.reason == NOT_IN_CORPUS and alignable(q.answer)]
    align_evidence(aligned, corpus, vectors, settings, lexical=lexical,
                   llm=llm if settings.llm else None, cache=cache, backend=backend, progress=say)
    if settings.llm and llm is not None:
        from ragdash.evidence.quotes import quote_evidence

        asked = [q for q in questions if not q.found and q.reason != NO_ANSWER
                 and not any(q is a for a in aligned)]
        quote_evidence(asked, corpus, vectors, settings, llm, cache=cache, backend=backend,
                       progress=say)
    return EvidenceResult(questions, settings)


def call_plan(examples: Sequence[Example], documents: Sequence[Document],
              settings: EvidenceSettings, llm: LLMSettings, *,
              embed: Embed | None = None) -> CallPlan:
    """The calls `find_evidence` would send with `llm` (quotes, and which sentences support an
    answer in other words), found by running it with a backend that sends nothing
    (`ragdash.llm.plan.Recording`): what a dry run prices, at REPLY_TOKENS a reply."""
    from ragdash.llm.plan import CallPlan, Recording

    recorder = Recording(llm.model or "")
    find_evidence(examples, documents, settings, embed=embed, llm=llm, backend=recorder)
    return CallPlan(recorder.calls, REPLY_TOKENS)

