"""Bounds on every request of the LLM clients: a total deadline and a reply size cap.

httpx's timeouts are per phase and per socket read, so a server sending one byte every few
seconds keeps a call open for ever, and nothing limits a reply's size. `harden(client)` puts
the clients' `httpx.Client` (openai's `httpx2`, ollama's `httpx`) under `bounded_call`: inside
it, every socket operation of the client waits at most until the call's deadline (`timeout_s`
from its start; past it: the stack's own `ReadTimeout`, which the clients report as a timeout)
and the bytes received count against `max_bytes` (`ReplyRefused` once over it, so a reply is
never read whole). Replies are asked for uncompressed (`Accept-Encoding: identity`) and a
compressed one is refused, so the bytes counted are the bytes the client decodes.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

REPLY_BYTES_PER_TOKEN = 64
"""Reply bytes allowed per token of `max_tokens`: a token is 3-4 characters of text, up to
~50 bytes as JSON-escaped UTF-8 (`\\ud83d\\ude00`...)."""
REPLY_ENVELOPE_BYTES = 64 * 1024
"""Headers and the JSON around the text (ids, usage, finish reason)."""
MIN_REPLY_BYTES = 1024 * 1024
"""The smallest cap: 1 MiB, whatever `max_tokens` is."""
UNCAPPED_MAX_TOKENS = 131_072
"""The `max_tokens` assumed when none is set (the server's own limit applies): 8 MiB."""
MAX_REPLY_BYTES = REPLY_BYTES_PER_TOKEN * UNCAPPED_MAX_TOKENS + REPLY_ENVELOPE_BYTES
"""The largest cap, whatever `max_tokens` says (8 MiB + 64 KiB): `llm.max_tokens` is at most
32,768 (`ragdash.llm.settings.MAX_TOKENS`, a 2 MiB cap), and a call made past those checks
still cannot ask for more."""


def reply_byte_limit(max_tokens: int | None) -> int:
    """The most bytes a reply to a call with this `max_tokens` may take on the wire: between
    MIN_REPLY_BYTES and MAX_REPLY_BYTES."""
    tokens = max_tokens if max_tokens and max_tokens > 0 else UNCAPPED_MAX_TOKENS
    tokens = min(int(tokens), UNCAPPED_MAX_TOKENS)
    return max(MIN_REPLY_BYTES, REPLY_BYTES_PER_TOKEN * tokens + REPLY_ENVELOPE_BYTES)


def mib(n: int) -> str:
    """`n` bytes in MiB for messages ("1.0 MiB")."""
    return f"{n / 2**20:.1f} MiB"


class ReplyRefused(Exception):
    """A reply refused while it arrived: larger than the cap, or compressed."""


@dataclass
class _Budget:
    deadline: float  # time.monotonic()
    timeout_s: float
    max_bytes: int
    max_tokens: int | None
    received: int = 0

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def too_large(self, size: str) -> ReplyRefused:
        tokens = self.max_tokens if self.max_tokens else "unset"
        return ReplyRefused(f"reply too large ({size}; the cap is {mib(self.max_bytes)} for "
                            f"max_tokens {tokens}): raise llm.max_tokens if replies this long "
                            "are expected")


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "ragdash_llm_call_budget", default=None)


@contextlib.contextmanager
def bounded_call(timeout_s: float, max_tokens: int | None) -> Iterator[None]:
    """Requests of hardened clients made in this block (this thread) end by `timeout_s` from
    now and receive at most `reply_byte_limit(max_tokens)` bytes."""
    token = _budget.set(_Budget(time.monotonic() + timeout_s, timeout_s,
                                reply_byte_limit(max_tokens), max_tokens))
    try:
        yield
    finally:
        _budget.reset(token)


def timeout_note(timeout_s: float) -> str:
    """What a timed-out call says about the deadline."""
    return f"no complete reply within llm.timeout_s = {timeout_s:g} s"


def refused_in(exc: BaseException) -> ReplyRefused | None:
    """The `ReplyRefused` that `exc` is or was raised from (a client may wrap it)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, ReplyRefused):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class _Stream:
    """A network stream whose reads and writes end by the call's deadline and whose received
    bytes count against the call's cap."""

    def __init__(self, inner: Any, core: Any):
        self._inner, self._core = inner, core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        budget = _budget.get()
        if budget is None:
            return self._inner.read(max_bytes, timeout)
        left = budget.left()
        if left <= 0:
            raise self._core.ReadTimeout(timeout_note(budget.timeout_s))
        data = self._inner.read(max_bytes, left if timeout is None else min(timeout, left))
        budget.received += len(data)
        if budget.received > budget.max_bytes:
            raise budget.too_large(f"over {mib(budget.max_bytes)} received")
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        budget = _budget.get()
        if budget is not None:
            left = budget.left()
            if left <= 0:
                raise self._core.WriteTimeout(timeout_note(budget.timeout_s))
            timeout = left if timeout is None else min(timeout, left)
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _Stream:
        budget = _budget.get()
        if budget is not None:
            timeout = budget.left() if timeout is None else min(timeout, budget.left())
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """A network backend whose connections end by the call's deadline (`_Stream`)."""

    def __init__(self, inner: Any, core: Any):
        self._inner, self._core = inner, core

    def _timeout(self, timeout: float | None) -> float | None:
        budget = _budget.get()
        if budget is None:
            return timeout
        left = budget.left()
        if left <= 0:
            raise self._core.ConnectTimeout(timeout_note(budget.timeout_s))
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> _Stream:
        stream = self._inner.connect_tcp(host, port, timeout=self._timeout(timeout),
                                         local_address=local_address,
                                         socket_options=socket_options)
        return _Stream(stream, self._core)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _Stream:
        stream = self._inner.connect_unix_socket(path, timeout=self._timeout(timeout),
                                                 socket_options=socket_options)
        return _Stream(stream, self._core)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _on_request(request: Any) -> None:
    """Asks for an uncompressed reply; the pool, connect, write and read timeouts of the request
    end by the call's deadline."""
    request.headers["Accept-Encoding"] = "identity"
    budget = _budget.get()
    timeouts = request.extensions.get("timeout")
    if budget is not None and isinstance(timeouts, dict):
        left = max(budget.left(), 0.001)
        request.extensions["timeout"] = {k: left if v is None else min(v, left)
                                         for k, v in timeouts.items()}


def _on_response(response: Any) -> None:
    """Refuses a compressed reply, and one whose declared length is over the cap, before its
    body is read."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise ReplyRefused(f"the server compressed its reply ({encoding[:40]}) though asked not "
                           "to; ragdash reads replies uncompressed only, to bound their size")
    budget = _budget.get()
    length = response.headers.get("content-length", "")
    if budget is not None and length.isdigit() and int(length) > budget.max_bytes:
        raise budget.too_large(f"{mib(int(length))} declared")


def harden(client: Any) -> Any:
    """`client` (an `httpx.Client` or `httpx2.Client`) with every transport's connections
    under `bounded_call` and the compression check; returns it. Raises RuntimeError when the
    client's transports cannot be bounded (an httpx version this code does not know)."""
    transports = [getattr(client, "_transport", None),
                  *getattr(client, "_mounts", {}).values()]
    bounded = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        inner = getattr(pool, "_network_backend", None)
        if inner is None:
            continue
        if not isinstance(inner, _Backend):
            core = importlib.import_module(type(pool).__module__.split(".")[0])
            pool._network_backend = _Backend(inner, core)
        bounded += 1
    if not bounded:
        raise RuntimeError(f"cannot bound the requests of {type(client).__name__}: no "
                           "connection pool with a network backend (unknown httpx version)")
    hooks = client.event_hooks
    client.event_hooks = {"request": [*hooks["request"], _on_request],
                          "response": [*hooks["response"], _on_response]}
    return client
