"""The LLM layer's shared types: replies, errors, messages and the `Backend` interface.

Nothing here imports anything from ragdash but `ragdash.redact` (which imports nothing),
so every module of `ragdash.llm` can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ragdash.redact import redact

Message = dict[str, Any]
"""One chat message: `{"role": "system" | "user" | "assistant", "content": ...}`."""
Messages = list[Message]

ErrorKind = Literal["error", "timeout", "rate_limit", "server_error", "connection",
                    "invalid_reply", "bad_request", "auth", "config"]
ERROR_KINDS: tuple[ErrorKind, ...] = ("error", "timeout", "rate_limit", "server_error",
                                      "connection", "invalid_reply", "bad_request", "auth",
                                      "config")
"""The kinds an `LLMError` can have ("error": anything not classified)."""


@dataclass(frozen=True)
class LLMResult:
    """One reply: text, token counts (None when the server gives none), latency, model."""

    text: str
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float
    model: str
    cached: bool = False


class LLMError(RuntimeError):
    """A failed LLM call. `kind`: timeout, rate_limit, server_error, connection, invalid_reply,
    bad_request, auth, config (see ERROR_KINDS); `retryable` marks kinds worth another
    attempt. The message is redacted (`ragdash.redact`): no API key or bearer token in it."""

    def __init__(self, message: str, *, kind: str = "error", retryable: bool = False,
                 retry_after: float | None = None):
        super().__init__(redact(message))
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after


Validator = Callable[[LLMResult], None]
"""Checks a reply; raises a retryable `LLMError` to have it asked again, a non-retryable one to
reject it at once (raised to the caller). A rejected reply is never cached."""


class Backend(Protocol):
    """What generation and judging call: a named model answering chat messages.

    Raw clients (`ragdash.llm.clients`) take `json_schema` and sampling parameters; the
    wrapped backends of `ragdash.llm.factory` also take `validate` (a `Validator`).
    """

    name: str
    model: str

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The effective sampling parameters of a call with these per-call ones."""
        ...

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult: ...
