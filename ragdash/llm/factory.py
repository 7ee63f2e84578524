"""Backends from settings: `make_backend` (a reachable server), `open_backend` (for a block;
starts the local llama.cpp server when needed) and LangChain chat models on the same servers
(`chat_model`, `open_chat_model`). Every backend made here retries (and caches, given a cache);
see `ragdash.llm.wrappers`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdash.llm import keys
from ragdash.llm.cache import LLMCache, open_cache
from ragdash.llm.clients.ollama import OllamaBackend
from ragdash.llm.clients.openai import OpenAIBackend
from ragdash.llm.local.models import model_alias
from ragdash.llm.local.server import LazyLocalBackend, LocalServer
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend, LLMError
from ragdash.llm.wrappers import wrap

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def _check_server(settings: LLMSettings) -> None:
    """LLMError when the server the settings name is not one this process may call
    (`keys.refused_llm_url`: a dashboard job, and a host off the operator's list)."""
    refusal = keys.refused_llm_url(settings.base_url)
    if refusal:
        raise LLMError(refusal, kind="config")


def raw_backend(settings: LLMSettings, *, base_url: str | None = None) -> Backend:
    """The client-level backend for settings whose server is reachable now."""
    _check_server(settings)
    if settings.backend == "ollama":
        return OllamaBackend(settings, host=base_url)
    if settings.backend == "openai":
        return OpenAIBackend(settings, base_url=base_url)
    url = base_url or settings.base_url
    if not url:
        raise LLMError("the local backend needs a running server: use open_backend() (starts "
                       "one) or set base_url", kind="config")
    return OpenAIBackend(settings, base_url=url, name="local",
                         model=model_alias(settings.model))


def make_backend(settings: LLMSettings, *, cache: LLMCache | None = None,
                 base_url: str | None = None) -> Backend:
    """A ready backend (retries + optional cache) for a reachable server."""
    return wrap(raw_backend(settings, base_url=base_url), settings, cache)


@contextlib.contextmanager
def open_backend(settings: LLMSettings, *, cache: LLMCache | None = None) -> Iterator[Backend]:
    """A backend for the duration of a block. For `local` without `base_url` the llama.cpp
    server starts on the first request that misses the cache and stops on exit."""
    if settings.backend == "local" and not settings.base_url:
        raw = LazyLocalBackend(settings)
        try:
            yield wrap(raw, settings, cache)
        finally:
            raw.close()
    else:
        yield make_backend(settings, cache=cache)


@contextlib.contextmanager
def calls_session(settings: LLMSettings, cache: LLMCache | str | Path | None = None,
                  backend: Backend | None = None) -> Iterator[tuple[Backend, LLMCache | None]]:
    """The backend a batch of calls goes to and the cache it fills: `backend` as given, else
    `open_backend(settings)` over the cache; a cache opened here from a path is closed on exit."""
    store = open_cache(cache)
    try:
        with (contextlib.nullcontext(backend) if backend is not None
              else open_backend(settings, cache=store)) as be:
            yield be, store
    finally:
        if store is not None and store is not cache:
            store.close()


# --- LangChain --------------------------------------------------------------------------------


def chat_model(settings: LLMSettings, *, base_url: str | None = None) -> BaseChatModel:
    """A LangChain chat model on the same server (`ChatOllama` or `ChatOpenAI`)."""
    _check_server(settings)
    url = base_url or settings.base_url
    if settings.backend == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(model=settings.model, base_url=url, temperature=settings.temperature,
                          num_predict=settings.max_tokens, seed=settings.seed,
                          client_kwargs={"timeout": settings.timeout_s})
    from langchain_openai import ChatOpenAI

    model = settings.model
    key = settings.resolve_api_key(url)
    if settings.backend == "local":
        if not url:
            raise LLMError("the local backend needs a running server: use "
                           "ragdash.llm.open_chat_model() or set base_url", kind="config")
        model, key = model_alias(settings.model), key or "not-needed"
    elif key is None and url is None:
        raise LLMError(f"the openai backend needs an API key: set {settings.api_key_env}",
                       kind="config")
    return ChatOpenAI(model=model, base_url=url, api_key=key or "not-needed",
                      temperature=settings.temperature, max_tokens=settings.max_tokens,
                      seed=settings.seed, timeout=settings.timeout_s,
                      max_retries=settings.retries)


@contextlib.contextmanager
def open_chat_model(cfg: Mapping[str, Any] | LLMSettings | None = None,
                    **overrides: Any) -> Iterator[BaseChatModel]:
    """A LangChain chat model for a block; for `local` without `base_url` a llama.cpp server
    is started for the block and stopped after it."""
    settings = LLMSettings.from_config(cfg, **overrides)
    if settings.backend == "local" and not settings.base_url:
        with LocalServer(settings.model) as server:
            yield chat_model(settings, base_url=server.base_url)
    else:
        yield chat_model(settings)
