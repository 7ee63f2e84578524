"""A scripted OpenAI- and Ollama-compatible LLM server on 127.0.0.1 for tests.

Each request takes the next scripted `Reply` (or the default when the script is empty):
a text, an HTTP error status, or a delay (to run past the client's timeout). Requests are
recorded in memory (`requests`) so tests can count them and read what was sent.
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

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

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
        if reply.raw is not None:
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
