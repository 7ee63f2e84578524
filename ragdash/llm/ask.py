"""One question to an LLM whose reply must parse: up to `max_corrections` correction messages,
then the error recorded, never a made-up value. The judge and the RAGAS/RAGChecker metrics ask
this way. The parse is the call's validator, so a reply that does not parse is never written to
the reply cache (a re-run asks that question again); a reply that parses is, at once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragdash.llm.types import Backend, LLMError, LLMResult, Messages


class UnreadableReply(ValueError):
    """A reply that does not hold what the prompt asked for (the caller corrects and asks again)."""


class _Rejected(LLMError):
    """A reply `ask`'s parse refused: not retried by the backend (`ask` answers it with a
    correction) and not cached; carries the reply and the problem."""

    def __init__(self, result: LLMResult, problem: str):
        super().__init__(f"unreadable reply: {problem}", kind="invalid_reply")
        self.result, self.problem = result, problem


@dataclass
class Exchange:
    """What the attempts of one question cost and left: the last reply, its model, the error
    (with its kind) if no reply parsed, and the tokens, latency and attempts added up."""

    raw: str | None = None
    error: str | None = None
    kind: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    model: str | None = None


def ask(backend: Backend, messages: Messages, schema: dict | None,
        parse: Callable[[str], Any], correction: Callable[[str], dict[str, str]],
        max_corrections: int, out: Exchange, *, what: str = "reply") -> Any:
    """The parsed reply, or None with `out.error` set (a backend error: its own kind; replies
    that never parse: "invalid_reply"). `parse` raises UnreadableReply on a bad reply, answered
    with `correction(problem)`; tokens and latency add up in `out`."""
    messages = list(messages)
    problem = ""
    parsed: list[Any] = []

    def check(result: LLMResult) -> None:
        try:
            parsed[:] = [parse(result.text)]
        except UnreadableReply as exc:
            raise _Rejected(result, str(exc)) from exc

    for _ in range(max_corrections + 1):
        try:
            res, rejected = backend.chat(messages, json_schema=schema, validate=check), None
            if not parsed:  # a backend that does not validate
                check(res)
        except _Rejected as exc:
            res, rejected = exc.result, exc
        except LLMError as exc:
            out.error, out.kind = str(exc), exc.kind
            return None
        out.attempts += 1
        out.raw, out.model = res.text, res.model
        out.tokens_in += res.tokens_in or 0
        out.tokens_out += res.tokens_out or 0
        out.latency_s += res.latency_s
        if rejected is None:
            return parsed[0]
        problem = rejected.problem
        messages += [{"role": "assistant", "content": res.text}, correction(problem)]
    out.error, out.kind = (f"invalid {what} after {max_corrections + 1} attempt"
                           f"{'s' if max_corrections else ''}: {problem}", "invalid_reply")
    return None
