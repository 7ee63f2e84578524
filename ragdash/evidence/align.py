"""Evidence for answers written in other words: each answer sentence aligned with the corpus
sentences that support it, within the passages most similar to question + answer.

For an answer that occurs verbatim in no document and holds at least MIN_WORDS words (a
statement, not a name or a number), split into English sentences a_1..a_n
(`ragdash.evidence.sentences`):

1. passages: the `settings.passages` passages most similar to question + answer
   (`ragdash.evidence.quotes.Passages`: BM25 preselects POOL times as many, MiniLM reranks); a
   passage whose sentences all came with a better one (a copy of a document) does not count;
2. each corpus sentence u of those passages (titles and headings left out, `locate`; each text
   once) gets, for each answer sentence a, three scores in
   [0, 1]: lexical = BM25(a, u) / BM25 of a sentence of average length holding every word of a
   once (the share of a's IDF weight that u holds, the BM25 way; Robertson & Zaragoza 2009),
   cos(a, u) and cos(q, u) (MiniLM). match(a, u) = mean(lexical, cos(a, u)) says how much of a
   u states; support(a, u) = mean of all three ranks the candidates and is the part's
   confidence (equal weights: no signal is favoured without data to say so);
3. u supports a when match(a, u) stands out from what unrelated sentences get: at least
   mean + Z * std of match(a, b) over a fixed background sample b of corpus sentences outside
   the passages (one-sided, Z = 3: an unrelated sentence scores that high about once in a
   thousand under a normal approximation); with fewer than MIN_BACKGROUND background sentences
   the background is too small to estimate, and FLOOR is the bar instead. (The question's
   cosine stays out of the test: the passages were chosen for it, so it says nothing about this
   answer sentence.) Per answer sentence the best u by support is kept when its match clears
   the bar, plus the next ones within `settings.margin` of its support that clear it too
   (`max_parts` in all);
4. with `--llm`, the model is shown each answer sentence and its LLM_CHOICES best candidates
   and asked which support it (an entailment check, `ragdash.llm.prompts.support_messages`);
   its choice replaces step 3's bar for that sentence. A reply that names no candidate, or a
   failed call, leaves step 3's choice.

An answer sentence without support is listed (`QuestionEvidence.unsupported`); the question is
kept when at least half of its answer sentences are supported, otherwise left out with the
reason. At most `max_parts` parts are kept per question: the best part of each supported answer
sentence first (by support), then the others. The confidence of a part is its support score.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragdash.evidence.locate import Corpus
from ragdash.evidence.normalize import fold, is_yes_no
from ragdash.evidence.quotes import Passages, clean
from ragdash.evidence.rank import Lexical, Vectors, order
from ragdash.evidence.records import Candidate, QuestionEvidence
from ragdash.evidence.sentences import split_sentences
from ragdash.evidence.settings import EvidenceSettings

if TYPE_CHECKING:
    from pathlib import Path

    from ragdash.llm.cache import LLMCache
    from ragdash.llm.runner import CallOutcome
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend

ALIGNED, ALIGNED_LLM = "aligned", "aligned-llm"
"""`Candidate.method` of an aligned part: kept by the score's bar, or confirmed by the LLM."""
MIN_WORDS = 5
"""Answers shorter than this are phrases (a name, a date): only the verbatim path finds them."""
Z = 3.0
BACKGROUND = 256
"""Background sentences: evenly spaced over the corpus, embedded once."""
MIN_BACKGROUND = 20
FLOOR = 0.5
"""The bar when the corpus is too small for a background: half of the scale."""
PER_SENTENCE = 3
"""Candidates shown per answer sentence (the kept ones are among them)."""
LLM_CHOICES = 3
POOL = 2
"""Passages preselected by BM25 per passage used (MiniLM reranks them): embedding is the cost."""
TOO_LITTLE = "only {k} of {n} answer sentences are supported by a corpus sentence"
_NUMBER = re.compile(r"\b(\d{1,2})\b")
Progress = Callable[[str, int, int], None]


def alignable(answer: str) -> bool:
    """Whether an answer is a statement to align (MIN_WORDS words or more, not yes/no)."""
    return len(fold(answer).split()) >= MIN_WORDS and not is_yes_no(answer)


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences (`ragdash.evidence.sentences`), blank ones dropped."""
    return [s.strip() for s in split_sentences(answer) if s.strip()]


@dataclass
class Scored:
    """The scores of corpus sentence `unit` for one answer sentence."""

    unit: int
    bm25: float
    lexical: float
    cosine: float
    question_cosine: float

    @property
    def match(self) -> float:
        """How much of the answer sentence this corpus sentence says (lexical and cosine)."""
        return (self.lexical + max(self.cosine, 0.0)) / 2

    @property
    def support(self) -> float:
        """The rank score and confidence: the match, and the relevance to the question."""
        return (self.lexical + max(self.cosine, 0.0) + max(self.question_cosine, 0.0)) / 3


@dataclass
class Alignment:
    """One answer sentence: its candidates best first, the bar, and the indices kept."""

    sentence: str
    scored: list[Scored]
    bar: float
    kept: list[int]


class Aligner:
    """Scores answer sentences against corpus sentences (module docstring)."""

    def __init__(self, corpus: Corpus, vectors: Vectors, settings: EvidenceSettings,
                 lexical: Lexical | None = None):
        self.corpus, self.vectors, self.settings = corpus, vectors, settings
        n = len(corpus.units)
        self.lexical = lexical or Lexical([corpus.unit_text(u) for u in range(n)])
        self.passages = Passages(corpus, vectors)
        sentences = [u for u in range(n) if u not in corpus.titles]
        self.background = sentences[::max(len(sentences) // BACKGROUND, 1)][:BACKGROUND]
        self.vectors.add([corpus.unit_text(u) for u in self.background])

    def units(self, query: str) -> list[int]:
        """The corpus sentences of the `settings.passages` passages most similar to `query`,
        titles left out, each text once (module docstring, step 1)."""
        out: list[int] = []
        seen: set[str] = set()
        n, used = self.settings.passages, 0
        for i in self.passages.best(query, POOL * n, POOL * n):
            if used == n:
                break
            span = self.corpus.covering(*self.passages.spans[i])
            if span is None:
                continue
            new = []
            for u in range(span.first, span.last + 1):
                key = fold(self.corpus.unit_text(u))
                if u not in self.corpus.titles and key not in seen:
                    seen.add(key)
                    new.append(u)
            used += bool(new)
            out += new
        return out

    def _score(self, sentence: str, question: str, units: Sequence[int]) -> list[Scored]:
        texts = [self.corpus.unit_text(u) for u in units]
        bm25 = self.lexical.scores(sentence)
        ideal = self.lexical.ideal(sentence)
        cos = self.vectors.cosine(sentence, texts)
        qcos = self.vectors.cosine(question, texts)
        return [Scored(u, float(bm25[u]), min(float(bm25[u]) / ideal, 1.0) if ideal else 0.0,
                       float(c), float(q)) for u, c, q in zip(units, cos, qcos, strict=True)]

    def bar(self, sentence: str, question: str, inside: set[int]) -> float:
        """The support an unrelated sentence rarely reaches (module docstring, step 3)."""
        outside = [u for u in self.background if u not in inside]
        if len(outside) < MIN_BACKGROUND:
            return FLOOR
        scores = np.array([s.match for s in self._score(sentence, question, outside)])
        return float(scores.mean() + Z * scores.std())

    def align(self, question: str, answer: str) -> list[Alignment]:
        """Each answer sentence with its scored candidates and the ones kept by the bar."""
        units = self.units(f"{question} {answer}")
        out = []
        for sentence in answer_sentences(answer):
            scored = self._score(sentence, question, units)
            scored = [scored[i] for i in order(np.array([s.support for s in scored]))]
            bar = self.bar(sentence, question, set(units))
            out.append(Alignment(sentence, scored[:PER_SENTENCE], bar,
                                 self._keep(scored[:PER_SENTENCE], bar)))
        return out

    def _keep(self, scored: Sequence[Scored], bar: float) -> list[int]:
        """The best candidate when its match clears the bar, and the next ones within
        `margin` of its score whose match clears it too."""
        if not scored or scored[0].match < bar:
            return []
        best = scored[0].support
        return [i for i, s in enumerate(scored[:self.settings.max_parts])
                if s.match >= bar and s.support >= best - self.settings.margin]


def _candidate(corpus: Corpus, s: Scored, sentence: str, method: str) -> Candidate:
    d, start, end = corpus.units[s.unit]
    return Candidate(corpus.documents[d].doc_id, start, end, corpus.unit_text(s.unit),
                     round(s.support, 4), round(s.bm25, 4), round(s.cosine, 4), method,
                     supports=sentence, question_cosine=round(s.question_cosine, 4),
                     lexical=round(s.lexical, 4))


def conclude(qe: QuestionEvidence, alignments: Sequence[Alignment], corpus: Corpus,
             confirmed: Sequence[list[int] | None] | None = None, max_parts: int = 3) -> None:
    """Set the question's candidates, kept parts (at most `max_parts`, module docstring),
    unsupported sentences and reason from its alignments; `confirmed[j]` (the LLM's choice for
    answer sentence j) replaces its bar."""
    entries = []  # (rank among its sentence's chosen or None, scored, answer sentence, method)
    unsupported = []
    for j, a in enumerate(alignments):
        choice = confirmed[j] if confirmed is not None else None
        chosen = sorted(a.kept if choice is None else choice, key=lambda i: -a.scored[i].support)
        method = ALIGNED if choice is None else ALIGNED_LLM
        entries += [(chosen.index(i) if i in chosen else None, s, a.sentence,
                     method if i in chosen else ALIGNED) for i, s in enumerate(a.scored)]
        if not chosen:
            unsupported.append(a.sentence)
    # chosen first: each answer sentence's best, then its next ones; within a rank best first
    entries.sort(key=lambda e: (e[0] is None, e[0] or 0, -e[1].support))
    candidates: list[Candidate] = []
    kept: list[int] = []
    seen: set[str] = set()
    for rank, s, sentence, method in entries:
        key = fold(corpus.unit_text(s.unit))
        if key in seen:  # a sentence supporting two answer sentences is one part
            continue
        seen.add(key)
        if rank is not None and len(kept) < max_parts:
            kept.append(len(candidates))
        candidates.append(_candidate(corpus, s, sentence, method))
    qe.candidates, qe.unsupported = candidates, unsupported
    supported = len(alignments) - len(unsupported)
    if alignments and kept and 2 * supported >= len(alignments):
        qe.kept, qe.reason = kept, None
    else:
        qe.kept = []
        qe.reason = f"{qe.reason}; " + TOO_LITTLE.format(k=supported, n=len(alignments))


def parse_choice(reply: str, texts: Sequence[str]) -> list[int] | None:
    """The candidates (0-based) a reply names: NONE gives [], numbers in range give those, a
    verbatim copy of a candidate gives it; anything else None (no usable answer)."""
    from ragdash.llm.prompts import NO_QUOTE

    text = clean(reply)
    if not text:
        return None
    if text.upper().startswith(NO_QUOTE):
        return []
    numbers = [int(n) - 1 for n in _NUMBER.findall(reply)]  # `clean` drops a leading "[1]"
    if numbers and all(0 <= n < len(texts) for n in numbers):
        return list(dict.fromkeys(numbers))
    folded = " ".join(text.split())
    hits = [i for i, t in enumerate(texts) if len(folded.split()) >= 3
            and folded in " ".join(t.split())]
    return hits[:1] or None


def _confirm(questions: Sequence[QuestionEvidence], alignments: Sequence[list[Alignment]],
             corpus: Corpus, llm: LLMSettings, cache: LLMCache | str | Path | None,
             backend: Backend | None, progress: Progress | None) -> list[list[list[int] | None]]:
    """The LLM's choice per answer sentence (None where it gave no usable answer)."""
    from ragdash.llm.cache import open_cache
    from ragdash.llm.factory import open_backend
    from ragdash.llm.prompts import support_messages
    from ragdash.llm.runner import chat_call, run_calls

    asks = [(qi, j, [corpus.unit_text(s.unit) for s in a.scored[:LLM_CHOICES]])
            for qi, aligned in enumerate(alignments) for j, a in enumerate(aligned) if a.scored]
    calls = [chat_call(support_messages(questions[qi].question, alignments[qi][j].sentence,
                                        texts)) for qi, j, texts in asks]
    store = open_cache(cache)
    tick = (lambda d, t: progress("evidence: asking the LLM which sentences support the "
                                  "answer", d, t)) if progress else None
    try:
        with (contextlib.nullcontext(backend) if backend is not None
              else open_backend(llm, cache=store)) as be:
            outcomes: list[CallOutcome] = run_calls(be, calls, llm.concurrency or 1, tick)
    finally:
        if store is not None and store is not cache:
            store.close()
    out: list[list[list[int] | None]] = [[None] * len(a) for a in alignments]
    for (qi, j, texts), outcome in zip(asks, outcomes, strict=True):
        if outcome.result is not None:
            out[qi][j] = parse_choice(outcome.result.text, texts)
    return out


def align_evidence(questions: Sequence[QuestionEvidence], corpus: Corpus, vectors: Vectors,
                   settings: EvidenceSettings, *, lexical: Lexical | None = None,
                   llm: LLMSettings | None = None, cache: LLMCache | str | Path | None = None,
                   backend: Backend | None = None, progress: Progress | None = None) -> None:
    """Align each question's answer with the corpus (module docstring); with `llm` the model
    confirms the candidates."""
    if not questions or not corpus.units:
        return
    aligner = Aligner(corpus, vectors, settings, lexical)
    alignments = []
    for i, q in enumerate(questions):
        alignments.append(aligner.align(q.question, q.answer))
        if progress:
            progress("evidence: aligning answers written in other words", i + 1, len(questions))
    confirmed = (_confirm(questions, alignments, corpus, llm, cache, backend, progress)
                 if llm is not None else [None] * len(questions))
    for q, aligned, choice in zip(questions, alignments, confirmed, strict=True):
        conclude(q, aligned, corpus, choice, settings.max_parts)
