"""The local llama.cpp server: `python -m llama_cpp.server` on 127.0.0.1 serving a local model
(`ragdash.llm.local.models`) through its OpenAI-compatible API, for a `with` block
(`LocalServer`), in the foreground (`serve`, `ragdash llm serve`) or started on the first
request that misses the cache (`LazyLocalBackend`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragdash.children import die_with_parent
from ragdash.llm.clients import sampling_params
from ragdash.llm.clients.openai import OpenAIBackend
from ragdash.llm.local.models import ModelError, model_alias, resolve_model
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import LLMError, LLMResult, Messages

LOG_PREFIX = "ragdash-llama-server-"
"""Server logs live in the system temp folder as <prefix><pid of the ragdash process>-*.log."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_logs(folder: str | Path | None = None, max_age_s: float = 86_400) -> int:
    """Delete the server logs that a killed ragdash process left behind (its pid is gone; a
    log without a pid, from an older version, once a day old). Returns how many."""
    removed = 0
    for log in Path(folder or tempfile.gettempdir()).glob(f"{LOG_PREFIX}*.log"):
        pid = log.name[len(LOG_PREFIX):].split("-", 1)[0]
        try:
            stale = not _alive(int(pid)) if pid.isdigit() else \
                time.time() - log.stat().st_mtime > max_age_s
            if stale:
                log.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def server_command(model_path: Path, alias: str, *, host: str = "127.0.0.1", port: int = 8011,
                   n_ctx: int = 4096, n_threads: int = 2, python: str | None = None,
                   extra_args: Sequence[str] = ()) -> list[str]:
    return [python or sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx),
            "--n_threads", str(n_threads), "--model_alias", alias, *extra_args]


class LocalServer:
    """`python -m llama_cpp.server` on 127.0.0.1 for the duration of a `with` block.

    Waits until `/v1/models` answers (ModelError with the log tail on timeout or early exit);
    on exit terminates the server, then kills it if it does not stop.
    """

    def __init__(self, model: str | Path | None = None, *, port: int | None = None,
                 n_ctx: int = 4096, n_threads: int = 2, startup_timeout_s: float = 120.0,
                 log_path: str | Path | None = None, python: str | None = None,
                 extra_args: Sequence[str] = ()):
        self.model = model
        self.host = "127.0.0.1"
        self.port = port
        self.n_ctx, self.n_threads = n_ctx, n_threads
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.python = python
        self.extra_args = tuple(extra_args)
        self.alias: str | None = None
        self.proc: subprocess.Popen | None = None
        self._own_log = log_path is None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> LocalServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelError("llama-cpp-python is not installed; run scripts/build_local_llm.sh")
        path, self.alias = resolve_model(self.model)
        self.port = self.port or free_port(self.host)
        if self.log_path is None:
            remove_stale_logs()
            fd, name = tempfile.mkstemp(prefix=f"{LOG_PREFIX}{os.getpid()}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        cmd = server_command(path, self.alias, host=self.host, port=self.port, n_ctx=self.n_ctx,
                             n_threads=self.n_threads, python=self.python,
                             extra_args=self.extra_args)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                preexec_fn=die_with_parent(signal.SIGTERM))  # Linux: ends with us
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ModelError(f"llama_cpp.server exited with code {code} before it was "
                                 f"ready; log {self.log_path}:\n{self.log_tail()}")
            with (contextlib.suppress(OSError, urllib.error.URLError),
                  urllib.request.urlopen(url, timeout=2) as resp):
                if resp.status == 200:
                    return
            if time.monotonic() > deadline:
                raise ModelError(f"llama_cpp.server not ready after {self.startup_timeout_s:.0f}"
                                 f" s; log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.2)

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = Path(self.log_path).read_text(errors="replace") if self.log_path else ""
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace_s: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(grace_s)

    def close_log(self) -> None:
        """Delete a log file this server created itself."""
        if self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.stop()
        if exc_type is None:
            self.close_log()


def serve(model: str | Path | None = None, port: int = 8011, *, n_ctx: int = 4096,
          n_threads: int = 2) -> int:
    """Run the local server in the foreground until interrupted (`ragdash llm serve`)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError("llama-cpp-python is not installed; run scripts/build_local_llm.sh")
    path, alias = resolve_model(model)
    cmd = server_command(path, alias, port=port, n_ctx=n_ctx, n_threads=n_threads)
    print(f"serving {alias} ({path}) at http://127.0.0.1:{port}/v1 (OpenAI-compatible); "
          "Ctrl-C stops it", file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0


class LazyLocalBackend:
    """The local backend that starts its server on the first request (so a fully cached run
    starts nothing) and stops it on `close()`."""

    name = "local"

    def __init__(self, settings: LLMSettings, **server_kwargs: Any):
        self.settings = settings
        self.model = model_alias(settings.model)
        self._server_kwargs = server_kwargs
        self._server: LocalServer | None = None
        self._inner: OpenAIBackend | None = None
        self._lock = threading.Lock()

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return sampling_params(self.settings, params)

    def _backend(self) -> OpenAIBackend:
        with self._lock:
            if self._inner is None:
                try:
                    self._server = LocalServer(self.settings.model, **self._server_kwargs).start()
                except ModelError as exc:
                    raise LLMError(str(exc), kind="config") from exc
                self._inner = OpenAIBackend(self.settings, base_url=self._server.base_url,
                                            name="local", model=self.model)
            return self._inner

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult:
        return self._backend().chat(messages, json_schema=json_schema, **params)

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.stop()
                self._server.close_log()
                self._server = None
                self._inner = None
