"""Defensive reading of the metric prompts' replies: small local models return broken JSON
(unclosed brackets, single quotes, prose around it), which `json_repair` mends; a reply that
still holds no usable value raises `ReplyParseError` (the caller asks again with a correction,
then records the error: never a 0)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import json_repair

from ragdash.llm.ask import UnreadableReply


class ReplyParseError(UnreadableReply):
    """A metric reply that does not hold what its prompt asked for."""


ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)
"""RAGChecker's checking labels (RefChecker); only entailment counts as "in"."""
_LABEL_WORDS = {"entail": ENTAILMENT, "support": ENTAILMENT, "yes": ENTAILMENT,
                "true": ENTAILMENT, "neutral": NEUTRAL, "not enough": NEUTRAL,
                "unknown": NEUTRAL, "no": NEUTRAL, "false": NEUTRAL, "contradict": CONTRADICTION}
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$", re.M)


def load(text: str) -> Any:
    """The JSON value in a reply, mended by json_repair (prose around it dropped); None when
    there is none."""
    if not isinstance(text, str) or not text.strip():
        return None
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        value = json_repair.loads(text[start:])
    except Exception:  # noqa: BLE001 (json_repair raises assorted errors on odd input)
        return None
    return None if value in ("", None) else value


def _field(data: Any, key: str) -> Any:
    """`data[key]`, else the only list in a mapping, else a bare list."""
    if isinstance(data, Mapping):
        if key in data:
            return data[key]
        lists = [v for v in data.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return data if isinstance(data, list) else None


def _text(item: Any) -> str | None:
    """A claim from a string, a {claim|text|statement: ...} mapping or a triple."""
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, Mapping):
        for k in ("claim", "statement", "text", "sentence"):
            if isinstance(item.get(k), str) and item[k].strip():
                return item[k].strip()
        return None
    if isinstance(item, list) and item and all(isinstance(x, str) for x in item):
        return " ".join(x.strip() for x in item if x.strip()) or None
    return None


def parse_claims(text: str, key: str = "claims") -> list[str]:
    """The claims of `{"claims": [...]}` (strings, mappings or triples), else of a bulleted or
    numbered list; an empty list is a valid reply (an answer without claims)."""
    items = _field(load(text), key)
    if isinstance(items, list):
        claims = [c for c in map(_text, items) if c]
        if len(claims) == len(items):
            return list(dict.fromkeys(claims))
        raise ReplyParseError(f"{len(items) - len(claims)} of the {key} are not text")
    bullets = _BULLET.findall(text or "")
    if bullets:
        return list(dict.fromkeys(b for b in bullets if b))
    raise ReplyParseError(f'no {key} found (expected {{"{key}": [...]}})')


def _label(value: Any) -> str | None:
    """An entailment label from a word, a boolean or 1/0."""
    if isinstance(value, bool):
        return ENTAILMENT if value else NEUTRAL
    if isinstance(value, int | float) and value in (0, 1):
        return ENTAILMENT if value == 1 else NEUTRAL
    if isinstance(value, Mapping):
        for k in ("verdict", "label", "result"):
            if k in value:
                return _label(value[k])
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("1", "0"):
            return ENTAILMENT if word == "1" else NEUTRAL
        for stem, label in _LABEL_WORDS.items():
            if word.startswith(stem):
                return label
    return None


def parse_labels(text: str, n: int, key: str = "verdicts") -> list[str]:
    """Exactly `n` entailment labels (LABELS) from `{key: [...]}` (words, 1/0 or booleans),
    else the label words in the text in order; ReplyParseError otherwise."""
    items = _field(load(text), key)
    if isinstance(items, list):
        labels = [_label(v) for v in items]
    else:
        found = re.findall(r"\b(entail\w*|neutral|contradict\w*)\b", (text or "").lower())
        labels = [_label(w) for w in found]
    if any(label is None for label in labels):
        raise ReplyParseError(f"a verdict is not one of {', '.join(LABELS)} or 1/0")
    if len(labels) != n:
        raise ReplyParseError(f"expected {n} verdict{'s' if n != 1 else ''}, found "
                              f"{len(labels)}")
    return labels  # type: ignore[return-value]


def parse_verdict(text: str) -> bool:
    """One yes/no verdict (`{"verdict": 1}`, 0, yes/no, true/false)."""
    data = load(text)
    value = data.get("verdict") if isinstance(data, Mapping) else data
    if value is None:
        m = re.fullmatch(r"\W*(1|0|yes|no|true|false)\W*", (text or "").strip().lower())
        value = m.group(1) if m else None
    label = _label(value) if not isinstance(value, list) else None
    if label is None:
        raise ReplyParseError('expected {"verdict": 1} or {"verdict": 0}')
    return label == ENTAILMENT


def parse_questions(text: str) -> tuple[list[str], bool]:
    """`{"questions": [...], "noncommittal": 0|1}`: the questions generated from an answer and
    whether the answer is noncommittal (RAGAS answer relevancy)."""
    data = load(text)
    questions = _field(data, "questions")
    if not isinstance(questions, list) or not questions:
        raise ReplyParseError('no questions found (expected {"questions": [...], '
                              '"noncommittal": 0 or 1})')
    qs = [q for q in map(_text, questions) if q]
    if len(qs) != len(questions):
        raise ReplyParseError("a question is not text")
    flag = data.get("noncommittal", 0) if isinstance(data, Mapping) else 0
    noncommittal = _label(flag)
    if noncommittal is None:
        raise ReplyParseError(f"noncommittal must be 0 or 1, not {flag!r}")
    return qs, noncommittal == ENTAILMENT


def sentences(text: str) -> list[str]:
    """The sentences of a gold answer (RAGAS context recall classifies each): split after
    . ! ? before a capital or a digit; a short span is one sentence."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", (text or "").strip())
    return [p.strip() for p in parts if p.strip()]

