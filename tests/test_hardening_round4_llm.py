"""Issue 31, item 7: an LLM call ends within `timeout_s` whatever the server does, a reply is
cut at a size cap derived from `max_tokens` without being read whole, and a reply the run
rejects is never written to the reply cache (an accepted one is)."""

from __future__ import annotations

import sqlite3
import threading
import time
import tracemalloc
import zlib
from pathlib import Path

import ollama  # noqa: F401  (imported here so that no call below pays for the import)
import openai  # noqa: F401
import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings

from ragdash.llm.generate import generate
from ragdash.llm.judge import Candidate, JudgeItem, judge

BACKENDS = ["openai", "ollama"]
QUESTION = ("q", "llm_only", None, "Capital of France?", None)


def _cached_texts(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT text FROM replies")]


def _generate_within(seconds: float, *args, **kwargs):
    """`generate(*args, **kwargs)` in a thread; (its frame or None, seconds taken); None when it
    is still running after `seconds` (the call did not end)."""
    out: dict = {}

    def run() -> None:
        out["frame"] = generate(*args, **kwargs)

    t0 = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    return out.get("frame"), time.monotonic() - t0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dripping_server_is_cut_at_the_call_deadline(backend):
    """One byte every 0.5 s resets httpx's per-read timeout forever; `timeout_s` = 2 s bounds
    each attempt, and the retry policy counts it as a timeout."""
    with FakeLLMServer(default=Reply(text="Paris.", drip_s=0.5)) as srv:
        settings = fast_settings(srv, backend, timeout_s=2.0, retries=1)
        out, took = _generate_within(12, [QUESTION], settings)
        assert out is not None, f"the call was still open after {took:.0f} s"
        assert len(srv.chat_requests()) == 2
    assert took < 2 * 2.0 + 3  # two attempts of timeout_s, backoff, client set-up and slack
    assert out["answer"].isna().all()
    assert "timed out" in out["error"][0] and "2 attempts" in out["error"][0]
    assert "timeout_s" in out["error"][0]


@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "until-close"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_huge_reply_is_cut_at_the_cap_without_being_read(backend, declare_length):
    """A 50 MB reply to a call with max_tokens 256: refused with a clear error after at most
    the cap (plus socket buffers) was sent, with little memory, and never cached."""
    size = 50 * 1024 * 1024
    with FakeLLMServer(default=Reply(pad=size, declare_length=declare_length)) as srv:
        settings = fast_settings(srv, backend, retries=0, max_tokens=256, timeout_s=20.0)
        tracemalloc.start()
        try:
            out, took = _generate_within(30, [QUESTION], settings)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        sent = srv.sent_bytes
    assert out is not None and took < 10
    assert out["answer"].isna().all()
    assert "too large" in out["error"][0] and "max_tokens" in out["error"][0]
    assert sent < 20 * 1024 * 1024  # the rest of the 50 MB was never sent
    assert peak < 24 * 1024 * 1024, f"peak traced memory {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compressed_reply_is_refused_before_it_is_inflated(backend):
    """A gzip bomb (50 MB of reply in ~50 KB): ragdash asks for uncompressed replies and
    refuses a compressed one instead of inflating it."""
    head = (b'{"id":"c","object":"chat.completion","created":0,"model":"fake-model",'
            b'"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",'
            b'"content":"') if backend == "openai" else (
        b'{"model":"fake-model","created_at":"2024-01-01T00:00:00Z","done":true,'
        b'"message":{"role":"assistant","content":"')
    tail = (b'"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
            if backend == "openai" else b'"}}')
    squeezer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    chunk = b"x" * 65536
    bomb = squeezer.compress(head) + b"".join(squeezer.compress(chunk) for _ in range(800))
    bomb += squeezer.compress(tail) + squeezer.flush()
    assert len(bomb) < 1024 * 1024  # 50 MiB of reply on the wire in well under 1 MiB
    with FakeLLMServer(default=Reply(raw=bomb, content_type="application/json",
                                     encoding="gzip")) as srv:
        out = generate([QUESTION], fast_settings(srv, backend, retries=0))
    assert out["answer"].isna().all() and "compressed" in out["error"][0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_too_large_reply_is_not_cached_and_an_accepted_one_is(tmp_path, backend):
    path = tmp_path / "replies.sqlite"
    with FakeLLMServer(default=Reply(pad=3 * 1024 * 1024)) as srv:
        settings = fast_settings(srv, backend, retries=1, max_tokens=256)
        bad = generate([QUESTION], settings, cache=path)
        assert bad["error"][0] is not None and len(srv.chat_requests()) == 2
        assert _cached_texts(path) == []
        srv.default = "Paris."
        good = generate([QUESTION], settings, cache=path)
        again = generate([QUESTION], settings, cache=path)
        assert len(srv.chat_requests()) == 3  # the accepted reply answers the re-run
    assert good["answer"].tolist() == again["answer"].tolist() == ["Paris."]
    assert _cached_texts(path) == ["Paris."]


def test_a_judge_reply_that_does_not_parse_is_not_cached(tmp_path):
    """The judge's unparsable reply gets a correction but is not stored; the corrected,
    accepted reply is, and a re-run sends only the first question again."""
    path = tmp_path / "replies.sqlite"
    prose, scores = "All three answers look fine to me.", '{"scores": [5, 4, 1]}'
    item = JudgeItem("q1", "Who wrote Hamlet?", "Shakespeare", ["Hamlet is by Shakespeare."],
                     [Candidate(s, f"answer from {s}") for s in ("llm_only", "bm25", "sim")])
    with FakeLLMServer(default=lambda body: scores if len(body["messages"]) > 1
                       else prose) as srv:
        settings = fast_settings(srv)
        first = judge([item], settings, cache=path, shuffle=False)
        assert len(srv.chat_requests()) == 2
        assert _cached_texts(path) == [scores]
        second = judge([item], settings, cache=path, shuffle=False)
        assert len(srv.chat_requests()) == 3
    assert first["score"].tolist() == second["score"].tolist() == [5, 4, 1]
    assert first["error"].isna().all() and second["error"].isna().all()
    assert _cached_texts(path) == [scores]
