"""LLM settings: defaults, validation, manifest without secrets; API keys never reach disk."""

from __future__ import annotations

import json
import logging
import tempfile
import uuid
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, fast_settings

from ragdash.llm import Candidate, JudgeItem, LLMCache, LLMSettings
from ragdash.llm.generate import generate
from ragdash.llm.judge import judge


def test_defaults_depend_on_backend():
    assert LLMSettings().concurrency == 1
    assert LLMSettings(backend="openai").concurrency == 4
    assert LLMSettings(backend="ollama").model == "llama3"
    assert LLMSettings(backend="openai").model == "gpt-4o"
    s = LLMSettings()
    assert (s.temperature, s.retries) == (0.0, 3)


def test_invalid_values_are_refused_with_the_key_named():
    with pytest.raises(ValueError, match="llm.backend"):
        LLMSettings(backend="vllm")
    with pytest.raises(ValueError, match="concurrency"):
        LLMSettings(concurrency=0)
    # the same did-you-mean as a config section's unknown key (test_typed_llm_settings.py)
    with pytest.raises(ValueError, match="unknown key 'llm.temprature'; did you mean "
                                         "'llm.temperature'"):
        LLMSettings.from_config({"backend": "ollama", "temprature": 0.1})


@pytest.mark.parametrize("name", ["temperature", "max_tokens", "concurrency", "timeout_s",
                                  "retries", "backoff_base_s", "backoff_max_s"])
def test_the_settings_take_their_bounds_from_the_config_section(name):
    """Issue 48 §3: one declaration of each bound (LLMSpec's fields); the call settings and the
    config section refuse the same value beyond it, each naming the key."""
    from ragdash.config import ConfigError, load_spec
    from ragdash.llm.settings import declared_bounds

    whole, bounds = declared_bounds(name)
    assert bounds, name
    beyond = bounds["le"] + 1 if "le" in bounds else bounds.get("ge", bounds.get("gt")) - 1
    with pytest.raises(ValueError, match=f"^llm.{name} must be"):
        LLMSettings(backend="openai", **{name: beyond})
    with pytest.raises(ConfigError, match=f"llm.{name} must be"):
        load_spec(None, {f"llm.{name}": beyond})
    inside = bounds.get("le", bounds.get("ge", 1))
    assert getattr(LLMSettings(backend="openai", **{name: inside}), name) == inside


def test_backoff_is_exponential_and_capped():
    s = LLMSettings(backoff_base_s=0.5, backoff_max_s=3)
    assert [s.backoff(i) for i in range(5)] == [0.5, 1.0, 2.0, 3, 3]


def test_from_config_refuses_a_key_in_the_config():
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        LLMSettings.from_config({"backend": "openai", "api_key": "sk-abc"})


def test_explicit_key_is_held_in_memory_only():
    s = LLMSettings.from_config({"backend": "openai"}, api_key="sk-explicit-123")
    assert s.resolve_api_key() == "sk-explicit-123"
    assert "sk-explicit-123" not in repr(s)
    assert "sk-explicit-123" not in json.dumps(s.to_manifest())
    assert "api_key" not in s.to_manifest()


def test_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-456")
    assert LLMSettings(backend="openai").resolve_api_key() == "sk-env-456"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert LLMSettings(backend="openai").resolve_api_key() is None


def test_openai_without_a_key_is_a_clear_error(monkeypatch):
    from ragdash.llm import LLMError, make_backend

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        make_backend(LLMSettings(backend="openai"))


def test_env_key_appears_in_no_written_file(monkeypatch, tmp_path):
    key = f"sk-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # temp files land where we look
    log_file = tmp_path / "debug.log"
    handler = logging.FileHandler(log_file)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        with FakeLLMServer(default='{"scores": [5]}') as srv:
            settings = fast_settings(srv, "openai")
            assert settings.api_key is None
            with LLMCache(tmp_path / "cache.sqlite") as cache:
                answers = generate([("q1", "bm25", 1000, "Who?", "Some documents.")],
                                   settings, cache=cache)
                judged = judge([JudgeItem("q1", "Who?", "Ann", ["Ann did."],
                                          [Candidate("bm25", answers["answer"][0])])],
                               settings, cache=cache)
            sent = [r["authorization"] for r in srv.requests]
        (tmp_path / "run.json").write_text(json.dumps({"llm": settings.to_manifest()}))
        answers.to_parquet(tmp_path / "answers.parquet")
        judged.to_parquet(tmp_path / "judgments.parquet")
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(old_level)
    assert judged["score"].tolist() == [5]
    assert sent and all(a == f"Bearer {key}" for a in sent)  # the key was really used
    assert log_file.stat().st_size > 0
    written = [p for p in Path(tmp_path).rglob("*") if p.is_file()]
    assert any(p.name.startswith("cache.sqlite") for p in written)
    for path in written:
        assert key.encode() not in path.read_bytes(), f"API key found in {path}"
    assert key not in json.dumps(settings.to_manifest()) and key not in repr(settings)
