"""`openai.OpenAI` against OpenAI or any compatible server (llama.cpp, vLLM, LM Studio...)."""

from __future__ import annotations

import threading
import time
from typing import Any

from ragdash.llm.clients import not_a_reply, refused, sampling_params, short
from ragdash.llm.clients.bounds import (
    ReplyRefused,
    bounded_call,
    harden,
    refused_in,
    timeout_note,
)
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import LLMError, LLMResult, Messages
from ragdash.redact import remember


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _unsupported_protocol(exc: BaseException) -> bool:
    """Whether `exc` comes of a URL httpx does not fetch (a redirect to file://, ftp://...)."""
    import httpx

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, httpx.UnsupportedProtocol):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _openai_error(exc: Exception, where: str, timeout_s: float | None = None) -> LLMError:
    """The `LLMError` (with its kind) for an exception of the openai client."""
    import openai

    if (cause := refused_in(exc)) is not None:
        return refused(where, cause)
    if isinstance(exc, openai.APITimeoutError):
        note = f" ({timeout_note(timeout_s)})" if timeout_s else ""
        return LLMError(f"{where}: timed out{note}", kind="timeout", retryable=True)
    if isinstance(exc, openai.APIConnectionError) and _unsupported_protocol(exc):
        return LLMError(f"{where}: the server sent the request on to a URL that is not http(s) "
                        f"({exc.__cause__}); nothing was fetched from it: check the server's "
                        "URL", kind="bad_request")
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
        return LLMError(f"{where}: request refused ({status}): {short(exc.message)}",
                        kind="bad_request")
    return LLMError(f"{where}: {type(exc).__name__}: {short(str(exc))}")


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
        key = api_key or settings.resolve_api_key(self.base_url)
        remember(key)  # a server may echo the Authorization header in an error body
        self._withheld = None if api_key else settings.withheld_key(self.base_url)
        if key is None:
            if self.base_url is None:
                raise LLMError(self._withheld or "the openai backend needs an API key: set "
                               f"{settings.api_key_env} in the environment", kind="config")
            key = "not-needed"  # compatible local servers ignore it
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url,
                                     timeout=settings.timeout_s, max_retries=0,
                                     http_client=harden(openai.DefaultHttpxClient()))
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
        """One request (one more per structured mode the server refuses), each ending within
        `timeout_s` and refused once its reply is over `reply_byte_limit(max_tokens)`."""
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
        timeout_s = self.settings.timeout_s or 0.0
        while True:
            mode = self._modes[0]
            rf = _response_format(mode, json_schema)
            t0 = time.perf_counter()
            try:
                with bounded_call(timeout_s, sampling.get("max_tokens")):
                    resp = self._client.chat.completions.create(
                        **kwargs, **({"response_format": rf} if rf else {}))
            except openai.APIStatusError as exc:
                if rf and exc.status_code in (400, 422) and _about_format(exc):
                    with self._lock:
                        if self._modes[0] == mode and len(self._modes) > 1:
                            self._modes.pop(0)
                    continue
                if exc.status_code in (401, 403) and self._withheld:
                    raise LLMError(f"{where}: authentication refused ({exc.status_code}): "
                                   f"{self._withheld}", kind="auth") from exc
                raise _openai_error(exc, where, timeout_s) from exc
            except openai.OpenAIError as exc:
                raise _openai_error(exc, where, timeout_s) from exc
            except ReplyRefused as exc:
                raise refused(where, exc) from exc
            except (ValueError, RecursionError) as exc:  # a 200 whose body is not JSON (an
                raise not_a_reply(where, exc) from exc  # HTML page, cut or too deep JSON)
            latency = time.perf_counter() - t0
            if not hasattr(resp, "choices"):  # a 200 whose body is not a chat completion
                raise not_a_reply(where, ValueError(str(resp)))
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
