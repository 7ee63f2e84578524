"""Score_IR: how much of each relevant part lands in the first N tokens of a retrieved context.

`part_scores(parts, context, cuts)` gives, for every cut (the end of C_N) and every part p,
LCSubstr(p, context[:cut]) / len(p) in one pass over the context. Score_IR is the mean over parts.

Methods:
- `substring` (default): longest common substring in characters, case-sensitive (the paper's code).
- `subsequence`: longest common subsequence (the paper's wording).
- `normalized`: substring after casefolding and collapsing whitespace runs to one space.
- `token`: substring over word tokens (share of the part's words matched contiguously).
- `contains`: 1 when the whole part is inside C_N, else 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ragdash.scoring.kernel import prefix_lcsubseq, prefix_lcsubstr

METHODS = ("substring", "subsequence", "normalized", "token", "contains")

_WORDS = re.compile(r"\w+|[^\w\s]")
_SPACE = re.compile(r"\s+")


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
    """best[cut-1] for each cut (0 for an empty prefix); cuts beyond the end take the last value."""
    if len(best) == 0:
        return np.zeros(len(cuts))
    idx = np.minimum(np.asarray(cuts, dtype=np.int64), len(best)) - 1
    return np.where(idx >= 0, best[np.maximum(idx, 0)], 0).astype(np.float64)


def _substring_lengths(part: np.ndarray, context: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    p, c, a = _encode_against(part, context)
    return _at_cuts(prefix_lcsubstr(p, c, a), cuts)


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
    parts: Sequence[str], context: str, cuts: Sequence[int], method: str = "substring"
) -> np.ndarray:
    """Array of shape (len(cuts), len(parts)): the score of each part in each prefix context[:cut]."""
    if method not in METHODS:
        raise ValueError(f"unknown scoring method '{method}': use one of {', '.join(METHODS)}")
    out = np.zeros((len(cuts), len(parts)))
    if not parts:
        return out
    if any(not p for p in parts):
        raise ValueError("a relevant part is empty: its score would divide by zero")
    if method == "contains":
        for j, p in enumerate(parts):
            at = context.find(p)
            if at >= 0:
                out[:, j] = [float(at + len(p) <= cut) for cut in cuts]
        return out
    if method == "substring":
        ctx = _codepoints(context)
        for j, p in enumerate(parts):
            out[:, j] = _substring_lengths(_codepoints(p), ctx, cuts) / len(p)
        return out
    if method == "subsequence":
        ctx = _codepoints(context)
        for j, p in enumerate(parts):
            p_ids, c_ids, _ = _encode_against(_codepoints(p), ctx)
            out[:, j] = _at_cuts(prefix_lcsubseq(p_ids, c_ids), cuts) / len(p)
        return out
    if method == "normalized":
        norm_ctx, offsets = _normalize_with_map(context)
        ctx = _codepoints(norm_ctx)
        norm_cuts = offsets[np.minimum(np.asarray(cuts), len(context))]
        for j, p in enumerate(parts):
            q = normalize(p)
            if q:
                out[:, j] = _substring_lengths(_codepoints(q), ctx, norm_cuts) / len(q)
        return out
    # token: word-level substring; a cut keeps the words that end within it
    matches = list(_WORDS.finditer(context))
    vocab: dict[str, int] = {}
    ctx = _word_ids([m.group() for m in matches], vocab)
    ends = np.fromiter((m.end() for m in matches), np.int64, len(matches))
    word_cuts = np.searchsorted(ends, np.asarray(cuts), side="right")
    for j, p in enumerate(parts):
        words = _WORDS.findall(p)
        if words:
            p_ids = _word_ids(words, vocab)
            out[:, j] = _substring_lengths(p_ids, ctx, word_cuts) / len(words)
    return out


def score_ir(parts: Sequence[str], context: str, cuts: Sequence[int], method: str = "substring"):
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
