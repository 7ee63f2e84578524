"""Hardening round five, item 1: a key from the server's environment goes only to an endpoint
the operator allowed for it, never to a URL or a variable name a dashboard user chose; a job
process inherits only the variables it needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.waiting import wait_for

from ragdash import jobs
from ragdash.config import load_config
from ragdash.llm import keys
from ragdash.llm.settings import LLMSettings
from ragdash.stages.runner import requires, run_stages
from ragdash.sweep import parse_vary, plan

SECRET = "sk-test-SERVER-KEY-0123456789abcdef"
OTHER = "postgres://admin:hunter2@db/prod"
EVIL = "http://evil.example:8080/v1"


@pytest.fixture
def server_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("DATABASE_URL", OTHER)
    monkeypatch.delenv(keys.ENDPOINTS_ENV, raising=False)
    monkeypatch.delenv(keys.CONFINE_ENV, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize("url, allowed", [
    ("https://api.openai.com/v1", True),
    ("https://API.OpenAI.com:443/v1/", True),
    ("https://api.openai.com/v1/chat/completions", True),
    ("http://api.openai.com/v1", False),  # another scheme
    ("https://api.openai.com:8443/v1", False),  # another port
    ("https://api.openai.com/v10", False),  # a prefix that is not a path segment
    ("https://api.openai.com.evil.example/v1", False),
    ("https://api.openai.com@evil.example/v1", False),
    ("https://evil.example/https://api.openai.com/v1", False),
    ("file:///etc/passwd", False),
    ("not a url", False),
    ("http://[::1", False),
])
def test_the_providers_default_endpoint_and_nothing_that_only_looks_like_it(url, allowed,
                                                                            server_env):
    assert keys.may_send("OPENAI_API_KEY", url) is allowed


def test_the_operators_list_allows_more_endpoints_and_an_unlisted_variable_none(monkeypatch,
                                                                              server_env):
    assert not keys.may_send("DATABASE_URL", "https://api.openai.com/v1")
    assert not keys.may_send("OPENAI_API_KEY", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv(keys.ENDPOINTS_ENV, "OPENAI_API_KEY=http://10.0.0.5:8000/v1; "
                                           "VLLM_KEY=http://gpu:9000")
    assert keys.may_send("OPENAI_API_KEY", "http://10.0.0.5:8000/v1")
    assert keys.may_send("VLLM_KEY", "http://gpu:9000/v1")
    assert not keys.may_send("VLLM_KEY", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv(keys.ENDPOINTS_ENV, "OPENAI_API_KEY")
    with pytest.raises(ValueError, match=keys.ENDPOINTS_ENV):
        keys.operator_endpoints()


def test_a_confined_process_resolves_no_key_for_a_url_a_user_typed(monkeypatch, server_env):
    typed = LLMSettings(backend="openai", base_url=EVIL)
    default = LLMSettings(backend="openai")
    other_var = LLMSettings(backend="openai", api_key_env="DATABASE_URL")
    assert typed.resolve_api_key() == SECRET  # the command line is the operator's own
    monkeypatch.setenv(keys.CONFINE_ENV, "1")
    assert typed.resolve_api_key() is None
    assert other_var.resolve_api_key() is None
    assert default.resolve_api_key() == SECRET
    assert "not sent to http://evil.example" in typed.withheld_key()
    # a key the user typed goes where the user said
    assert LLMSettings(backend="openai", base_url=EVIL, api_key="sk-typed").resolve_api_key() \
        == "sk-typed"
    # the local backend's own server (or a URL given for it) gets no key either
    assert LLMSettings(backend="local").resolve_api_key("http://127.0.0.1:8081/v1") is None


def test_a_job_gets_only_the_variables_it_needs(server_env, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", "/srv/runs")
    evil = {"llm": {"backend": "openai", "base_url": EVIL}}
    any_var = {"llm": {"backend": "openai", "base_url": EVIL, "api_key_env": "DATABASE_URL"},
               "judge": {"llm": {"backend": "openai", "api_key_env": "DATABASE_URL"}}}
    for cfg in (evil, any_var, {"llm": {"backend": "local"}}):
        env = jobs.job_environment([cfg])
        assert SECRET not in env.values() and OTHER not in env.values(), cfg
        assert "aws-secret" not in env.values()
        assert env[keys.CONFINE_ENV] == "1" and env["RAGDASH_RUNS_ROOT"] == "/srv/runs"
        assert "PATH" in env
    default = jobs.job_environment([{"judge": {"llm": {"backend": "openai"}}}])
    assert default["OPENAI_API_KEY"] == SECRET
    typed = jobs.job_environment([evil], api_key="sk-typed")
    assert typed[jobs.API_KEY_ENV] == "sk-typed" and "OPENAI_API_KEY" not in typed


def test_a_sweep_value_naming_any_variable_gets_no_key(generic, tmp_path, server_env):
    ds, corpus = generic
    base = {"dataset": {"path": str(ds), "corpus": str(corpus)}, "retrievers": {"use": "bm25"}}
    vary = parse_vary("llm={backend: openai, base_url: 'http://x.example/v1', "
                      "api_key_env: DATABASE_URL}")
    planned = plan(None, base, [vary], runs_root=tmp_path / "sweep")
    assert planned and planned[0].cfg["llm"]["api_key_env"] == "DATABASE_URL"
    env = jobs.job_environment([p.cfg for p in planned])
    assert OTHER not in env.values() and SECRET not in env.values()


def _cfg(generic, tmp_path: Path, url: str, model: str, **llm) -> dict:
    ds, corpus = generic
    return load_config(None, {
        "dataset": {"path": str(ds), "corpus": str(corpus), "format": "auto", "limit": 2},
        "chunker": {"method": "none"}, "retrievers": {"use": "bm25"}, "budgets": "20:60:20",
        "tokenizer": "whitespace",  # no job here is about tokens: none loads Llama-3's (1 CPU-s)
        "runs_root": str(tmp_path / "runs"),
        "llm": {"backend": "openai", "model": model, "base_url": url, **llm},
        "generation": {"enabled": True, "budget": 60}})


def _generate(run_dir: Path, cfg: dict, state: str = "finished") -> jobs.Status:
    jobs.spawn(run_dir, "llm", cfg=cfg, stages=("generate",))
    done = wait_for(lambda: (s := jobs.status(run_dir)) and not s.active and s, 180, "the job")
    assert done.state == state, (run_dir / jobs.LOG).read_text()[-2000:]
    return done


def test_a_dashboard_job_sends_the_server_key_to_no_url_a_user_typed(generic, tmp_path,
                                                                     server_env, monkeypatch):
    with FakeLLMServer(default=Reply(text="An answer.")) as srv:
        cfg = _cfg(generic, tmp_path, srv.openai_url, "m1")
        run_stages(cfg, tmp_path / "runs" / "a", requires("generate"))
        _generate(tmp_path / "runs" / "a", cfg)  # (a) the URL typed, the key box empty
        cfg = _cfg(generic, tmp_path, srv.openai_url, "m2", api_key_env="DATABASE_URL")
        run_stages(cfg, tmp_path / "runs" / "b", requires("generate"))
        _generate(tmp_path / "runs" / "b", cfg)  # (b) any variable of the server, named
        sent = [r["authorization"] for r in srv.chat_requests()]
        assert len(sent) == 8 and set(sent) == {"Bearer not-needed"}
        # the operator allows this endpoint: then, and only then, the server's key goes there
        monkeypatch.setenv(keys.ENDPOINTS_ENV, f"OPENAI_API_KEY={srv.openai_url}")
        cfg = _cfg(generic, tmp_path, srv.openai_url, "m3")
        run_stages(cfg, tmp_path / "runs" / "c", requires("generate"))
        _generate(tmp_path / "runs" / "c", cfg)
        sent = [r["authorization"] for r in srv.chat_requests()]
        assert sent[8:] == [f"Bearer {SECRET}"] * 4


def test_a_refused_server_says_the_key_was_withheld_and_how_to_send_one(generic, tmp_path,
                                                                       server_env):
    with FakeLLMServer(default=Reply(status=401, error="no key")) as srv:
        cfg = _cfg(generic, tmp_path, srv.openai_url, "m1", retries=0)
        run_dir = tmp_path / "runs" / "a"
        run_stages(cfg, run_dir, requires("generate"))
        done = _generate(run_dir, cfg, "failed")  # every call refused: the stage stops
        url = srv.openai_url
    assert "authentication refused (401)" in done.error
    assert f"OPENAI_API_KEY is not sent to {url}" in done.error
    assert keys.ENDPOINTS_ENV in done.error and "type a key" in done.error


def test_the_pages_say_what_a_job_will_send(server_env):
    assert "not sent" in keys.job_note("openai", EVIL)
    assert "is sent to https://api.openai.com/v1" in keys.job_note("openai", None)
    assert "you typed" in keys.job_note("openai", EVIL, typed_key=True)
    assert "No API key" in keys.job_note("ollama", None)


# --- the LLM servers a dashboard user may name: the operator's RAGDASH_LLM_HOSTS ---------------


@pytest.mark.parametrize("url, confined, hosts, refused", [
    ("http://10.0.0.5:8080/v1", True, "llm.internal:8000", True),  # a host of the network
    ("http://llm.internal:8000/v1", True, "llm.internal:8000", False),
    ("http://llm.internal:9000/v1", True, "llm.internal:8000", True),  # another port
    ("localhost:11434", True, "localhost:11434", False),  # an ollama host, no scheme
    ("http://127.0.0.1:11434", True, "localhost:11434", True),  # names are compared as given
    ("http://10.0.0.5:8080/v1", True, "", False),  # unset: any host
    ("http://10.0.0.5:8080/v1", False, "llm.internal", False),  # the operator's own command
    ("https://x.example.com/v1", True, "*.example.com", False),
])
def test_a_dashboard_job_calls_only_the_llm_hosts_the_operator_allows(monkeypatch, url,
                                                                      confined, hosts, refused):
    monkeypatch.setenv(keys.LLM_HOSTS_ENV, hosts)
    monkeypatch.setenv(keys.CONFINE_ENV, "1" if confined else "0")
    why = keys.refused_llm_url(url)
    assert bool(why) == refused, why
    if refused:
        assert keys.LLM_HOSTS_ENV in why and url in why
    from ragdash.llm.factory import raw_backend
    from ragdash.llm.types import LLMError

    settings = LLMSettings.from_config({"backend": "openai", "base_url": url, "model": "m"})
    if refused:
        with pytest.raises(LLMError, match=keys.LLM_HOSTS_ENV):
            raw_backend(settings)
    else:
        raw_backend(settings)  # a client is made (nothing is called)


def test_the_build_page_refuses_an_llm_host_off_the_operators_list(monkeypatch):
    from ragdash.ui import paths

    monkeypatch.setenv(keys.LLM_HOSTS_ENV, "llm.internal:8000")
    monkeypatch.delenv(keys.CONFINE_ENV, raising=False)  # the dashboard's own process
    cfg = {"generation": {"llm": {"backend": "openai", "base_url": "http://169.254.169.254/v1"}},
           "judge": {"llm": {"backend": "openai", "base_url": "http://llm.internal:8000/v1"}}}
    refused = paths.refused_config(cfg)
    assert len(refused) == 1 and "169.254.169.254" in refused[0], refused


def test_a_job_whose_llm_host_is_off_the_list_fails_saying_so(generic, tmp_path, server_env,
                                                             monkeypatch):
    with FakeLLMServer(default=Reply(text="An answer.")) as srv:
        monkeypatch.setenv(keys.LLM_HOSTS_ENV, "llm.internal:8000")
        cfg = _cfg(generic, tmp_path, srv.openai_url, "m1")
        run_dir = tmp_path / "runs" / "a"
        run_stages(cfg, run_dir, requires("generate"))
        done = _generate(run_dir, cfg, "failed")
        assert srv.chat_requests() == []  # nothing reached the server
    assert keys.LLM_HOSTS_ENV in done.error
