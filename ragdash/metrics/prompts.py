"""The metric prompts (after RAGAS's and RAGChecker's published prompts), their JSON schemas
(sent as structured output where the backend takes it) and the correction after a reply that
cannot be read. Each prompt is one user message."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ragdash.metrics.parse import LABELS

QUESTIONS = 3
"""Questions generated from an answer (RAGAS answer relevancy's `strictness`)."""


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1))


def claims_prompt(question: str, text: str) -> str:
    """Claims of an answer (or of the gold answer): RAGChecker's claim extraction, RAGAS's
    statement generation."""
    return ("Break the answer below into claims: short factual statements, each "
            "understandable on its own (name the subject, use the question for context, no "
            "pronouns). Add nothing the answer does not state. If the answer states no fact "
            "(for example it says it cannot answer), return an empty list.\n\n"
            f"Question: {question}\nAnswer: {text}\n\n"
            'Reply with only a JSON object {"claims": ["...", ...]}.')


def check_prompt(question: str, reference: str, claims: Sequence[str]) -> str:
    """Each claim against one reference (the gold answer, the answer, or a chunk): RAGChecker's
    checker labels. As RefChecker's checker (which RAGChecker calls with the questions), the
    question comes with the reference: a short gold answer ("Denver Broncos") entails a claim
    ("The Denver Broncos represented the AFC") only read as the answer to its question."""
    return ("For each claim below, made in answer to the question, decide whether the reference "
            "text, which is related to the question, entails it (states it, or it follows from "
            "it read as an answer to the question), contradicts it, or neither (neutral).\n\n"
            f"Question: {question}\nReference:\n{reference}\n\n"
            f"Claims:\n{_numbered(claims)}\n\n"
            f'Reply with only a JSON object {{"verdicts": [...]}} holding {len(claims)} of '
            '"entailment", "neutral" or "contradiction", one per claim, in order.')


def nli_prompt(context: str, statements: Sequence[str]) -> str:
    """RAGAS faithfulness: each statement against the whole retrieved context."""
    return ("Judge the faithfulness of the statements below to the context. For each statement "
            "give 1 if it can be directly inferred from the context, 0 if it cannot.\n\n"
            f"Context:\n{context}\n\nStatements:\n{_numbered(statements)}\n\n"
            f'Reply with only a JSON object {{"verdicts": [...]}} holding {len(statements)} '
            "values 1 or 0, one per statement, in order.")


def questions_prompt(answer: str) -> str:
    """RAGAS answer relevancy: questions the answer answers, and whether it is noncommittal."""
    return (f"Write {QUESTIONS} different questions that the answer below answers, and say "
            "whether the answer is noncommittal (evasive, vague or ambiguous, such as \"I don't "
            "know\" or \"I cannot find that in the documents\": 1) or committal (0).\n\n"
            f"Answer: {answer}\n\n"
            'Reply with only a JSON object {"questions": ["...", ...], "noncommittal": 0}.')


def useful_prompt(question: str, gold: str, chunk: str) -> str:
    """RAGAS context precision (with a reference): was this chunk useful to reach the gold
    answer?"""
    return ("Given the question, its answer and a context, say whether the context was useful "
            "in arriving at the answer: 1 if useful, 0 if not.\n\n"
            f"Question: {question}\nAnswer: {gold}\nContext:\n{chunk}\n\n"
            'Reply with only a JSON object {"verdict": 1} or {"verdict": 0}.')


def attribution_prompt(question: str, context: str, gold_sentences: Sequence[str]) -> str:
    """RAGAS context recall: each sentence of the gold answer, attributable to the context?"""
    return ("Given a context and the sentences of an answer, classify each sentence: 1 if it "
            "can be attributed to the context, 0 if not.\n\n"
            f"Question: {question}\nContext:\n{context}\n\n"
            f"Answer sentences:\n{_numbered(gold_sentences)}\n\n"
            f'Reply with only a JSON object {{"verdicts": [...]}} holding {len(gold_sentences)} '
            "values 1 or 0, one per sentence, in order.")


def claims_schema() -> dict:
    return {"type": "object", "properties": {"claims": {"type": "array",
                                                         "items": {"type": "string"}}},
            "required": ["claims"], "additionalProperties": False}


def labels_schema(n: int, binary: bool) -> dict:
    item = {"type": "integer", "enum": [0, 1]} if binary else {"type": "string",
                                                                 "enum": list(LABELS)}
    return {"type": "object", "properties": {"verdicts": {"type": "array", "items": item,
                                                          "minItems": n, "maxItems": n}},
            "required": ["verdicts"], "additionalProperties": False}


def questions_schema() -> dict:
    return {"type": "object",
            "properties": {"questions": {"type": "array", "items": {"type": "string"},
                                         "minItems": QUESTIONS, "maxItems": QUESTIONS},
                           "noncommittal": {"type": "integer", "enum": [0, 1]}},
            "required": ["questions", "noncommittal"], "additionalProperties": False}


def verdict_schema() -> dict:
    return {"type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]}},
            "required": ["verdict"], "additionalProperties": False}


def correction(form: str, problem: str) -> dict[str, str]:
    """The follow-up user message after a reply that cannot be read."""
    return {"role": "user", "content": f"Your reply could not be used: {problem}. Reply again "
                                       f"with only {form}, and nothing else."}


def prompt_version() -> str:
    """A hash of every metric prompt's rendered text: part of the metrics stage's key."""
    texts = (claims_prompt("Q", "A"), check_prompt("Q", "R", ["c"]), nli_prompt("C", ["s"]),
             questions_prompt("A"), useful_prompt("Q", "G", "C"),
             attribution_prompt("Q", "C", ["s"]), correction("F", "P")["content"])
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]
