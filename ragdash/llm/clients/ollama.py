"""`ollama.Client` (host: `base_url`, else `OLLAMA_HOST`, else the client's default)."""

from __future__ import annotations

import time
from typing import Any

from ragdash.llm.clients import not_a_reply, refused, sampling_params, short
from ragdash.llm.clients.bounds import (
    ReplyRefused,
    bounded_call,
    harden,
    timeout_note,
)
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import LLMError, LLMResult, Messages


class OllamaBackend:
    """`ollama.Client` (host: `base_url`, else `OLLAMA_HOST`, else the client's default)."""

    name = "ollama"

    def __init__(self, settings: LLMSettings, *, host: str | None = None):
        import ollama

        self.settings = settings
        self.model = settings.model
        self.host = host or settings.base_url
        self._client = ollama.Client(host=self.host, timeout=settings.timeout_s)
        harden(self._client._client)  # the httpx.Client under ollama's

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return sampling_params(self.settings, params)

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> LLMResult:
        """One request, ending within `timeout_s` and refused once its reply is over
        `reply_byte_limit(max_tokens)`."""
        import httpx
        import ollama

        p = self.call_params(params)
        options = {k: v for k, v in p.items() if k not in ("max_tokens",) and v is not None}
        if p.get("max_tokens") is not None:
            options["num_predict"] = p["max_tokens"]
        where = f"ollama {self.model}"
        timeout_s = self.settings.timeout_s or 0.0
        t0 = time.perf_counter()
        try:
            with bounded_call(timeout_s, p.get("max_tokens")):
                resp = self._client.chat(model=self.model, messages=messages,
                                         format=json_schema, options=options, stream=False)
        except ReplyRefused as exc:
            raise refused(where, exc) from exc
        except ollama.ResponseError as exc:
            status = exc.status_code
            if status == 429:
                raise LLMError(f"{where}: rate limited (429)", kind="rate_limit",
                               retryable=True) from exc
            if status >= 500:
                raise LLMError(f"{where}: server error {status}: {short(exc.error)}",
                               kind="server_error", retryable=True) from exc
            raise LLMError(f"{where}: request refused ({status}): {short(exc.error)}",
                           kind="bad_request") from exc
        except httpx.TimeoutException as exc:
            raise LLMError(f"{where}: timed out ({timeout_note(timeout_s)})", kind="timeout",
                           retryable=True) from exc
        except (ValueError, RecursionError) as exc:  # a 200 whose body is not JSON (an
            raise not_a_reply(where, exc) from exc  # HTML page, cut or too deep JSON)
        except (ConnectionError, httpx.TransportError) as exc:
            raise LLMError(f"{where}: cannot connect to {self.host or 'the Ollama host'} "
                           f"({short(str(exc))})", kind="connection", retryable=True) from exc
        latency = time.perf_counter() - t0
        if not hasattr(resp, "message"):
            raise not_a_reply(where, ValueError(str(resp)))
        return LLMResult(text=resp.message.content or "", tokens_in=resp.prompt_eval_count,
                         tokens_out=resp.eval_count, latency_s=latency,
                         model=resp.model or self.model)
