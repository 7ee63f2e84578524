"""The LLM layer: settings, backends (local llama.cpp, Ollama, OpenAI-compatible), prompts,
answer generation, judging, reply cache and cost."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ragdash.llm.backends import (
    LLMError,
    LLMResult,
    chat_model,
    make_backend,
    open_backend,
)
from ragdash.llm.cache import LLMCache
from ragdash.llm.cost import actual_cost, count_tokens, estimate, estimate_prompts, load_prices
from ragdash.llm.generate import GenerationRequest, generate
from ragdash.llm.judge import Candidate, JudgeItem, judge, judge_answers, parse_scores
from ragdash.llm.local import LocalServer, ModelError, ensure_model, serve
from ragdash.llm.settings import LLMSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = [
    "Candidate", "GenerationRequest", "JudgeItem", "LLMCache", "LLMError", "LLMResult",
    "LLMSettings", "LocalServer", "ModelError", "actual_cost", "chat_model", "count_tokens",
    "ensure_model", "estimate", "estimate_prompts", "generate", "judge", "judge_answers",
    "load_prices", "make_backend", "open_backend", "open_chat_model", "parse_scores", "serve",
]


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
