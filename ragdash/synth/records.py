"""What generation produces: one attempt per sampled item (kept, or rejected with its reason),
and the whole result with its acceptance rate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragdash.chunking import Chunk
from ragdash.synth.reply import Reply
from ragdash.synth.settings import MIN_SPAN_WORDS, SynthSettings

REASONS = {
    "llm_error": "the LLM call failed",
    "unparsable": "the reply could not be read as a question, answer and span",
    "empty": "the reply left a field empty",
    "not_a_question": "the question is not one question on one line ending with '?'",
    "circular": "the question states its own answer",
    "span_too_short": f"the span has fewer than {MIN_SPAN_WORDS} words",
    "span_not_verbatim": "the span does not occur verbatim in the document",
    "answer_not_in_span": "the answer is not in the span",
    "answer_in_layout": "the answer is only a heading or a list marker in the span",
    "duplicate": "a near-duplicate of a kept question",
    "leaked": "the LLM answers it without the document",
}
"""Why a pair is rejected, in the order the checks run (the first failed check is recorded)."""


@dataclass(frozen=True)
class Part:
    """A verified span: the document's own text[start:end] and the chunk it was written on."""

    doc_id: str
    start: int
    end: int
    text: str
    chunk_id: str


@dataclass
class Attempt:
    """One generated pair: the chunk(s) it was written on, the reply, the located parts, and
    `reason` (a REASONS key) with `detail` when it is rejected."""

    qid: str
    chunks: tuple[Chunk, ...]
    raw: str | None = None
    reply: Reply | None = None
    parts: list[Part] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""

    @property
    def kept(self) -> bool:
        return self.reason is None and bool(self.parts)

    def reject(self, reason: str, detail: str = "") -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown reject reason {reason!r}")
        self.reason, self.detail = reason, detail

    def why(self) -> str:
        """The reason in words, with its detail."""
        text = REASONS.get(self.reason or "", "")
        return f"{text}: {self.detail}" if self.detail else text


@dataclass
class SynthResult:
    """Every attempt in sample order, and what made them."""

    attempts: list[Attempt]
    settings: SynthSettings
    model: str
    prompt_version: str
    documents: int

    @property
    def kept(self) -> list[Attempt]:
        return [a for a in self.attempts if a.kept]

    @property
    def rejected(self) -> list[Attempt]:
        return [a for a in self.attempts if not a.kept]

    @property
    def acceptance(self) -> float | None:
        """Kept / generated (None when nothing was generated)."""
        return len(self.kept) / len(self.attempts) if self.attempts else None

    def summary(self) -> dict[str, Any]:
        """Counts for the command's report and the panel."""
        reasons = {r: n for r in REASONS
                   if (n := sum(a.reason == r for a in self.rejected))}
        return {"generated": len(self.attempts), "kept": len(self.kept),
                "rejected": len(self.rejected), "acceptance": self.acceptance,
                "reasons": reasons, "documents": self.documents,
                "documents_used": len({c.doc_id for a in self.attempts for c in a.chunks}),
                "model": self.model, "prompt_version": self.prompt_version,
                "settings": self.settings.to_dict()}
