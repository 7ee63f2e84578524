"""The values some retriever parameters may take, declared apart from the retrievers (which
import PyTerrier, FAISS and LangChain) so that their declarations load without them."""

from __future__ import annotations

STEMMERS = ("porter2", "krovetz", "none")
STOPWORDS = ("none", "terrier")
BACKENDS = ("pisa", "terrier")
"""BM25: the stemmers, stopword lists and engines."""

INDEXES = {
    "exact": {},
    "hnsw": {"M": 32, "ef_construction": 200, "ef_search": 128},
    "ivf": {"cells": "min(4 sqrt(n), n / 39)", "nprobe": "max(8, cells / 8)"},
}
"""Dense index kinds and their fixed parameters (part of an approximate index's cache key)."""

LONG_CHUNKS = ("truncate", "windows")
"""Dense: how a chunk past the model's word-pieces is embedded."""
