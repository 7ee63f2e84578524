"""The raw LLM clients behind the `Backend` interface, one module per client library.

`chat(messages, *, json_schema=None, **params) -> LLMResult` is implemented with the official
clients: `ragdash.llm.clients.ollama` (`ollama.Client`, `format=<schema>` for structured
output) and `ragdash.llm.clients.openai` (`openai.OpenAI` against any OpenAI-compatible
`base_url`; `response_format` with the schema where the server takes it, falling back to plain
text). The `local` backend is the OpenAI client against a `llama_cpp.server` started by
`ragdash.llm.local`. Clients make one attempt per call; retries and caching are wrappers
(`ragdash.llm.wrappers`).

Every request ends within `timeout_s` and a reply is refused once over a size cap derived from
`max_tokens` (`ragdash.llm.clients.bounds`): a refused reply is an `LLMError`, so it is retried
as other invalid replies are and never reaches the reply cache.

This module holds what both clients share; it imports neither of them (the client libraries
are imported when a client is built, not when ragdash starts).
"""

from __future__ import annotations

from typing import Any

from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import LLMError
from ragdash.redact import redact


def sampling_params(settings: LLMSettings, params: dict[str, Any]) -> dict[str, Any]:
    """Effective parameters of a call: settings, then `settings.options`, then per-call ones."""
    out = {"temperature": settings.temperature, "max_tokens": settings.max_tokens,
           "seed": settings.seed}
    out.update(settings.options)
    out.update(params)
    return out


def short(text: str, n: int = 300) -> str:
    """`text` (a server's words) on one line, redacted (no key or token in it), then cut to `n`
    characters."""
    text = redact(" ".join(str(text).split()))
    return text if len(text) <= n else text[: n - 1] + "…"


def refused(where: str, exc: Exception) -> LLMError:
    """The retryable error for a reply refused while it arrived (too large, compressed)."""
    return LLMError(f"{where}: {short(str(exc))}", kind="invalid_reply", retryable=True)


def not_a_reply(where: str, exc: Exception) -> LLMError:
    """The retryable error for a 200 whose body is not a chat response (not JSON, or JSON
    nested too deeply to parse: a RecursionError)."""
    why = ("its JSON is nested too deeply to parse" if isinstance(exc, RecursionError)
           else short(str(exc)))
    return LLMError(f"{where}: the server's reply is not a chat response ({why})",
                    kind="invalid_reply", retryable=True)
