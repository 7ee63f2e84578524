"""Where LLM calls (and an API key) will go, printed before the first call."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ragdash.config import RunSpec
from ragdash.llm.settings import LLMSettings


def endpoint(settings: LLMSettings) -> str:
    """The server `settings` call, in words."""
    if settings.base_url:
        return settings.base_url
    return {"local": "a local llama.cpp server started by ragdash",
            "ollama": os.environ.get("OLLAMA_HOST") or "Ollama's default http://127.0.0.1:11434",
            "openai": os.environ.get("OPENAI_BASE_URL") or "OpenAI's default "
                      "https://api.openai.com/v1"}[settings.backend]


def print_endpoints(spec: RunSpec, stages: Sequence[str]) -> None:
    """One line on stderr per LLM use of `stages`: what, backend, model and endpoint."""
    from ragdash.stages.generate import generator_settings
    from ragdash.stages.judge import judge_settings

    uses = []
    if "retrieve" in stages and "mlq" in spec.retrievers.use:
        uses.append(("MLQ sub-questions", LLMSettings.from_config(spec.llm)))
    if "generate" in stages:
        uses.append(("generation", generator_settings(spec)))
    if "judge" in stages:
        uses.append(("judging", judge_settings(spec)))
    for what, settings in uses:
        print(f"[llm] {what}: {settings.backend} model {settings.model or '(default)'} at "
              f"{endpoint(settings)}", file=sys.stderr)
