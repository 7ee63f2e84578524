"""Where LLM calls (and an API key) will go, printed before the first call: one line per stage
of the registry that calls an LLM under the run's specification (`Stage.llm`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

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


def endpoint_lines(spec: RunSpec, stages: Iterable[str]) -> list[str]:
    """One line per stage of `stages` that calls an LLM under `spec`: what its calls are
    called (`Stage.priced_as`), backend, model and endpoint."""
    from ragdash.stages import REGISTRY

    wanted = set(stages)
    return [f"[llm] {s.priced_as}: {llm.backend} model {llm.model or '(default)'} at "
            f"{endpoint(llm)}" for s in REGISTRY
            if s.name in wanted and (llm := s.uses_llm(spec)) is not None]


def print_endpoints(spec: RunSpec, stages: Iterable[str]) -> None:
    """`endpoint_lines` on stderr."""
    for line in endpoint_lines(spec, stages):
        print(line, file=sys.stderr)
