"""LLM run settings in one place: backend, model, sampling, concurrency, timeouts and retries.

API keys never live in the serialised settings: they come from the environment
(`OPENAI_API_KEY`, or the variable named by `api_key_env`) or from an explicit argument that is
held in memory only (hidden from `repr`, left out of `to_manifest`).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    model_serializer,
)

from ragdash.llm import keys

Backend = Literal["local", "ollama", "openai"]
BACKENDS: tuple[str, ...] = get_args(Backend)
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


MAX_TOKENS = 32_768
"""The most tokens a reply may be asked for (`max_tokens`): longer than any answer, judgment or
sub-question list a stage asks for; the reply size cap grows with it
(`ragdash.llm.clients.bounds.reply_byte_limit`)."""
MAX_CONCURRENCY, MAX_RETRIES = 256, 20
"""The most calls at once, and retries after a call's first attempt."""
MAX_TIMEOUT_S, MAX_BACKOFF_S = 86_400, 3_600
"""The longest deadline of one request (a day), and the longest wait between retries (an
hour)."""


def declared_bounds(name: str) -> tuple[bool, dict[str, float]]:
    """Whether LLMSpec declares `name` a whole number, and its bounds ({ge, gt, le, lt}): the
    one declaration both the config section and `LLMSettings` are checked against."""
    whole, bounds = False, {}
    for arg in get_args(LLMSpec.model_fields[name].annotation):
        if get_origin(arg) is Annotated:
            base, *meta = get_args(arg)
            whole = base is int  # StrictInt: Annotated[int, Strict()], flattened
            for m in meta:
                for c in getattr(m, "metadata", None) or [m]:
                    bounds.update({k: v for k in ("ge", "gt", "le", "lt")
                                   if (v := getattr(c, k, None)) is not None})
    return whole, bounds


def _allowed(name: str, whole: bool, b: Mapping[str, float]) -> str:
    """What `name` takes, in words: `a whole number from 1 to 32768`, `a number of seconds
    above 0, at most 86400`."""
    what = "a whole number" if whole else "a number of seconds" if name.endswith("_s") \
        else "a number"
    high = f"at most {b['le']:g}" if "le" in b else f"below {b['lt']:g}" if "lt" in b else ""
    if "ge" in b and "le" in b:
        return f"{what} from {b['ge']:g} to {b['le']:g}"
    low = f"at least {b['ge']:g}" if "ge" in b else f"above {b['gt']:g}" if "gt" in b else ""
    return ", ".join(t for t in (f"{what} {low}".strip(), high) if t)


def check_bounds(values: Mapping[str, Any], where: str = "llm") -> None:
    """ValueError naming `where.key`, its value and what is allowed, for the first numeric
    setting in `values` outside the bounds LLMSpec declares for it (`declared_bounds`; None:
    unset, allowed)."""
    for name in LLMSpec.model_fields:
        whole, b = declared_bounds(name)
        value = values.get(name)
        if not b or value is None:
            continue
        ok = not isinstance(value, bool) and isinstance(value, int if whole else int | float) \
            and value >= b.get("ge", -math.inf) and value > b.get("gt", -math.inf) \
            and value <= b.get("le", math.inf) and value < b.get("lt", math.inf)
        if not ok:
            raise ValueError(f"{where}.{name} must be {_allowed(name, whole, b)}, not {value!r}")


Structured = Literal["auto", "json_schema", "json_object", "none"]
STRUCTURED: tuple[str, ...] = get_args(Structured)
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
        check_bounds(vars(self))  # LLMSpec's bounds: the config section's, declared once
        if self.model is None:
            self.model = DEFAULT_MODELS[self.backend]

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | LLMSpec | LLMSettings | None = None, *,
                    api_key: str | None = None, **overrides: Any) -> LLMSettings:
        """Settings from a config mapping (the run config's `llm` section) plus overrides.

        A key inside the mapping is refused: configs are written to run manifests.
        """
        if isinstance(cfg, LLMSettings):
            base = dataclasses.replace(cfg, **overrides)
            if api_key is not None:
                base.api_key = api_key
            return base
        if isinstance(cfg, LLMSpec):
            cfg = cfg.model_dump()
        data = {**(cfg or {}), **overrides}
        if any(k in data for k in _SECRET_FIELDS):
            raise ValueError("llm.api_key must not be set in a config (it would be written to "
                             "the run manifest); set OPENAI_API_KEY in the environment instead")
        unknown_key(data, sorted(LLMSpec.model_fields))
        return cls(**{k: v for k, v in data.items() if v is not None}, api_key=api_key)

    def to_manifest(self) -> dict[str, Any]:
        """JSON-able settings without secrets (what run manifests store)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in _SECRET_FIELDS}

    def endpoint(self, base_url: str | None = None) -> str | None:
        """Where requests go: `base_url`, else the settings', else the backend's default."""
        return base_url or self.base_url or keys.default_url(self.backend)

    def resolve_api_key(self, base_url: str | None = None) -> str | None:
        """The explicit key, else the environment's for requests to `endpoint(base_url)`
        (in a confined process, only where the operator allowed it: `ragdash.llm.keys`);
        None when there is none to send."""
        return self.api_key or keys.environment_key(self.api_key_env, self.endpoint(base_url))

    def withheld_key(self, base_url: str | None = None) -> str | None:
        """Why the environment's key is not sent to `endpoint(base_url)`, or None."""
        return None if self.api_key else keys.withheld(self.api_key_env,
                                                        self.endpoint(base_url))

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        return min(self.backoff_base_s * (2 ** attempt), self.backoff_max_s)


def unknown_key(data: Mapping[str, Any], known: list[str], where: str = "llm") -> None:
    """ValueError for the first key of `data` not in `known`, naming the closest known one as
    a config section's unknown key is named (`ragdash.config.check_shape`)."""
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.5)
            hint = f"; did you mean '{where}.{close[0]}'?" if close else \
                f"; known: {', '.join(f'{where}.{k}' for k in known)}"
            raise ValueError(f"unknown key '{where}.{key}'{hint}")


API_KEY_IN_FILE = ("API keys must come from the environment (OPENAI_API_KEY) or the "
                   "dashboard's password field, never a file")

Number = StrictInt | StrictFloat
"""A number as written (an int stays an int, so a section's hash is the one it had as a dict)."""


class LLMSpec(BaseModel):
    """An LLM section of the run specification (`llm`, `generation.llm`, `judge.llm`,
    `metrics.llm`): the settings `LLMSettings` takes, typed, unknown keys refused. A key left
    out is `LLMSettings`' default; only the keys written are kept (`model_dump`), so a section
    hashes into a stage key exactly as the mapping it was read from."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)

    backend: Backend | None = None
    """local (a packaged GGUF model, llama.cpp), ollama, or openai (any OpenAI-compatible
    server)."""
    model: str | None = None
    """The model (local: a GGUF path, qwen-1.5b, qwen or smollm2; empty: the default)."""
    base_url: str | None = None
    """The OpenAI-compatible URL or the Ollama host (local: a running server to use)."""
    temperature: Annotated[Number, Field(ge=0)] | None = None
    """Sampling temperature (default 0: the same reply to the same prompt)."""
    max_tokens: Annotated[StrictInt, Field(ge=1, le=MAX_TOKENS)] | None = None
    """The most tokens of a reply (default 256)."""
    concurrency: Annotated[StrictInt, Field(ge=1, le=MAX_CONCURRENCY)] | None = None
    """Calls at once (default: 1 for local, else 4)."""
    timeout_s: Annotated[Number, Field(gt=0, le=MAX_TIMEOUT_S)] | None = None
    """A deadline for each request, reply included (default: 600 s local, else 120 s)."""
    retries: Annotated[StrictInt, Field(ge=0, le=MAX_RETRIES)] | None = None
    """Retries after the first attempt."""
    backoff_base_s: Annotated[Number, Field(ge=0, le=MAX_BACKOFF_S)] | None = None
    """The wait before retry i is min(backoff_base_s × 2^i, backoff_max_s) (default 1 s)."""
    backoff_max_s: Annotated[Number, Field(ge=0, le=MAX_BACKOFF_S)] | None = None
    """The longest wait between retries (default 30 s)."""
    seed: StrictInt | None = None
    """The sampling seed where the backend takes one (default 0)."""
    structured: Structured | None = None
    """How replies are constrained to JSON where one is asked for."""
    options: dict[str, Any] | None = None
    """The backend's own options, passed as given."""
    api_key_env: str | None = None
    """The environment variable holding the API key (never the key itself)."""

    @model_serializer(mode="wrap")
    def _written(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        return {k: v for k, v in out.items() if k in self.model_fields_set}

    def settings(self, api_key: str | None = None) -> LLMSettings:
        """The call settings of this section (`api_key` held in memory only)."""
        return LLMSettings.from_config(self, api_key=api_key)
