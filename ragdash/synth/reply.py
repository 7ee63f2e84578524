"""Step 2, reading the reply: the question, the answer and the span(s) the model wrote.

Small models wrap the JSON in prose or code fences, use single quotes, leave trailing commas or
stop mid-string: `json_repair` mends these. A reply that is no JSON object but has labelled
lines ("Question: ...", "Answer: ...", "Span: ...") is read from those. Keys are matched
without regard to case, spaces or underscores, with a few synonyms ("quote", "evidence").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragdash.llm.prompts import SPAN_KEYS

_SYNONYMS = {"span": ("span", "quote", "evidence", "supportingspan", "sentence")}
_LINE = re.compile(r"^[\W_]*(question|answer|span[ _]?[12]?|quote|evidence)[\W_]*[:：]\s*(.*)$",
                   re.IGNORECASE)


@dataclass(frozen=True)
class Reply:
    """What a reply says; a field the model left out is ''."""

    question: str
    answer: str
    spans: tuple[str, ...]


def _key(name: object) -> str:
    return re.sub(r"[\s_\-]", "", str(name).casefold())


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value if _text(v))
    return " ".join(str(value).split())


def _fields(text: str) -> dict[str, Any] | None:
    """The reply's fields by normalised key: from its JSON object, else its labelled lines."""
    import json_repair

    try:
        data = json_repair.loads(text)
    except Exception:  # noqa: BLE001 (a mending library's failure is a reply we cannot read)
        data = None
    if isinstance(data, list):
        data = next((d for d in data if isinstance(d, dict)), None)
    if isinstance(data, dict) and data:
        return {_key(k): v for k, v in data.items()}
    lines = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            lines.setdefault(_key(m.group(1)), m.group(2))
    return lines or None


def _span(fields: dict[str, Any], name: str) -> str:
    key = _key(name)
    if key in fields:
        return _text(fields[key])
    if key == "span":
        return next((_text(fields[s]) for s in _SYNONYMS["span"] if s in fields), "")
    spans = fields.get("spans")  # span_1/span_2 given as a list
    if isinstance(spans, list) and len(spans) >= int(key[-1]):
        return _text(spans[int(key[-1]) - 1])
    return ""


def parse_reply(text: str, hops: int) -> Reply | None:
    """The reply's question, answer and `hops` spans, or None when it holds none of them."""
    fields = _fields(text or "")
    if not fields:
        return None
    reply = Reply(_text(fields.get("question")), _text(fields.get("answer")),
                  tuple(_span(fields, k) for k in SPAN_KEYS[hops]))
    if not (reply.question or reply.answer or any(reply.spans)):
        return None
    return reply
