"""Retrievers over the chunk corpus, each a PyTerrier transformer with its own parameters.

bm25 (PyTerrier + PISA), sim (FAISS: exact, or HNSW/IVF for large corpora), mmr (LangChain
MMR), reo (LongContextReorder of sim), mlq (LangChain's MultiQueryRetriever, its
LLM calls through `ragdash.llm`). Presets: `paper` (bm25 and mlq keep 5 chunks, the dense
retrievers 10, as in the paper) and `equal-k` (10 chunks everywhere).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ragdash.constants import MLQ_MODES as MODES
from ragdash.embeddings import DEFAULT_MODEL
from ragdash.params import MAX_K, Param, check_all, defaults
from ragdash.retrieval.choices import BACKENDS, INDEXES, LONG_CHUNKS, STEMMERS, STOPWORDS

if TYPE_CHECKING:
    from ragdash.retrieval.base import Retriever
    from ragdash.retrieval.multiquery import Ask


class _Classes(Mapping[str, "type[Retriever]"]):
    """Retriever name -> class, each class imported when first looked up: the names and the
    declarations below (what the config, the CLI's parser and the Build page read) need no
    PyTerrier, FAISS or LangChain, so every `ragdash` command starts without them."""

    _AT = {"bm25": "bm25.BM25", "sim": "dense.Sim", "mmr": "dense.MMR",
           "reo": "dense.Reorder", "mlq": "multiquery.MultiQuery"}

    def __getitem__(self, name: str) -> type[Retriever]:
        module, cls = self._AT[name].split(".")
        return getattr(importlib.import_module(f"ragdash.retrieval.{module}"), cls)

    def __contains__(self, name: object) -> bool:  # Mapping's would import the class
        return name in self._AT

    def __iter__(self) -> Iterator[str]:
        return iter(self._AT)

    def __len__(self) -> int:
        return len(self._AT)


RETRIEVERS: Mapping[str, type[Retriever]] = _Classes()
PRESETS: dict[str, dict[str, dict]] = {
    "paper": {"bm25": {"k": 5}, "sim": {"k": 10}, "mmr": {"k": 10, "fetch_k": 20},
              "reo": {"k": 10}, "mlq": {"k": 5}},
    "equal-k": {"bm25": {"k": 10}, "sim": {"k": 10}, "mmr": {"k": 10, "fetch_k": 20},
                "reo": {"k": 10}, "mlq": {"k": 10}},
}
DESCRIPTIONS: dict[str, str] = {
    "bm25": "BM25: lexical ranking by term frequency and rarity (PyTerrier + PISA)",
    "sim": "SIM: dense similarity of MiniLM embeddings (FAISS inner product, exact by "
           "default)",
    "mmr": "MMR: dense similarity with Maximal Marginal Relevance, trading relevance for "
           "diversity",
    "reo": "REO: SIM's chunks reordered so the best sit at both ends (LangChain "
           "LongContextReorder)",
    "mlq": "MLQ: an LLM writes sub-questions, each searched by SIM, results fused "
           "(as LangChain's MultiQueryRetriever)",
}
"""One line per retriever (dashboard help, `--help`)."""

_K = "chunks kept per question (at most the corpus's chunks)"
MAX_QUERIES = 100
"""The most MLQ sub-questions kept per question: each one is a search."""
_MODEL = Param("model", str, DEFAULT_MODEL, "sentence-embedding model")
_INDEX = Param("index", str, "exact", "dense: exact search, or an approximate index for large "
               "corpora (hnsw, ivf); its recall@10 against exact search is shown on the "
               "Retrieval page", choices=tuple(INDEXES))
_LONG = Param("long_chunks", str, "truncate", "dense: a chunk past the model's 256 word-pieces "
              "is cut there (truncate, the paper's) or embedded whole as the mean of its "
              "windows (windows)", choices=LONG_CHUNKS)
PARAMS: dict[str, tuple[Param, ...]] = {
    "bm25": (
        Param("k", int, 5, _K, low=1, high=MAX_K),
        Param("k1", float, 1.2, "BM25 term-frequency saturation (higher: repeated terms count "
              "more)", low=0),
        Param("b", float, 0.75, "BM25 length normalisation (0: none, 1: full)", low=0, high=1),
        Param("stemmer", str, "porter2", "word stemming before matching (porter2: 'running' ~ "
              "'run')", choices=STEMMERS),
        Param("stopwords", str, "none", "common words left out of the index", choices=STOPWORDS),
        Param("backend", str, "pisa", "BM25 engine: PISA (bundled) or Terrier (needs Java "
              "jars)", choices=BACKENDS),
    ),
    "sim": (Param("k", int, 10, _K, low=1, high=MAX_K), _MODEL, _INDEX, _LONG),
    "mmr": (
        Param("k", int, 10, _K, low=1, high=MAX_K),
        Param("fetch_k", int, 20, "MMR: candidates fetched by similarity before diversifying "
              "down to k", low=1, high=MAX_K),
        Param("lambda_mult", float, 0.5, "MMR: 1 = pure relevance, 0 = pure diversity", low=0,
              high=1),
        _MODEL, _INDEX, _LONG,
    ),
    "reo": (Param("k", int, 10, _K, low=1, high=MAX_K), _MODEL, _INDEX, _LONG),
    "mlq": (
        Param("k", int, 5, _K, low=1, high=MAX_K),
        Param("per_query_k", int, 10, "MLQ: chunks fetched for each sub-question", low=1,
              high=MAX_K),
        Param("mode", str, "default", "MLQ: default (original question searched too, fused by "
              "rank) or the paper's reference behaviour", choices=MODES),
        Param("max_queries", int, 5, "MLQ: sub-questions kept", low=1, high=MAX_QUERIES),
        _MODEL,
    ),
}
"""Every retriever's tunable parameters, declared once (`ragdash.params`): the defaults, the
checks, the Build page's inputs, the CLI help and docs/config.md come from here."""

PARAM_HELP: dict[str, str] = {p.name: p.help for ps in PARAMS.values() for p in ps}
"""One line per retriever parameter (derived from PARAMS)."""

ADDED_LATER = {"index": "exact", "long_chunks": "truncate"}
"""Parameters added after runs were made, with the default that reproduces those runs: left out
of the retrieve stage key at that default (see `key_params`)."""


def params_of(name: str) -> tuple[Param, ...]:
    """The declared parameters of retriever `name`."""
    _known(name)
    return PARAMS[name]


def default_params(name: str) -> dict:
    """The tunable parameters of a retriever and their defaults."""
    return defaults(params_of(name))


def resolve_params(name: str, preset: str | None = None, overrides: dict | None = None) -> dict:
    """Defaults, then the preset's values, then explicit overrides, each checked against its
    declaration; unknown keys are an error."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}': use one of {', '.join(PRESETS)}")
    params = check_all(name, params_of(name), overrides)
    params.update({k: v for k, v in (PRESETS[preset].get(name, {}) if preset else {}).items()
                   if k not in (overrides or {})})
    if params.get("fetch_k", 0) and params["fetch_k"] < params["k"]:
        raise ValueError(f"{name}: fetch_k ({params['fetch_k']}) must be at least k "
                         f"({params['k']}): MMR picks its k chunks among the fetch_k fetched")
    return params


def key_params(params: dict) -> dict:
    """`params` without the later-added parameters at their old behaviour (ADDED_LATER), so a
    run made before them keeps its stage key."""
    return {k: v for k, v in params.items()
            if not (k in ADDED_LATER and v == ADDED_LATER[k])}


def build_retriever(name: str, chunks: pd.DataFrame, cache_dir: Path, params: dict | None = None,
                    ask: Ask | None = None) -> Retriever:
    """Instantiate retriever `name` over the chunks (indexes cached under cache_dir); `ask`:
    mlq's sub-question replies (`multiquery.Ask`, e.g. `ragdash.llm.decompose` bound to the
    run's LLM settings)."""
    cls = _cls(name)
    kwargs = dict(params or {})
    if name == "mlq":
        kwargs.update(ask=ask)
    return cls(chunks, Path(cache_dir), **kwargs)


def _known(name: str) -> str:
    if name not in RETRIEVERS:
        raise ValueError(f"unknown retriever '{name}': use one of {', '.join(RETRIEVERS)}")
    return name


def _cls(name: str) -> type[Retriever]:
    return RETRIEVERS[_known(name)]


_FROM_BASE = {"RESULT_COLUMNS", "Retriever", "corpus_fingerprint"}


def __getattr__(name: str) -> Any:
    """The base's names, imported on first use (PEP 562)."""
    if name in _FROM_BASE:
        return getattr(importlib.import_module("ragdash.retrieval.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DESCRIPTIONS", "INDEXES", "PARAMS", "PARAM_HELP", "PRESETS", "RESULT_COLUMNS",
           "RETRIEVERS", "Retriever", "build_retriever", "corpus_fingerprint", "default_params",
           "key_params", "params_of", "resolve_params"]
