"""Score_IR: how much of each relevant part lands in the first N tokens of a retrieved context.

`part_scores(parts, context, cuts)` gives, for every cut (the end of C_N) and every part p,
LCSubstr(p, context[:cut]) / len(p) in one pass over the context. Score_IR is the mean over parts.

Methods:
- `substring` (default): longest common substring in characters, case-sensitive (the paper's code).
- `subsequence`: longest common subsequence (the paper's wording).
- `normalized`: substring after casefolding and collapsing whitespace runs to one space.
- `token`: substring over word tokens (share of the part's words matched contiguously).
- `contains`: 1 when the whole part is inside C_N, else 0.
- `semantic`: the MiniLM cosine of the part with its most similar sentence window of C_N,
  mapped to [0, 1] (`ragdash.scoring.semantic`): a paraphrase scores, a verbatim part scores 1.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np

from ragdash.constants import DEFAULT_SCORING_METHOD

METHODS = ("substring", "subsequence", "normalized", "token", "contains", "semantic")
ABOUT = {
    "substring": "the longest common substring with C_N, in characters (the paper's code)",
    "subsequence": "the longest common subsequence with C_N, in characters",
    "normalized": "the longest common substring after casefolding and collapsing whitespace",
    "token": "the longest common run of words with C_N",
    "contains": "1 when the whole part is inside C_N, else 0",
    "semantic": "the MiniLM cosine with the closest sentence window of C_N by meaning, 0 at or "
                "below 0.30 (unrelated sentences), 1 at 1 (the same sentence)",
}
"""What each method measures for a part, in a phrase (for pages and reports)."""

_WORDS = re.compile(r"\w+|[^\w\s]")
_SPACE = re.compile(r"\s+")
_LOCAL = threading.local()  # one symbol table per thread (Streamlit runs sessions in threads)


def _table(size: int) -> np.ndarray:
    """A per-thread symbol -> alphabet-id table, all -1 (the kernel restores it after use)."""
    table = getattr(_LOCAL, "table", None)
    if table is None or len(table) < size:
        table = _LOCAL.table = np.full(max(size, 0x110000), -1, np.int32)
    return table


def _lcsubstr(parts: list[np.ndarray], context: np.ndarray, cuts, symbols: int = 0x110000):
    """Matched lengths (len(cuts), len(parts)) of uint32 symbol arrays below `symbols`, as float."""
    offsets = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    flat = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    cut_arr = np.asarray(cuts, dtype=np.int64).reshape(-1)
    from ragdash.scoring.kernel import lcsubstr_at_cuts  # numba: only where scores are made

    return lcsubstr_at_cuts(flat, offsets, context, cut_arr, _table(symbols)).astype(np.float64)


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _encode_against(part: np.ndarray, context: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Map symbols to 0..A-1 over the part's alphabet; context symbols outside it become -1."""
    alphabet, part_ids = np.unique(part, return_inverse=True)
    pos = np.searchsorted(alphabet, context)
    pos_clipped = np.minimum(pos, len(alphabet) - 1)
    ctx_ids = np.where(alphabet[pos_clipped] == context, pos_clipped, -1)
    return part_ids.astype(np.int32), ctx_ids.astype(np.int32), len(alphabet)


def _at_cuts(best: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    """best[cut-1] for each cut (0 for an empty prefix); cuts past the end take the last value."""
    if len(best) == 0:
        return np.zeros(len(cuts))
    idx = np.minimum(np.asarray(cuts, dtype=np.int64), len(best)) - 1
    return np.where(idx >= 0, best[np.maximum(idx, 0)], 0).astype(np.float64)


def _normalize_with_map(text: str) -> tuple[str, np.ndarray]:
    """Casefold and collapse whitespace; also return, per original offset, the normalised offset."""
    out: list[str] = []
    offsets = np.zeros(len(text) + 1, dtype=np.int64)
    n = 0
    prev_space = False
    for i, ch in enumerate(text):
        offsets[i] = n
        if ch.isspace():
            if not prev_space:
                out.append(" ")
                n += 1
            prev_space = True
        else:
            folded = ch.casefold()
            out.append(folded)
            n += len(folded)
            prev_space = False
    offsets[len(text)] = n
    return "".join(out), offsets


def normalize(text: str) -> str:
    """Casefold, collapse whitespace runs to one space, strip the ends."""
    return _SPACE.sub(" ", text.casefold()).strip()


def _word_ids(words: list[str], vocab: dict[str, int]) -> np.ndarray:
    return np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), np.uint32, len(words))


def part_scores(
    parts: Sequence[str], context: str, cuts: Sequence[int], method: str = DEFAULT_SCORING_METHOD
) -> np.ndarray:
    """Array (len(cuts), len(parts)): the score of each part in each prefix context[:cut]."""
    if method not in METHODS:
        raise ValueError(f"unknown scoring method '{method}': use one of {', '.join(METHODS)}")
    out = np.zeros((len(cuts), len(parts)))
    if not parts:
        return out
    if any(not p for p in parts):
        raise ValueError("a relevant part is empty: its score would divide by zero")
    if method == "semantic":  # imported here: it loads the embedding model when first used
        from ragdash.scoring.semantic import part_scores as semantic_scores

        return semantic_scores(parts, context, cuts)
    if method == "contains":
        for j, p in enumerate(parts):
            at = context.find(p)
            if at >= 0:
                out[:, j] = [float(at + len(p) <= cut) for cut in cuts]
        return out
    if method == "substring":
        lengths = _lcsubstr([_codepoints(p) for p in parts], _codepoints(context), cuts)
        return lengths / np.array([len(p) for p in parts], dtype=np.float64)
    if method == "subsequence":
        from ragdash.scoring.kernel import prefix_lcsubseq

        ctx = _codepoints(context)
        for j, p in enumerate(parts):
            p_ids, c_ids, _ = _encode_against(_codepoints(p), ctx)
            out[:, j] = _at_cuts(prefix_lcsubseq(p_ids, c_ids), cuts) / len(p)
        return out
    if method == "normalized":
        norm_ctx, offsets = _normalize_with_map(context)
        norm_cuts = offsets[np.clip(np.asarray(cuts, dtype=np.int64), 0, len(context))]
        normed = [normalize(p) or " " for p in parts]  # a whitespace-only part matches a space
        lengths = _lcsubstr([_codepoints(q) for q in normed], _codepoints(norm_ctx), norm_cuts)
        return lengths / np.array([len(q) for q in normed], dtype=np.float64)
    # token: word-level substring; a cut keeps the words that end within it
    matches = list(_WORDS.finditer(context))
    vocab: dict[str, int] = {}
    ctx = _word_ids([m.group() for m in matches], vocab)
    ends = np.fromiter((m.end() for m in matches), np.int64, len(matches))
    word_cuts = np.searchsorted(ends, np.asarray(cuts), side="right")
    words = [_WORDS.findall(p) or [p] for p in parts]  # a part without words is one symbol
    lengths = _lcsubstr([_word_ids(w, vocab) for w in words], ctx, word_cuts, len(vocab) + 1)
    return lengths / np.array([len(w) for w in words], dtype=np.float64)


def warm() -> None:
    """Compile every kernel once into numba's on-disk cache (`scripts/setup.sh` calls it): a
    later process loads them in milliseconds instead of compiling them (about 7 CPU-s)."""
    for method in METHODS:
        if method != "semantic":  # no kernel, and it would load MiniLM
            part_scores(["a part"], "a context with a part", [3, 30], method)


def score_ir(parts: Sequence[str], context: str, cuts: Sequence[int],
             method: str = DEFAULT_SCORING_METHOD):
    """Score_IR per cut (mean over parts; 0 when there is no part) and the part scores."""
    scores = part_scores(parts, context, cuts, method)
    means = scores.mean(axis=1) if len(parts) else np.zeros(len(cuts))
    return means, scores


def brute_force_lcsubstr(part: str, context: str) -> int:
    """The original code's algorithm: from len(p) down, test every substring of p with `in`.

    Kept as the correctness oracle and the speed baseline of the benchmark.
    """
    for size in range(len(part), 0, -1):
        for start in range(len(part) - size + 1):
            if part[start : start + size] in context:
                return size
    return 0


def brute_force_part_scores(parts: Sequence[str], context: str, cuts: Sequence[int]) -> np.ndarray:
    """`part_scores(..., method="substring")` computed the original way, one budget at a time."""
    return np.array(
        [[brute_force_lcsubstr(p, context[:cut]) / len(p) for p in parts] for cut in cuts]
    ).reshape(len(cuts), len(parts))
