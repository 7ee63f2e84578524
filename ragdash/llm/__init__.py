"""The LLM layer: settings, backends (local llama.cpp, Ollama, OpenAI-compatible), prompts,
answer generation, judging, reply cache and cost.

Modules:

- `types`: replies (`LLMResult`), errors (`LLMError`), messages and the `Backend` interface;
- `settings`: `LLMSettings` (backend, model, sampling, concurrency, timeouts, retries);
- `clients`: the raw OpenAI-compatible (`clients.openai`) and Ollama (`clients.ollama`) clients;
- `local`: the packaged GGUF models (`local.models`) and the llama.cpp server (`local.server`);
- `wrappers`: retries and the reply cache around a raw client;
- `factory`: `make_backend`, `open_backend` and the LangChain chat models;
- `cache`: the SQLite reply cache; `cost`: prices, estimates and actuals;
- `prompts`, `refusal`: the paper's prompts and the refusal rule run before the judge;
- `generate`, `judge`, `runner`: answer generation, the judge, the thread pool they share;
- `decompose`: the multi-query retriever's sub-questions (mlq), through the same machinery.

Names are imported lazily: `from ragdash.llm import judge_answers` loads `ragdash.llm.judge`
(and what it needs) only then, so `import ragdash.llm` (or `ragdash.config`) stays light.
The functions `generate` and `judge` share their modules' names: import them from
`ragdash.llm.generate` and `ragdash.llm.judge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.lazy import exports

if TYPE_CHECKING:
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.cost import (
        actual_cost,
        count_tokens,
        estimate,
        estimate_prompts,
        load_prices,
    )
    from ragdash.llm.factory import chat_model, make_backend, open_backend, open_chat_model
    from ragdash.llm.generate import GenerationRequest
    from ragdash.llm.judge import Candidate, JudgeItem, judge_answers, parse_scores
    from ragdash.llm.local.models import ModelError, ensure_model
    from ragdash.llm.local.server import LocalServer, serve
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend, LLMError, LLMResult

_SOURCES = {
    "ragdash.llm.cache": ("LLMCache",),
    "ragdash.llm.cost": ("actual_cost", "count_tokens", "estimate", "estimate_prompts",
                         "load_prices"),
    "ragdash.llm.factory": ("chat_model", "make_backend", "open_backend", "open_chat_model"),
    "ragdash.llm.generate": ("GenerationRequest",),
    "ragdash.llm.judge": ("Candidate", "JudgeItem", "judge_answers", "parse_scores"),
    "ragdash.llm.local.models": ("ModelError", "ensure_model"),
    "ragdash.llm.local.server": ("LocalServer", "serve"),
    "ragdash.llm.settings": ("LLMSettings",),
    "ragdash.llm.types": ("Backend", "LLMError", "LLMResult"),
}

__all__ = [
    "Backend", "Candidate", "GenerationRequest", "JudgeItem", "LLMCache", "LLMError",
    "LLMResult", "LLMSettings", "LocalServer", "ModelError", "actual_cost", "chat_model",
    "count_tokens", "ensure_model", "estimate", "estimate_prompts",
    "judge_answers", "load_prices", "make_backend", "open_backend", "open_chat_model",
    "parse_scores", "serve",
]

__getattr__, __dir__ = exports(__name__, _SOURCES, globals())
