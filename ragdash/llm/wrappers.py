"""Retries and caching around a raw backend: `wrap(raw, settings, cache)` gives
`Cached(Retrying(raw))`. Retries with exponential backoff live only in `Retrying`; `Cached`
sits outside it, so a cached reply is never re-asked and only a validated reply is stored."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ragdash.llm.cache import LLMCache, cache_key
from ragdash.llm.clients import sampling_params
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend, LLMError, LLMResult, Messages, Validator


class _Wrapper:
    """A backend around another one; everything but `chat` is the inner backend's."""

    def __init__(self, inner: Backend):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.inner.call_params(params)

    def __getattr__(self, name: str) -> Any:  # settings, structured_mode, base_url, ...
        return getattr(self.inner, name)


class Retrying(_Wrapper):
    """Retries retryable failures (timeouts, 429, 5xx, connection, invalid replies) with
    exponential backoff; the final error says what failed and after how many attempts. A
    non-retryable error, a validator's included, is raised at once as it is."""

    def __init__(self, inner: Backend, settings: LLMSettings,
                 sleep: Callable[[float], None] = time.sleep):
        super().__init__(inner)
        self.settings = settings
        self.sleep = sleep

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             validate: Validator | None = None, **params: Any) -> LLMResult:
        attempts = self.settings.retries + 1
        last: LLMError | None = None
        for i in range(attempts):
            try:
                result = self.inner.chat(messages, json_schema=json_schema, **params)
                if validate is not None:
                    validate(result)
                return result
            except LLMError as exc:
                if not exc.retryable:
                    raise
                last = exc
            if i + 1 < attempts:
                wait = self.settings.backoff(i)
                if last.retry_after:
                    wait = min(max(wait, last.retry_after), self.settings.backoff_max_s)
                self.sleep(wait)
        assert last is not None
        raise LLMError(f"{last} (gave up after {attempts} attempt"
                       f"{'s' if attempts > 1 else ''})", kind=last.kind)


class Cached(_Wrapper):
    """Answers from the cache when it can; stores every accepted reply (one the client took in
    full and `validate` passed) as soon as it is accepted, and nothing else."""

    def __init__(self, inner: Backend, cache: LLMCache):
        super().__init__(inner)
        self.cache = cache
        self._guard = threading.Lock()
        self._inflight: dict[str, threading.Lock] = {}

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             validate: Validator | None = None, **params: Any) -> LLMResult:
        key = cache_key(self.inner.name, self.inner.model, messages,
                        self.inner.call_params(params), json_schema)
        with self._guard:  # one request per key at a time: a twin waits, then reads the cache
            lock = self._inflight.setdefault(key, threading.Lock())
        with lock:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    if validate is not None:
                        validate(hit)
                    return hit
                except LLMError:
                    pass
            result = self.inner.chat(messages, json_schema=json_schema, validate=validate,
                                     **params)
            self.cache.put(key, self.inner.name, result)
            return result


def wrap(raw: Backend, settings: LLMSettings, cache: LLMCache | None = None) -> Backend:
    """Retries around a raw backend, the cache (if any) around that."""
    backend = Retrying(raw, settings)
    return Cached(backend, cache) if cache is not None else backend


class CacheOnly:
    """A backend that answers only from the reply cache, as the backend of `settings` calling
    itself `model` would find it there; a miss raises `LLMError` and makes no request. A dry
    run asks it what a re-run would still send: `answered` holds the first message of every
    question the cache answered."""

    def __init__(self, settings: LLMSettings, model: str, cache: LLMCache):
        self.settings, self.name, self.model, self.cache = settings, settings.backend, model, cache
        self.answered: set[str] = set()

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return sampling_params(self.settings, params)

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             validate: Validator | None = None, **params: Any) -> LLMResult:
        hit = self.cache.get(cache_key(self.name, self.model, messages, self.call_params(params),
                                       json_schema))
        if hit is None:
            raise LLMError("not in the reply cache")
        if validate is not None:
            validate(hit)  # a reply a run would ask again counts as missing
        if len(messages) == 1:
            self.answered.add(str(messages[0]["content"]))
        return hit
