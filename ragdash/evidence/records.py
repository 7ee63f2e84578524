"""What the evidence finder produces: candidates, each question's evidence, the whole result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ragdash.evidence.settings import EvidenceSettings, check


@dataclass(frozen=True)
class Candidate:
    """One possible relevant part: a span of a document and its scores."""

    doc_id: str
    start: int
    end: int
    text: str  # the document's own text[start:end]
    confidence: float  # the rank score (see ragdash.evidence.rank), in [0, 1]
    bm25: float
    cosine: float
    method: str = "answer"  # "answer" (holds the answer), "llm" (an LLM's verbatim quote),
    # "aligned"/"aligned-llm" (supports an answer sentence, `ragdash.evidence.align`) or USER
    supports: str = ""  # aligned: the answer sentence this part supports
    question_cosine: float | None = None  # aligned: MiniLM cosine with the question
    lexical: float | None = None  # aligned: BM25 share of the answer sentence, in [0, 1]


USER = "user"
"""`Candidate.method` of a part a person chose in review (`ragdash.evidence.manual`)."""


@dataclass
class QuestionEvidence:
    """What was found for one question: candidates best first, the indices kept, and the
    reason when none is kept."""

    qid: str
    question: str
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)
    candidates: list[Candidate] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    matches: int = 0  # distinct unit runs holding the answer
    reason: str | None = None
    reviewed: bool = False
    answers: tuple[str, ...] = ()  # every gold answer (`Example.answers`)
    unsupported: list[str] = field(default_factory=list)  # aligned: answer sentences with
    # no supporting corpus sentence

    @property
    def found(self) -> bool:
        return bool(self.kept)

    @property
    def parts(self) -> list[Candidate]:
        return [self.candidates[i] for i in self.kept]


@dataclass
class EvidenceResult:
    """The evidence of every question, in dataset order."""

    questions: list[QuestionEvidence]
    settings: EvidenceSettings = field(default_factory=EvidenceSettings)

    @property
    def found(self) -> list[QuestionEvidence]:
        return [q for q in self.questions if q.found]

    @property
    def missing(self) -> list[QuestionEvidence]:
        return [q for q in self.questions if not q.found]

    def summary(self, listed: int = 50) -> dict[str, Any]:
        """Counts for the run manifest and the command's report."""
        by_method: dict[str, int] = {}
        for q in self.found:
            by_method[q.parts[0].method] = by_method.get(q.parts[0].method, 0) + 1
        reasons: dict[str, int] = {}
        for q in self.missing:
            reasons[q.reason or "?"] = reasons.get(q.reason or "?", 0) + 1
        return {"questions": len(self.questions), "found": len(self.found),
                "missing": len(self.missing), "by_method": by_method,
                "parts": sum(len(q.kept) for q in self.found),
                "missing_reasons": reasons,
                "missing_qids": [q.qid for q in self.missing][:listed],
                "settings": self.settings.to_dict()}

    def replace_question(self, new: QuestionEvidence) -> EvidenceResult:
        return replace(self, questions=[new if q.qid == new.qid else q for q in self.questions])

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (`from_dict` reads it back)."""
        return {"settings": self.settings.to_dict(),
                "questions": [{**asdict(q), "answers": list(q.answers)}
                              for q in self.questions]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvidenceResult:
        """The result `to_dict` wrote; KeyError, TypeError or ValueError when it is not one."""
        questions = []
        for q in data["questions"]:
            q = dict(q)
            q["candidates"] = [Candidate(**c) for c in q["candidates"]]
            q["answers"] = tuple(q.get("answers", ()))
            q["kept"] = [int(i) for i in q["kept"]]
            if any(not 0 <= i < len(q["candidates"]) for i in q["kept"]):
                raise ValueError(f"question {q['qid']}: a kept index is out of range")
            questions.append(QuestionEvidence(**q))
        return cls(questions, check(data.get("settings")))
