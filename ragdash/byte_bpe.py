"""Token end offsets of byte-level BPE tokenizers from token ids, encoded with tiktoken.

C_N (the paper's §2.2) ends where the N-th token ends. tiktoken encodes several times faster than
the Hugging Face tokenizers library, and a token's end follows from the byte lengths of the
tokens before it, mapped to character offsets. Two tokenizers use it:

- `for_llama3`: the Llama-3 tokenizer.json (the paper's tokenizer) as a tiktoken encoding: its
  pre-tokenizer regex, byte-level vocabulary and ranks. tiktoken's BPE equals Hugging Face's
  here because the file keeps whole pre-tokens that are in the vocabulary (`ignore_merges`), ranks
  every merge by the token it makes and lists every split of a token into two tokens (checked by
  the tests). A text holding an added token's marker (`<|`) is left to Hugging Face, which
  matches added tokens inside the text.
- `for_tiktoken`: a tiktoken encoding (cl100k), with tiktoken's own offsets rule.

A token that ends inside a multi-byte character ends after it (`split="after"`, Hugging Face's
offsets), or, with `split="before"`, where the next token starts (tiktoken's
`decode_with_offsets`); ends are non-decreasing either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

import numpy as np

Fallback = Callable[[list[str]], list[np.ndarray]]


class ByteBPE:
    """Token ends from a tiktoken encoding and the byte length of every token id."""

    def __init__(self, encoding: Any, nbytes: np.ndarray, split: str = "after",
                 marker: str | None = None, fallback: Fallback | None = None):
        if split not in ("after", "before"):
            raise ValueError(f"split must be 'after' or 'before', not {split!r}")
        if marker is not None and fallback is None:
            raise ValueError("texts with a marker need a fallback tokenizer")
        self.encoding, self.nbytes, self.split = encoding, nbytes, split
        self.marker, self.fallback = marker, fallback  # texts with `marker` go to `fallback`

    def token_ends(self, texts: Sequence[str]) -> list[np.ndarray]:
        """For each text, the character offset (exclusive) where each of its tokens ends."""
        out: list[np.ndarray | None] = []
        aside: list[int] = []
        for t in texts:
            if self.marker is not None and self.marker in t:
                aside.append(len(out))
                out.append(None)
            else:
                out.append(self._ends(t, self.encoding.encode_ordinary(t)))
        if aside and self.fallback is not None:
            for i, ends in zip(aside, self.fallback([texts[i] for i in aside]), strict=True):
                out[i] = ends
        return out  # type: ignore[return-value]

    def _ends(self, text: str, ids: list[int]) -> np.ndarray:
        byte_ends = np.cumsum(self.nbytes[np.asarray(ids, dtype=np.int64)])
        if text.isascii() or not len(byte_ends):
            return byte_ends
        raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        lead = (raw & 0xC0) != 0x80  # the first byte of each character
        chars_before = np.concatenate(([0], np.cumsum(lead)))  # characters begun before byte i
        if self.split == "after":
            return chars_before[byte_ends]
        inner = byte_ends[:-1]  # where the next token starts: back one if inside a character
        starts = np.maximum(chars_before[inner] - ~lead[inner], 0)
        return np.maximum.accumulate(np.append(starts, len(text)))


def _byte_level_table() -> dict[int, int]:
    """GPT-2's byte-level alphabet: the character standing for each byte -> that byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars = printable[:]
    others = [b for b in range(256) if b not in printable]
    return {**{c: c for c in chars}, **{256 + i: b for i, b in enumerate(others)}}


def for_llama3(hf_tokenizer: Any, fallback: Fallback) -> ByteBPE | None:
    """The Llama-3 Hugging Face tokenizer as a tiktoken encoding; None when the tokenizer is not
    shaped as the conditions above need (then Hugging Face tokenizes everything)."""
    import tiktoken

    model = hf_tokenizer.model
    if (type(model).__name__ != "BPE" or not model.ignore_merges or model.byte_fallback
            or model.dropout or hf_tokenizer.normalizer is not None):
        return None
    pre = json.loads(hf_tokenizer.pre_tokenizer.__getstate__())
    steps = pre.get("pretokenizers", [])
    if (len(steps) != 2 or steps[0].get("type") != "Split"
            or steps[0].get("behavior") != "Isolated" or steps[0].get("invert")
            or "Regex" not in steps[0].get("pattern", {}) or steps[1].get("type") != "ByteLevel"
            or steps[1].get("add_prefix_space") or steps[1].get("use_regex")):
        return None
    if not all("<|" in t.content for t in hf_tokenizer.get_added_tokens_decoder().values()):
        return None
    table = str.maketrans(_byte_level_table())
    vocab = hf_tokenizer.get_vocab(with_added_tokens=False)
    ranks = {token.translate(table).encode("latin-1"): i for token, i in vocab.items()}
    if len(ranks) != len(vocab) or sorted(ranks.values()) != list(range(len(ranks))):
        return None
    encoding = tiktoken.Encoding("ragdash-llama3", pat_str=steps[0]["pattern"]["Regex"],
                                 mergeable_ranks=ranks, special_tokens={})
    nbytes = np.zeros(len(ranks), dtype=np.int64)
    for token, i in ranks.items():
        nbytes[i] = len(token)
    return ByteBPE(encoding, nbytes, "after", marker="<|", fallback=fallback)


def for_tiktoken(encoding: Any) -> ByteBPE:
    """A tiktoken encoding with `decode_with_offsets`'s rule for split characters."""
    nbytes = np.zeros(encoding.n_vocab, dtype=np.int64)
    for i in range(encoding.n_vocab):
        with suppress(KeyError):  # an unused id between the ordinary and the special tokens
            nbytes[i] = len(encoding.decode_single_token_bytes(i))
    return ByteBPE(encoding, nbytes, "before")
