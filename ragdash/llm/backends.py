"""LLM backends behind one small interface, with retries and caching as wrappers.

`chat(messages, *, json_schema=None, **params) -> LLMResult` is implemented with the official
clients: `ollama.Client` (`format=<schema>` for structured output) and `openai.OpenAI` (any
OpenAI-compatible `base_url`; `response_format` with the schema where the server takes it,
falling back to plain text). The `local` backend is the OpenAI backend against a
`llama_cpp.server` started by `ragdash.llm.local`.

Retries with exponential backoff live only in `Retrying`; `Cached` sits outside it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ragdash.llm.settings import LLMSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from ragdash.llm.cache import LLMCache

Messages = list[dict[str, Any]]
Validator = Callable[["LLMResult"], None]


@dataclass(frozen=True)
class LLMResult:
    """One reply: text, token counts (None when the server gives none), latency, model."""

    text: str
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float
    model: str
    cached: bool = False


class LLMError(RuntimeError):
    """A failed LLM call. `kind`: timeout, rate_limit, server_error, connection, invalid_reply,
    bad_request, auth, config; `retryable` marks kinds worth another attempt."""

    def __init__(self, message: str, *, kind: str = "error", retryable: bool = False,
                 retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after


class Backend(Protocol):
    name: str
    model: str

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult: ...


def sampling_params(settings: LLMSettings, params: dict[str, Any]) -> dict[str, Any]:
    """Effective parameters of a call: settings, then `settings.options`, then per-call ones."""
    out = {"temperature": settings.temperature, "max_tokens": settings.max_tokens,
           "seed": settings.seed}
    out.update(settings.options)
    out.update(params)
    return out


# --- OpenAI-compatible ------------------------------------------------------------------------


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _openai_error(exc: Exception, where: str) -> LLMError:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return LLMError(f"{where}: timed out", kind="timeout", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(f"{where}: cannot connect ({exc.__cause__ or exc}); is the server "
                        "running?", kind="connection", retryable=True)
    if isinstance(exc, openai.RateLimitError):
        return LLMError(f"{where}: rate limited (429)", kind="rate_limit", retryable=True,
                        retry_after=_retry_after(exc))
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(f"{where}: authentication refused ({exc.status_code}); check the API "
                        "key", kind="auth")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500:
            return LLMError(f"{where}: server error {status}", kind="server_error",
                            retryable=True)
        return LLMError(f"{where}: request refused ({status}): {_short(exc.message)}",
                        kind="bad_request")
    return LLMError(f"{where}: {type(exc).__name__}: {_short(str(exc))}")


def _not_a_reply(where: str, exc: Exception) -> LLMError:
    return LLMError(f"{where}: the server's reply is not a chat response ({_short(str(exc))})",
                    kind="invalid_reply", retryable=True)


def _short(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


class OpenAIBackend:
    """`openai.OpenAI` against OpenAI or any compatible server (llama.cpp, vLLM, LM Studio...).

    Structured output modes are tried in order and a mode the server refuses is dropped:
    `json_schema` (OpenAI), `json_object` + `schema` (llama.cpp), then none (tolerant parsing).
    """

    def __init__(self, settings: LLMSettings, *, base_url: str | None = None,
                 api_key: str | None = None, name: str = "openai", model: str | None = None):
        import openai

        self.settings = settings
        self.name = name
        self.model = model or settings.model
        self.base_url = base_url or settings.base_url
        key = api_key or settings.resolve_api_key()
        if key is None:
            if self.base_url is None:
                raise LLMError(f"the openai backend needs an API key: set {settings.api_key_env}"
                               " in the environment", kind="config")
            key = "not-needed"  # compatible local servers ignore it
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url,
                                     timeout=settings.timeout_s, max_retries=0)
        if settings.structured != "auto":
            modes = [settings.structured]
        elif name == "local":
            modes = ["json_object", "none"]
        else:
            modes = ["json_schema", "json_object", "none"]
        self._modes = modes
        self._lock = threading.Lock()

    @property
    def structured_mode(self) -> str:
        return self._modes[0]

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return sampling_params(self.settings, params)

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        sampling = self.call_params(params)
        extra = {k: v for k, v in sampling.items()
                 if k not in ("temperature", "max_tokens", "seed") and v is not None}
        kwargs.update({k: sampling[k] for k in ("temperature", "max_tokens", "seed")
                       if sampling.get(k) is not None})
        if extra:
            kwargs["extra_body"] = extra
        where = f"{self.name} {self.model}"
        while True:
            mode = self._modes[0]
            rf = _response_format(mode, json_schema)
            t0 = time.perf_counter()
            try:
                resp = self._client.chat.completions.create(
                    **kwargs, **({"response_format": rf} if rf else {}))
            except openai.APIStatusError as exc:
                if rf and exc.status_code in (400, 422) and _about_format(exc):
                    with self._lock:
                        if self._modes[0] == mode and len(self._modes) > 1:
                            self._modes.pop(0)
                    continue
                raise _openai_error(exc, where) from exc
            except openai.OpenAIError as exc:
                raise _openai_error(exc, where) from exc
            except ValueError as exc:  # a 200 whose body is not JSON (an HTML page, cut JSON)
                raise _not_a_reply(where, exc) from exc
            latency = time.perf_counter() - t0
            if not hasattr(resp, "choices"):  # a 200 whose body is not a chat completion
                raise _not_a_reply(where, ValueError(str(resp)))
            choice = resp.choices[0] if resp.choices else None
            text = (choice.message.content if choice and choice.message else None) or ""
            usage = resp.usage
            return LLMResult(text=text,
                             tokens_in=getattr(usage, "prompt_tokens", None),
                             tokens_out=getattr(usage, "completion_tokens", None),
                             latency_s=latency, model=resp.model or self.model)


def _response_format(mode: str, schema: dict | None) -> dict | None:
    if schema is None or mode == "none":
        return None
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": True}}
    return {"type": "json_object", "schema": schema}


def _about_format(exc: Exception) -> bool:
    text = str(getattr(exc, "message", "") or exc).lower()
    body = str(getattr(exc, "body", "") or "").lower()
    return any(w in text or w in body for w in ("response_format", "schema", "json"))


# --- Ollama -----------------------------------------------------------------------------------


class OllamaBackend:
    """`ollama.Client` (host: `base_url`, else `OLLAMA_HOST`, else the client's default)."""

    name = "ollama"

    def __init__(self, settings: LLMSettings, *, host: str | None = None):
        import ollama

        self.settings = settings
        self.model = settings.model
        self.host = host or settings.base_url
        self._client = ollama.Client(host=self.host, timeout=settings.timeout_s)

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return sampling_params(self.settings, params)

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult:
        import httpx
        import ollama

        p = self.call_params(params)
        options = {k: v for k, v in p.items() if k not in ("max_tokens",) and v is not None}
        if p.get("max_tokens") is not None:
            options["num_predict"] = p["max_tokens"]
        where = f"ollama {self.model}"
        t0 = time.perf_counter()
        try:
            resp = self._client.chat(model=self.model, messages=messages, format=json_schema,
                                     options=options, stream=False)
        except ollama.ResponseError as exc:
            status = exc.status_code
            if status == 429:
                raise LLMError(f"{where}: rate limited (429)", kind="rate_limit",
                               retryable=True) from exc
            if status >= 500:
                raise LLMError(f"{where}: server error {status}: {_short(exc.error)}",
                               kind="server_error", retryable=True) from exc
            raise LLMError(f"{where}: request refused ({status}): {_short(exc.error)}",
                           kind="bad_request") from exc
        except httpx.TimeoutException as exc:
            raise LLMError(f"{where}: timed out", kind="timeout", retryable=True) from exc
        except ValueError as exc:  # a 200 whose body is not JSON (an HTML page, cut JSON)
            raise _not_a_reply(where, exc) from exc
        except (ConnectionError, httpx.TransportError) as exc:
            raise LLMError(f"{where}: cannot connect to {self.host or 'the Ollama host'} "
                           f"({_short(str(exc))})", kind="connection", retryable=True) from exc
        latency = time.perf_counter() - t0
        if not hasattr(resp, "message"):
            raise _not_a_reply(where, ValueError(str(resp)))
        return LLMResult(text=resp.message.content or "", tokens_in=resp.prompt_eval_count,
                         tokens_out=resp.eval_count, latency_s=latency,
                         model=resp.model or self.model)


# --- wrappers ---------------------------------------------------------------------------------


class _Wrapper:
    def __init__(self, inner: Any):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:  # name, model, call_params, ...
        return getattr(self.inner, name)


class Retrying(_Wrapper):
    """Retries retryable failures (timeouts, 429, 5xx, connection, invalid replies) with
    exponential backoff; the final error says what failed and after how many attempts."""

    def __init__(self, inner: Any, settings: LLMSettings,
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
    """Answers from the cache when it can; stores every successful (validated) reply."""

    def __init__(self, inner: Any, cache: LLMCache):
        super().__init__(inner)
        self.cache = cache
        self._guard = threading.Lock()
        self._inflight: dict[str, threading.Lock] = {}

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             validate: Validator | None = None, **params: Any) -> LLMResult:
        from ragdash.llm.cache import cache_key

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


def wrap(raw: Any, settings: LLMSettings, cache: LLMCache | None = None) -> Any:
    """Retries around a raw backend, the cache (if any) around that."""
    backend = Retrying(raw, settings)
    return Cached(backend, cache) if cache is not None else backend


def raw_backend(settings: LLMSettings, *, base_url: str | None = None) -> Any:
    """The client-level backend for settings whose server is reachable now."""
    if settings.backend == "ollama":
        return OllamaBackend(settings, host=base_url)
    if settings.backend == "openai":
        return OpenAIBackend(settings, base_url=base_url)
    url = base_url or settings.base_url
    if not url:
        raise LLMError("the local backend needs a running server: use open_backend() (starts "
                       "one) or set base_url", kind="config")
    from ragdash.llm.local import model_alias

    return OpenAIBackend(settings, base_url=url, name="local",
                         model=model_alias(settings.model))


def make_backend(settings: LLMSettings, *, cache: LLMCache | None = None,
                 base_url: str | None = None) -> Any:
    """A ready backend (retries + optional cache) for a reachable server."""
    return wrap(raw_backend(settings, base_url=base_url), settings, cache)


@contextlib.contextmanager
def open_backend(settings: LLMSettings, *, cache: LLMCache | None = None) -> Iterator[Any]:
    """A backend for the duration of a block. For `local` without `base_url` the llama.cpp
    server starts on the first request that misses the cache and stops on exit."""
    if settings.backend == "local" and not settings.base_url:
        from ragdash.llm.local import LazyLocalBackend

        raw = LazyLocalBackend(settings)
        try:
            yield wrap(raw, settings, cache)
        finally:
            raw.close()
    else:
        yield make_backend(settings, cache=cache)


# --- LangChain --------------------------------------------------------------------------------


def chat_model(settings: LLMSettings, *, base_url: str | None = None) -> BaseChatModel:
    """A LangChain chat model on the same server (`ChatOllama` or `ChatOpenAI`)."""
    url = base_url or settings.base_url
    if settings.backend == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(model=settings.model, base_url=url, temperature=settings.temperature,
                          num_predict=settings.max_tokens, seed=settings.seed,
                          client_kwargs={"timeout": settings.timeout_s})
    from langchain_openai import ChatOpenAI

    model = settings.model
    key = settings.resolve_api_key()
    if settings.backend == "local":
        if not url:
            raise LLMError("the local backend needs a running server: use "
                           "ragdash.llm.open_chat_model() or set base_url", kind="config")
        from ragdash.llm.local import model_alias

        model, key = model_alias(settings.model), key or "not-needed"
    elif key is None and url is None:
        raise LLMError(f"the openai backend needs an API key: set {settings.api_key_env}",
                       kind="config")
    return ChatOpenAI(model=model, base_url=url, api_key=key or "not-needed",
                      temperature=settings.temperature, max_tokens=settings.max_tokens,
                      seed=settings.seed, timeout=settings.timeout_s,
                      max_retries=settings.retries)
