"""Secrets kept out of error messages (the LLM layer's and the run manifest's). A server's
error body can echo the request's `Authorization` header; every LLM error message passes
through `redact` when it is made (`LLMError`, `clients.short`), and so does every stage error
in run.json, so the key reaches no answers or judgments file, manifest, log or console.

Nothing here imports anything else from ragdash.
"""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import quote

MASK = "[redacted]"
MIN_SECRET_CHARS = 8
"""Shorter values (`not-needed`-style placeholders aside) are not worth hiding and would mask
ordinary words."""

_CHAR = r"(?:[A-Za-z0-9._~+/=\-]|\\/|\\u[0-9a-fA-F]{4})"
"""A character of a token as it appears in text, JSON (`\\/`, `\\uXXXX` escapes) or a URL."""
_TOKEN = _CHAR + "+"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization: Bearer x / "Authorization": "Basic x" / authorization=x
    (re.compile(r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
                r"(?:(?:bearer|basic|token|apikey)\s+)?" + _TOKEN), r"\1" + MASK),
    (re.compile(r"(?i)\b(bearer\s+)" + _CHAR + "{8,}"), r"\1" + MASK),  # not "bearer of"
    # api_key=x, "api-key": "x", x-api-key: x, access_token=x
    (re.compile(r"(?i)(\b(?:x-)?(?:api[_-]?key|access[_-]?token|secret[_-]?key)\b[\"']?"
                r"\s*[:=]\s*[\"']?)" + _TOKEN), r"\1" + MASK),
    # OpenAI-style keys: sk-..., sk-proj-..., also inside other text
    (re.compile(r"\bsk-(?:[A-Za-z0-9_\-]|\\u[0-9a-fA-F]{4}){12,}"), MASK),
)

_known: set[str] = set()
_lock = threading.Lock()


def remember(secret: str | None) -> None:
    """Hide `secret` (an API key in use) from every message `redact` sees from now on, in its
    plain, JSON-escaped and URL-encoded spellings."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return
    escaped = json.dumps(secret)[1:-1]
    forms = {secret, escaped, escaped.replace("/", "\\/"), json.dumps(secret,
             ensure_ascii=False)[1:-1], quote(secret, safe="")}
    with _lock:
        _known.update(f for f in forms if len(f) >= MIN_SECRET_CHARS)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with every remembered secret, every one in `secrets`, and whatever looks like a
    credential (`Authorization: ...`, `Bearer <token>`, `api_key=...`, `sk-...` keys) replaced
    by `[redacted]`."""
    text = str(text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in (*sorted((s for s in secrets if s and len(s) >= MIN_SECRET_CHARS),
                           key=len, reverse=True), *known):
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
