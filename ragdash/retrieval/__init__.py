"""Retrievers over the chunk corpus, each a PyTerrier transformer with its own parameters.

bm25 (PyTerrier + PISA), sim (FAISS: exact, or HNSW/IVF for large corpora), mmr (LangChain
MMR), reo (LongContextReorder of sim), mlq (LangChain's MultiQueryRetriever, its
LLM calls through `ragdash.llm`). Presets: `paper` (bm25 and mlq keep 5 chunks, the dense
retrievers 10, as in the paper) and `equal-k` (10 chunks everywhere).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd

from ragdash.retrieval.base import RESULT_COLUMNS, Retriever, corpus_fingerprint
from ragdash.retrieval.bm25 import BACKENDS, BM25, STEMMERS, STOPWORDS
from ragdash.retrieval.dense import INDEXES, MMR, Reorder, Sim
from ragdash.retrieval.multiquery import MODES, Ask, MultiQuery

RETRIEVERS: dict[str, type[Retriever]] = {
    "bm25": BM25, "sim": Sim, "mmr": MMR, "reo": Reorder, "mlq": MultiQuery,
}
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

PARAM_HELP: dict[str, str] = {
    "k": "chunks kept per question",
    "k1": "BM25 term-frequency saturation (higher: repeated terms count more)",
    "b": "BM25 length normalisation (0: none, 1: full)",
    "stemmer": "word stemming before matching (porter2: 'running' ~ 'run')",
    "stopwords": "common words left out of the index",
    "backend": "BM25 engine: PISA (bundled) or Terrier (needs Java jars)",
    "model": "sentence-embedding model",
    "fetch_k": "MMR: candidates fetched by similarity before diversifying down to k",
    "lambda_mult": "MMR: 1 = pure relevance, 0 = pure diversity",
    "per_query_k": "MLQ: chunks fetched for each sub-question",
    "mode": "MLQ: default (original question searched too, fused by rank) or the paper's "
            "reference behaviour",
    "max_queries": "MLQ: sub-questions kept",
    "index": "dense: exact search, or an approximate index for large corpora (hnsw, ivf); "
             "its recall@10 against exact search is shown on the Retrieval page",
}
"""One line per retriever parameter."""

CHOICES: dict[str, tuple[str, ...]] = {
    "stemmer": STEMMERS, "stopwords": STOPWORDS, "backend": BACKENDS,
    "mode": MODES, "index": tuple(INDEXES),
}
"""The allowed values of the parameters that take a name."""
UNIT_INTERVAL = {"b", "lambda_mult"}
"""Parameters that are shares, from 0 to 1."""

_NOT_PARAMS = {"self", "chunks", "cache_dir", "ask"}
ADDED_LATER = {"index": "exact"}
"""Parameters added after runs were made, with the default that reproduces those runs: left out
of the retrieve stage key at that default (see `key_params`)."""


def default_params(name: str) -> dict:
    """The tunable parameters of a retriever and their defaults."""
    cls = _cls(name)
    return {p.name: p.default for p in inspect.signature(cls.__init__).parameters.values()
            if p.name not in _NOT_PARAMS and p.default is not inspect.Parameter.empty}


def resolve_params(name: str, preset: str | None = None, overrides: dict | None = None) -> dict:
    """Defaults, then the preset's values, then explicit overrides; unknown keys are an error."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"unknown preset '{preset}': use one of {', '.join(PRESETS)}")
    params = default_params(name)
    params.update(PRESETS[preset].get(name, {}) if preset else {})
    unknown = set(overrides or {}) - set(params)
    if unknown:
        raise ValueError(f"{name}: unknown parameter(s) {sorted(unknown)}; "
                         f"known: {', '.join(sorted(params))}")
    for key, value in (overrides or {}).items():
        params[key] = _checked(name, key, value, params[key])
    if params.get("fetch_k", 0) and params["fetch_k"] < params["k"]:
        raise ValueError(f"{name}: fetch_k ({params['fetch_k']}) must be at least k "
                         f"({params['k']}): MMR picks its k chunks among the fetch_k fetched")
    return params


def _checked(name: str, key: str, value: object, default: object) -> object:
    """`value` if it has the default's type (a whole number for counts, a number for weights,
    one of CHOICES for names) and range, else ValueError saying what is expected."""
    where = f"{name}.{key}"
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise ValueError(f"{where} must be one of {', '.join(CHOICES[key])}, "
                             f"not {value!r}")
    elif isinstance(default, int):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{where} must be a whole number of at least 1, not {value!r}")
    elif isinstance(default, float):
        if (not isinstance(value, int | float) or isinstance(value, bool) or value < 0
                or value != value):
            raise ValueError(f"{where} must be a number of at least 0, not {value!r}")
        if key in UNIT_INTERVAL and value > 1:
            raise ValueError(f"{where} must be between 0 and 1, not {value!r}")
    elif isinstance(default, str) and not isinstance(value, str):
        raise ValueError(f"{where} must be text, not {value!r}")
    return value


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


def _cls(name: str) -> type[Retriever]:
    if name not in RETRIEVERS:
        raise ValueError(f"unknown retriever '{name}': use one of {', '.join(RETRIEVERS)}")
    return RETRIEVERS[name]


__all__ = ["DESCRIPTIONS", "INDEXES", "PARAM_HELP", "PRESETS", "RESULT_COLUMNS", "RETRIEVERS",
           "Retriever", "build_retriever", "corpus_fingerprint", "default_params", "key_params",
           "resolve_params"]
