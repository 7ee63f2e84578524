"""A scripted OpenAI- and Ollama-compatible LLM server on 127.0.0.1 for tests.

Each request takes the next scripted `Reply` (or the default when the script is empty):
a text, an HTTP error status, or a delay (to run past the client's timeout); a reply can also
be dripped one byte at a time (`drip_s`) or padded to a huge text streamed in chunks (`pad`).
Requests are recorded in memory (`requests`) so tests can count them and read what was sent;
`sent_bytes` counts the body bytes of padded replies the client took.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str = "ok"
    status: int = 200
    delay_s: float = 0.0
    tokens_in: int = 11
    tokens_out: int = 7
    error: str = "scripted failure"  # "{authorization}" in it echoes the request's header
    raw: bytes | None = None  # a 200 whose body is this instead of a chat reply
    content_type: str = "text/html"
    drip_s: float = 0.0  # send the whole response (status line on) one byte every drip_s
    pad: int = 0  # a chat reply whose text is `pad` bytes of "x", streamed in 64 KiB chunks
    declare_length: bool = True  # send Content-Length with a padded reply (else: until close)
    encoding: str | None = None  # a Content-Encoding header for a `raw` reply


Responder = Callable[[dict[str, Any]], "Reply | str"]


def _as_reply(r: Reply | str) -> Reply:
    return r if isinstance(r, Reply) else Reply(text=r)


class FakeLLMServer:
    """`with FakeLLMServer(["first", Reply(status=500)], default="ok") as srv: srv.openai_url`"""

    def __init__(self, replies: Iterable[Reply | str] = (),
                 default: Reply | str | Responder = "ok", model: str = "fake-model"):
        self.script: deque[Reply] = deque(_as_reply(r) for r in replies)
        self.default = default
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.sent_bytes = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    def push(self, *replies: Reply | str) -> None:
        with self._lock:
            self.script.extend(_as_reply(r) for r in replies)

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"] in ("/v1/chat/completions",
                                                               "/api/chat")]

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        d = self.default
        return _as_reply(d(body) if callable(d) else d)

    def start(self) -> FakeLLMServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    drip_s: float = 0.0
    encoding: str | None = None

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if self.drip_s:
            self._drip(status, data, content_type)
            return
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if self.encoding:
                self.send_header("Content-Encoding", self.encoding)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def _drip(self, status: int, data: bytes, content_type: str) -> None:
        """The whole response, status line and headers included, one byte every `drip_s`."""
        head = (f"HTTP/1.1 {status} OK\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode()
        self.close_connection = True
        whole = head + data
        try:
            for i in range(len(whole)):
                self.wfile.write(whole[i:i + 1])
                self.wfile.flush()
                time.sleep(self.drip_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up

    def _pad(self, body: dict[str, Any], reply: Reply, ollama: bool) -> None:
        """A 200 chat reply whose text is `reply.pad` bytes of "x", never built in memory."""
        model = body.get("model") or self.fake.model
        marker = "@@PAD@@"
        if ollama:
            doc: dict[str, Any] = {"model": model, "created_at": "2024-01-01T00:00:00Z",
                                   "done": True, "done_reason": "stop",
                                   "prompt_eval_count": reply.tokens_in,
                                   "eval_count": reply.tokens_out,
                                   "message": {"role": "assistant", "content": marker}}
        else:
            doc = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                   "model": model, "choices": [{"index": 0, "finish_reason": "stop", "message": {
                       "role": "assistant", "content": marker}}],
                   "usage": {"prompt_tokens": reply.tokens_in,
                             "completion_tokens": reply.tokens_out,
                             "total_tokens": reply.tokens_in + reply.tokens_out}}
        head, tail = (p.encode() for p in json.dumps(doc).split(marker))
        chunk = b"x" * 65536
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if reply.declare_length:
                self.send_header("Content-Length", str(len(head) + reply.pad + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            left = reply.pad
            while left > 0:
                part = chunk[:min(left, len(chunk))]
                self.wfile.write(part)
                left -= len(part)
                with self.fake._lock:
                    self.fake.sent_bytes += len(part)
            self.wfile.write(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading

    def do_GET(self) -> None:
        m = self.fake.model
        if self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model",
                                                         "owned_by": "fake"}]})
        elif self.path == "/api/tags":
            self._send(200, {"models": [{"name": m, "model": m}]})
        elif self.path == "/api/version":
            self._send(200, {"version": "0.0.0-fake"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if len(raw) < length:  # the client went away (killed) before sending its whole body:
            self.close_connection = True  # no request was made, none is recorded or answered
            return
        body = json.loads(raw or b"{}")
        with self.fake._lock:
            self.fake.requests.append({"path": self.path, "body": body,
                                       "authorization": self.headers.get("Authorization")})
        if self.path not in ("/v1/chat/completions", "/api/chat"):
            self._send(404, {"error": "not found"})
            return
        reply = self.fake.next_reply(body)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        ollama = self.path == "/api/chat"
        self.drip_s = reply.drip_s
        self.encoding = reply.encoding if reply.raw is not None else None
        if reply.pad:
            self._pad(body, reply, ollama)
        elif reply.raw is not None:
            self._send(200, reply.raw, reply.content_type)
        elif reply.status != 200:
            error = reply.error.replace("{authorization}", self.headers.get("Authorization") or "")
            self._send(reply.status, {"error": error} if ollama else
                       {"error": {"message": error, "type": "fake_error", "code": None}})
        elif ollama:
            self._ollama(body, reply)
        else:
            self._send(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model") or self.fake.model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.text}}],
                "usage": {"prompt_tokens": reply.tokens_in, "completion_tokens": reply.tokens_out,
                          "total_tokens": reply.tokens_in + reply.tokens_out}})

    def _ollama(self, body: dict[str, Any], reply: Reply) -> None:
        model = body.get("model") or self.fake.model
        final = {"model": model, "created_at": "2024-01-01T00:00:00Z", "done": True,
                 "done_reason": "stop", "prompt_eval_count": reply.tokens_in,
                 "eval_count": reply.tokens_out}
        if body.get("stream", True):  # NDJSON, as Ollama streams by default
            lines = [{"model": model, "created_at": final["created_at"], "done": False,
                      "message": {"role": "assistant", "content": reply.text}},
                     {**final, "message": {"role": "assistant", "content": ""}}]
            data = "".join(json.dumps(x) + "\n" for x in lines).encode()
            self._send(200, data, "application/x-ndjson")
        else:
            self._send(200, {**final, "message": {"role": "assistant", "content": reply.text}})


def fast_settings(server: FakeLLMServer, backend: str = "openai", **overrides: Any):
    """LLMSettings pointed at the fake server with short timeouts and backoff (tests)."""
    from ragdash.llm.settings import LLMSettings

    values: dict[str, Any] = {
        "backend": backend, "model": "fake-model",
        "base_url": server.url if backend == "ollama" else server.openai_url,
        "timeout_s": 2.0, "retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.05,
        "concurrency": 1}
    values.update(overrides)
    return LLMSettings(**values)


def prompt_of(request: dict[str, Any]) -> str:
    """The text of the last user message of a recorded chat request."""
    return [m for m in request["body"]["messages"] if m["role"] == "user"][-1]["content"]
