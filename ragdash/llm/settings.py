"""LLM run settings in one place: backend, model, sampling, concurrency, timeouts and retries.

API keys never live in the serialised settings: they come from the environment
(`OPENAI_API_KEY`, or the variable named by `api_key_env`) or from an explicit argument that is
held in memory only (hidden from `repr`, left out of `to_manifest`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BACKENDS = ("local", "ollama", "openai")
JUDGE_MODES = ("grouped", "single", "stepwise")
"""grouped: the paper (all answers of a question in one call); single: one call per answer;
stepwise: the rubric as one or two short questions per answer (for small local judges)."""
LOCAL_JUDGE = "qwen-1.5b"
"""The packaged model the local backend judges with by default (the 0.5B scores by position)."""


LOCAL_GENERATOR = "qwen-1.5b"
"""The packaged model the local backend answers with by default: with the evidence in its context
the 0.5B refuses most ClapNQ questions under the abstain prompt (docs/llm.md, "The default
generator"; `benchmarks/default_generator.py`). MLQ sub-questions stay on the run's `llm`."""


def local_default_llm(llm: Mapping[str, Any] | None,
                          model: str = LOCAL_GENERATOR) -> dict[str, Any] | None:
    """The `generation.llm` (or, with `model=LOCAL_JUDGE`, `judge.llm`) of a config that names
    none: for a run whose `llm` is the local backend with no model, no running server
    (`base_url`) and no `RAGDASH_LOCAL_MODEL`, a copy of it with that model; else None (the
    run's `llm` does the work)."""
    source = dict(llm or {})
    if (source.get("backend", "local") != "local" or source.get("model")
            or source.get("base_url") or os.environ.get("RAGDASH_LOCAL_MODEL")):
        return None
    return {**source, "backend": "local", "model": model}


def generator_model_for(backend: str, model: str | None) -> str | None:
    """The generator model to use: the one given, else LOCAL_GENERATOR for `local`, else the
    backend's default (None)."""
    return model or (LOCAL_GENERATOR if backend == "local" else None)


def judge_model_for(backend: str, model: str | None) -> str | None:
    """The judge model to use: the one given, else LOCAL_JUDGE for `local`, else the backend's
    default (None)."""
    return model or (LOCAL_JUDGE if backend == "local" else None)


STRUCTURED = ("auto", "json_schema", "json_object", "none")
DEFAULT_MODELS = {"local": None, "ollama": "llama3", "openai": "gpt-4o"}
_SECRET_FIELDS = ("api_key",)


@dataclass
class LLMSettings:
    """How to call an LLM. `model` for `local` is a GGUF path, `smollm2`, `qwen` or None (default
    GGUF, or `RAGDASH_LOCAL_MODEL`); `base_url` is the OpenAI-compatible URL or the Ollama host
    (`OLLAMA_HOST` when unset); for `local` a set `base_url` means "use this running server".

    `retries` counts retries after the first attempt; the wait before retry i (0-based) is
    `min(backoff_base_s * 2**i, backoff_max_s)`. `concurrency` None means 1 for local, else 4;
    `timeout_s` None means 600 s for local (a 2-core CPU takes ~15 s per 1k-token prompt and
    requests queue), else 120 s. It is a deadline for each request, whole reply included (a
    server dripping bytes cannot stretch it); a reply is refused once over
    `ragdash.llm.clients.bounds.reply_byte_limit(max_tokens)` (1 MiB for 256 tokens).
    """

    backend: str = "local"
    model: str | None = None
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = 256
    concurrency: int | None = None
    timeout_s: float | None = None
    retries: int = 3
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    seed: int | None = 0
    structured: str = "auto"
    options: dict[str, Any] = field(default_factory=dict)
    api_key_env: str = "OPENAI_API_KEY"
    api_key: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"llm.backend: '{self.backend}' is not one of {', '.join(BACKENDS)}")
        if self.structured not in STRUCTURED:
            raise ValueError(f"llm.structured: '{self.structured}' is not one of "
                             f"{', '.join(STRUCTURED)}")
        if self.concurrency is None:
            self.concurrency = 1 if self.backend == "local" else 4
        if self.timeout_s is None:
            self.timeout_s = 600.0 if self.backend == "local" else 120.0
        if self.concurrency < 1:
            raise ValueError("llm.concurrency must be at least 1")
        if self.retries < 0 or self.timeout_s <= 0:
            raise ValueError("llm.retries must be >= 0 and llm.timeout_s > 0")
        if self.model is None:
            self.model = DEFAULT_MODELS[self.backend]

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | LLMSettings | None = None, *,
                    api_key: str | None = None, **overrides: Any) -> LLMSettings:
        """Settings from a config mapping (the run config's `llm` section) plus overrides.

        A key inside the mapping is refused: configs are written to run manifests.
        """
        if isinstance(cfg, LLMSettings):
            base = dataclasses.replace(cfg, **overrides)
            if api_key is not None:
                base.api_key = api_key
            return base
        data = {**(cfg or {}), **overrides}
        if any(k in data for k in _SECRET_FIELDS):
            raise ValueError("llm.api_key must not be set in a config (it would be written to "
                             "the run manifest); set OPENAI_API_KEY in the environment instead")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"llm: unknown setting(s) {unknown}; known: {sorted(known)}")
        return cls(**{k: v for k, v in data.items() if v is not None}, api_key=api_key)

    def to_manifest(self) -> dict[str, Any]:
        """JSON-able settings without secrets (what run manifests store)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in _SECRET_FIELDS}

    def resolve_api_key(self) -> str | None:
        """The explicit key, else the environment's; None when neither is set."""
        return self.api_key or os.environ.get(self.api_key_env) or None

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        return min(self.backoff_base_s * (2 ** attempt), self.backoff_max_s)


_NUMBERS: dict[str, tuple[type, float]] = {
    "temperature": (float, 0.0), "max_tokens": (int, 1), "concurrency": (int, 1),
    "timeout_s": (float, 1e-9), "retries": (int, 0), "backoff_base_s": (float, 0.0),
    "backoff_max_s": (float, 0.0), "seed": (int, -(2 ** 63))}
"""Numeric settings (None: the default): (kind, least value)."""


def check_section(data: Mapping[str, Any] | None, where: str = "llm") -> None:
    """Refuse an LLM settings section that `LLMSettings` would not take, naming the dotted key
    (`where`.key): an unknown key (with the closest known one), a backend or structured mode
    not in its list, a number of the wrong kind or below its least value. Run at load, so a bad
    value stops the run before any stage."""
    import difflib

    if not data:
        return
    known = sorted(f.name for f in dataclasses.fields(LLMSettings)
                   if f.name not in _SECRET_FIELDS)
    for key, value in data.items():
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {where}.{close[0]}?)" if close else ""
            raise ValueError(f"{where}.{key} is not an LLM setting{hint}; the settings are "
                             f"{', '.join(known)}")
        if key in _NUMBERS and value is not None:
            kind, least = _NUMBERS[key]
            ok = isinstance(value, int | float) and not isinstance(value, bool) and (
                kind is float or float(value).is_integer())
            if not ok or value < least:
                what = "a whole number" if kind is int else "a number"
                raise ValueError(f"{where}.{key} must be {what} of at least {least:g}, not "
                                 f"{value!r}")
    for key, allowed in (("backend", BACKENDS), ("structured", STRUCTURED)):
        if key in data and data[key] not in allowed:
            raise ValueError(f"{where}.{key} must be one of {', '.join(allowed)}, not "
                             f"{data[key]!r}")
    for key in ("model", "base_url", "api_key_env"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise ValueError(f"{where}.{key} must be text, not {data[key]!r}")
    if data.get("options") is not None and not isinstance(data["options"], Mapping):
        raise ValueError(f"{where}.options must be a mapping of the backend's own options")
