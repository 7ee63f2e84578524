"""What a dense retriever does with a chunk longer than its model reads.

all-MiniLM-L6-v2 reads at most 256 word-pieces (its `max_seq_length`, special tokens included)
and silently drops the rest, so the end of a long chunk is invisible to SIM, MMR and REO (the
paper's code, and ragdash by default: `truncate`). `windows` embeds a long chunk as the mean of
the unit vectors of consecutive windows that each fit, normalised again (the whole chunk
counts); a chunk that fits is embedded as it is, so both give it the same vector (up to
the last bits, which depend on the batch it is embedded in).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

_SPECIAL = 2  # [CLS] and [SEP] take two of the model's positions


@lru_cache(maxsize=4)
def _tokenizer(model: str):
    from transformers import AutoTokenizer

    from ragdash.embeddings import model_path

    return AutoTokenizer.from_pretrained(str(model_path(model)))


def max_tokens(model: str) -> int:
    """The word-pieces of text the model reads (its max_seq_length less [CLS] and [SEP])."""
    from ragdash.embeddings import model_path

    config = model_path(model) / "sentence_bert_config.json"
    length = json.loads(config.read_text())["max_seq_length"] if config.is_file() else 256
    return int(length) - _SPECIAL


def windows(text: str, offsets: Sequence[tuple[int, int]], size: int) -> list[str]:
    """`text` cut into consecutive windows of at most `size` tokens (`offsets`: each token's
    character span); a text of `size` tokens or fewer is one window, the text itself."""
    if size < 1:
        raise ValueError(f"window size must be at least 1 token, got {size}")
    if len(offsets) <= size:
        return [text]
    out = []
    for i in range(0, len(offsets), size):
        span = offsets[i:i + size]
        start = span[0][0]
        end = offsets[i + size][0] if i + size < len(offsets) else len(text)
        out.append(text[start:end])
    return out


def split(texts: Sequence[str], model: str) -> list[list[str]]:
    """Each text cut into windows the model reads whole."""
    tok = _tokenizer(model)
    size = max_tokens(model)
    enc = tok(list(texts), add_special_tokens=False, return_offsets_mapping=True)
    return [windows(t, o, size) for t, o in zip(texts, enc["offset_mapping"], strict=True)]


def embed_whole(texts: Sequence[str], model: str,
                embed: Callable[[list[str]], Sequence]) -> np.ndarray:
    """Unit vectors of `texts` that see every word-piece: a text's windows (`split`) are
    embedded by `embed` (texts -> unit vectors), averaged and normalised again."""
    parts = split(texts, model)
    flat = [w for ws in parts for w in ws]
    vectors = np.asarray(embed(flat), dtype=np.float32) if flat else np.zeros((0, 384))
    out, i = [], 0
    for ws in parts:
        v = vectors[i] if len(ws) == 1 else vectors[i:i + len(ws)].mean(axis=0)
        i += len(ws)
        out.append(v if len(ws) == 1 else v / (np.linalg.norm(v) or 1.0))
    return np.asarray(out, dtype=np.float32).reshape(len(parts), vectors.shape[1])
