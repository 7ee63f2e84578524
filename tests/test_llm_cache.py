"""The SQLite reply cache: keys, persistence, WAL, thread safety, no repeated requests."""

from __future__ import annotations

import sqlite3
import threading

from fakes.llm_server import FakeLLMServer, Reply, fast_settings

from ragdash.llm import LLMCache
from ragdash.llm.cache import cache_key
from ragdash.llm.generate import generate, generation_call
from ragdash.llm.prompts import generation_messages
from ragdash.llm.types import LLMResult
from ragdash.llm.wrappers import CacheOnly

MSG = [{"role": "user", "content": "hi"}]


def _result(text: str = "hello") -> LLMResult:
    return LLMResult(text=text, tokens_in=3, tokens_out=2, latency_s=0.5, model="m")


def test_key_covers_backend_model_messages_params_and_schema():
    base = cache_key("openai", "m", MSG, {"temperature": 0}, None)
    assert base == cache_key("openai", "m", [dict(MSG[0])], {"temperature": 0}, None)
    others = [cache_key("ollama", "m", MSG, {"temperature": 0}),
              cache_key("openai", "m2", MSG, {"temperature": 0}),
              cache_key("openai", "m", [{"role": "user", "content": "hi!"}], {"temperature": 0}),
              cache_key("openai", "m", MSG, {"temperature": 0.5}),
              cache_key("openai", "m", MSG, {"temperature": 0}, {"type": "object"})]
    assert len({base, *others}) == 6


def test_roundtrip_persists_across_connections_in_wal_mode(tmp_path):
    path = tmp_path / "c.sqlite"
    with LLMCache(path) as cache:
        assert cache.get("k") is None
        cache.put("k", "openai", _result())
    with LLMCache(path) as cache:
        hit = cache.get("k")
    assert hit is not None and hit.cached
    assert (hit.text, hit.tokens_in, hit.tokens_out, hit.latency_s, hit.model) == (
        "hello", 3, 2, 0.5, "m")
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"


def test_a_put_is_visible_to_another_connection_at_once(tmp_path):
    path = tmp_path / "c.sqlite"
    with LLMCache(path) as writer, LLMCache(path) as reader:
        writer.put("k", "openai", _result("committed"))
        assert reader.get("k").text == "committed"


def test_concurrent_threads(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    errors: list[Exception] = []

    def work(t: int) -> None:
        try:
            for i in range(40):
                cache.put(f"{t}-{i}", "openai", _result(f"{t}-{i}"))
                assert cache.get(f"{t}-{i}").text == f"{t}-{i}"
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(cache) == 320
    cache.close()


def test_second_identical_call_makes_no_request(tmp_path):
    reqs = [("q1", "bm25", 100, "Who?", "docs"), ("q2", "llm_only", None, "What?", None)]
    with FakeLLMServer(default="An answer.") as srv:
        settings = fast_settings(srv)
        first = generate(reqs, settings, cache=tmp_path / "c.sqlite")
        assert len(srv.chat_requests()) == 2
        second = generate(reqs, settings, cache=tmp_path / "c.sqlite")
        assert len(srv.chat_requests()) == 2
        changed = generate(reqs[:1], fast_settings(srv, temperature=0.7),
                           cache=tmp_path / "c.sqlite")
        assert len(srv.chat_requests()) == 3
    assert second["answer"].tolist() == first["answer"].tolist() == ["An answer."] * 2
    assert second["tokens_in"].tolist() == first["tokens_in"].tolist()
    assert changed["error"].isna().all()


def test_cache_only_answers_what_a_run_would_not_send_and_requests_nothing(tmp_path):
    """`CacheOnly` finds a reply under the very key the real backend stored it with; another
    temperature, an unseen prompt, or a cached reply the run's check would reject count as
    missing; no request is ever made."""
    path = tmp_path / "c.sqlite"
    with FakeLLMServer(default="An answer.") as srv:
        settings = fast_settings(srv)
        generate([("q1", "bm25", 100, "Who?", "docs")], settings, cache=path)
        sent = len(srv.chat_requests())
        asked = generation_messages("Who?", "docs")
        with LLMCache(path) as cache:
            replies = CacheOnly(settings, settings.model, cache)
            assert generation_call(asked)(replies).result.text == "An answer."
            assert replies.answered == {asked[0]["content"]}
            unseen = generation_messages("Why?", "docs")
            assert generation_call(unseen)(replies).error == "not in the reply cache"
            hotter = CacheOnly(fast_settings(srv, temperature=0.7), settings.model, cache)
            assert generation_call(asked)(hotter).error is not None
            key = cache_key("openai", settings.model, unseen, replies.call_params({}), None)
            cache.put(key, "openai", LLMResult("  ", 1, 1, 0.1, settings.model))
            assert "empty answer" in generation_call(unseen)(replies).error  # asked again
        assert len(srv.chat_requests()) == sent


def test_failed_calls_are_not_cached(tmp_path):
    with FakeLLMServer(default="") as srv:
        settings = fast_settings(srv, retries=0)
        bad = generate([("q", "bm25", 1, "Q?", "d")], settings, cache=tmp_path / "c.sqlite")
        srv.default = "Now it works."
        good = generate([("q", "bm25", 1, "Q?", "d")], settings, cache=tmp_path / "c.sqlite")
    assert bad["error"][0] is not None and good["answer"][0] == "Now it works."


def test_identical_prompts_in_one_run_are_sent_once():
    reqs = [("q1", "sim", 100, "Who?", "same docs"), ("q1", "reo", 100, "Who?", "same docs"),
            ("q1", "bm25", 100, "Who?", "other docs")]
    with FakeLLMServer(default="An answer.") as srv:
        out = generate(reqs, fast_settings(srv, concurrency=3))
        assert len(srv.chat_requests()) == 2
    assert out["system"].tolist() == ["sim", "reo", "bm25"] and out["error"].isna().all()


def test_concurrent_twin_calls_make_one_request(tmp_path):
    from ragdash.llm import make_backend

    with FakeLLMServer(default=Reply(text="slow", delay_s=0.2)) as srv, \
            LLMCache(tmp_path / "c.sqlite") as cache:
        backend = make_backend(fast_settings(srv, timeout_s=5), cache=cache)
        results = []
        threads = [threading.Thread(target=lambda: results.append(backend.chat(MSG)))
                   for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(srv.chat_requests()) == 1
    assert [r.text for r in results] == ["slow"] * 4 and sum(r.cached for r in results) == 3
