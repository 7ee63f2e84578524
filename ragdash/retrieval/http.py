"""The `http` live retriever's client: POST `{"question", "k"}` to the user's endpoint, read
`[{"text", "id"?, "score"?}, ...]` back, every call bounded as the LLM clients' are
(`ragdash.llm.clients.bounds`): a deadline on the whole call, reply included (a watchdog shuts
the socket at the deadline, so a server dripping one byte at a time cannot keep it open), a
reply size cap (a declared length over it is refused before the body is read, a longer body as
soon as it passes the cap), an uncompressed reply only, retries with exponential backoff for
what may pass (timeouts, refused connections, 429, 5xx), no redirect followed.

Hosts: only those the operator allows in `RAGDASH_RETRIEVER_HOSTS` (comma-separated `host`,
`host:port` or `*.domain`); nothing else, loopback included, since a config is the only thing
naming the URL and the server's own loopback services (the local LLM, the dashboard) are what a
stray URL would reach. The API key comes from the environment variable the config names; it is
sent as `Authorization: Bearer`, kept out of every message (`ragdash.redact`) and never written.

Only the standard library: nothing here is imported before a live retriever is used.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from ragdash.redact import redact, remember

HOSTS_ENV = "RAGDASH_RETRIEVER_HOSTS"
"""The hosts an `http` live retriever may call, set by whoever runs ragdash."""
CHUNK_BYTES = 64 * 1024
BACKOFF_BASE_S, BACKOFF_MAX_S = 0.5, 8.0
"""The wait before retry i (0-based): min(BACKOFF_BASE_S * 2**i, BACKOFF_MAX_S), or the
server's Retry-After within BACKOFF_MAX_S."""


class RetrieverCallError(Exception):
    """One call that failed: its message (secrets redacted) and whether another try may pass."""

    def __init__(self, message: str, retryable: bool = False, retry_after: float | None = None):
        super().__init__(redact(message))
        self.retryable, self.retry_after = retryable, retry_after


class HostNotAllowed(ValueError):
    """The URL's host is not on the operator's allow-list."""


def allowed_hosts(environ: Mapping[str, str] | None = None, var: str = HOSTS_ENV) -> list[str]:
    """The entries of the allow-list in `var` (`RAGDASH_RETRIEVER_HOSTS`), lower-cased (empty:
    none allowed)."""
    raw = (os.environ if environ is None else environ).get(var, "")
    return [h.strip().lower().rstrip(".") for h in raw.replace(" ", ",").split(",")
            if h.strip()]


def _port(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"bad port in {parts.netloc!r}") from exc
    return port or (443 if parts.scheme == "https" else 80)


def _entry(entry: str) -> tuple[str, int | None]:
    """An allow-list entry as (host, port or None): `host`, `host:port`, `*.domain[:port]`,
    `[v6]`, `[v6]:port` or a bare IPv6 address."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        name, _, port = entry.partition(":")
    else:
        name, port = entry, ""
    return name, int(port) if port.isdigit() else None


def _host_allowed(host: str, port: int, entries: list[str]) -> bool:
    for entry in entries:
        name, want = _entry(entry)
        if want is not None and want != port:
            continue
        if name == host or name.startswith("*.") and host.endswith(name[1:]):
            return True
    return False


def parse_url(url: str) -> SplitResult:
    """`url` split, when it is an http(s) URL with a host and without credentials or fragment;
    ValueError saying what is wrong otherwise."""
    parts = urlsplit(str(url).strip())
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"must be an http:// or https:// URL, not {url!r}")
    if not parts.hostname:
        raise ValueError(f"has no host: {url!r}")
    if parts.username or parts.password:
        raise ValueError("must not hold credentials (a key goes in the environment variable "
                         "named by api_key_env, never in a config)")
    if parts.fragment:
        raise ValueError(f"must not have a #fragment: {url!r}")
    _port(parts)
    return parts


def check_host(url: str, environ: Mapping[str, str] | None = None, var: str = HOSTS_ENV,
               caller: str = "a live retriever") -> SplitResult:
    """`url` split when its host (and port) is on the allow-list in `var`; HostNotAllowed
    otherwise (`caller`: who would call it, for the message)."""
    parts = parse_url(url)
    host = (parts.hostname or "").lower().rstrip(".")
    entries = allowed_hosts(environ, var)
    if not _host_allowed(host, _port(parts), entries):
        shown = ", ".join(entries) if entries else "empty"
        raise HostNotAllowed(
            f"{host}:{_port(parts)} is not on the allow-list of hosts {caller} may call "
            f"({var}: {shown}); whoever runs ragdash allows a host with "
            f"{var}=host[:port],... (loopback too: it is not allowed by default)")
    return parts


def api_key(env_name: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The key in the environment variable `env_name` (None when no variable is named);
    ValueError when the variable is named but unset or empty."""
    if not env_name:
        return None
    key = (os.environ if environ is None else environ).get(env_name, "").strip()
    if not key:
        raise ValueError(f"the environment variable {env_name} (api_key_env) is not set")
    remember(key)
    return key


@dataclass(frozen=True)
class Bounds:
    """What one call may take: `timeout_s` from its start to its last byte, `max_bytes` of
    body."""

    timeout_s: float
    max_bytes: int


class _Watchdog:
    """Shuts the connection's socket at the deadline, which ends any read or write blocked on
    it."""

    def __init__(self, conn: http.client.HTTPConnection, timeout_s: float):
        self.conn, self.fired = conn, threading.Event()
        self.sock: socket.socket | None = None  # kept: a reply read to its close takes it
        self.timer = threading.Timer(timeout_s, self._fire)  # from the connection
        self.timer.daemon = True

    def _fire(self) -> None:
        self.fired.set()
        sock = self.sock or self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed meanwhile
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Watchdog:
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _snippet(body: bytes, n: int = 200) -> str:
    text = " ".join(body[: n * 4].decode("utf-8", "replace").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def post_json(url: str, payload: Mapping[str, Any], bounds: Bounds,
              headers: Mapping[str, str] | None = None) -> Any:
    """One POST of `payload` as JSON to `url` (already checked), its JSON reply decoded, within
    `bounds`; RetrieverCallError otherwise (retryable for what another try may pass)."""
    parts = parse_url(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, _port(parts), timeout=bounds.timeout_s)
    body = json.dumps(dict(payload), ensure_ascii=False).encode("utf-8")
    sent = {"Content-Type": "application/json", "Accept": "application/json",
            "Accept-Encoding": "identity", "User-Agent": "ragdash", **(headers or {})}
    start = time.monotonic()
    late = f"no complete reply within timeout_s = {bounds.timeout_s:g} s"
    try:
        with _Watchdog(conn, bounds.timeout_s) as dog:
            try:
                conn.connect()
                dog.sock = conn.sock
                if dog.fired.is_set():
                    raise TimeoutError(late)
                conn.request("POST", path, body=body, headers=sent)
                resp = conn.getresponse()
                status = resp.status
                if 300 <= status < 400:
                    where = resp.getheader("Location", "?")[:200]
                    raise RetrieverCallError(f"redirected ({status}) to {where}: redirects are "
                                             "not followed; give that URL in the config")
                encoding = (resp.getheader("Content-Encoding") or "").strip().lower()
                if encoding not in ("", "identity"):
                    raise RetrieverCallError(f"the reply is compressed ({encoding[:40]}) though "
                                             "asked not to be; ragdash reads replies "
                                             "uncompressed only, to bound their size")
                length = resp.getheader("Content-Length") or ""
                if length.isdigit() and int(length) > bounds.max_bytes:
                    raise RetrieverCallError(
                        f"reply too large ({int(length):,} bytes declared; the cap is "
                        f"{bounds.max_bytes:,} bytes, max_reply_mb)")
                data = bytearray()
                while chunk := resp.read1(CHUNK_BYTES):
                    data += chunk
                    if len(data) > bounds.max_bytes:
                        raise RetrieverCallError(
                            f"reply too large (over {bounds.max_bytes:,} bytes received; the "
                            "cap is max_reply_mb)")
                if dog.fired.is_set():
                    raise TimeoutError(late)
            except (OSError, http.client.HTTPException) as exc:
                if dog.fired.is_set() or time.monotonic() - start >= bounds.timeout_s \
                        or isinstance(exc, TimeoutError):
                    raise RetrieverCallError(f"timed out ({late})", retryable=True) from None
                raise RetrieverCallError(f"cannot reach the retriever ({type(exc).__name__}: "
                                         f"{exc})", retryable=True) from None
    finally:
        conn.close()
    if status == 429 or status >= 500:
        raise RetrieverCallError(f"the retriever answered {status}: {_snippet(bytes(data))}",
                                 retryable=True,
                                 retry_after=_retry_after(resp.getheader("Retry-After")))
    if status != 200:
        raise RetrieverCallError(f"the retriever refused the request ({status}): "
                                 f"{_snippet(bytes(data))}")
    try:
        return json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RetrieverCallError(f"the reply is not JSON ({exc}): {_snippet(bytes(data))}") \
            from None


def with_retries(call: Callable[[], Any], retries: int,
                 sleep: Callable[[float], None] = time.sleep) -> Any:
    """`call()`, tried again up to `retries` times after a retryable RetrieverCallError (waits:
    BACKOFF_BASE_S doubling, at most BACKOFF_MAX_S, or Retry-After within that); the last error
    says how many attempts were made."""
    for attempt in range(retries + 1):
        try:
            return call()
        except RetrieverCallError as exc:
            if not exc.retryable:
                raise
            if attempt == retries:
                tries = f"{retries + 1} attempt{'s' if retries else ''}"
                raise RetrieverCallError(f"{exc} (gave up after {tries})") from None
            wait = min(BACKOFF_BASE_S * 2 ** attempt, BACKOFF_MAX_S)
            if exc.retry_after is not None:
                wait = min(max(wait, exc.retry_after), BACKOFF_MAX_S)
            sleep(wait)
    raise AssertionError("unreachable")
