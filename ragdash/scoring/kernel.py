"""Compiled kernels: longest common substring / subsequence of a part with each context prefix.

One pass over the context gives the match length with every prefix, so all budgets cost the
same as the largest one (C_N are nested prefixes).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _lcsubstr_prefixes(part: np.ndarray, context: np.ndarray, stop: int, table: np.ndarray,
                       out: np.ndarray) -> None:
    """out[j] = longest common substring of `part` with context[:j+1], for j < stop.

    Builds the suffix automaton of the part (O(L)) and walks the context through it (O(M)).
    `table` maps a symbol to its id in the part's alphabet (-1 elsewhere); it is restored.
    """
    n = part.shape[0]
    ids = np.empty(n, np.int32)
    alphabet = 0
    for i in range(n):
        if table[part[i]] < 0:
            table[part[i]] = alphabet
            alphabet += 1
        ids[i] = table[part[i]]
    states = 2 * n + 2
    nxt = np.full((states, alphabet), -1, np.int32)
    link = np.full(states, -1, np.int32)
    length = np.zeros(states, np.int32)
    size, last = 1, 0
    for i in range(n):
        ch = ids[i]
        cur = size
        size += 1
        length[cur] = length[last] + 1
        x = last
        while x != -1 and nxt[x, ch] == -1:
            nxt[x, ch] = cur
            x = link[x]
        if x == -1:
            link[cur] = 0
        else:
            q = nxt[x, ch]
            if length[x] + 1 == length[q]:
                link[cur] = q
            else:
                clone = size
                size += 1
                length[clone] = length[x] + 1
                nxt[clone, :] = nxt[q, :]
                link[clone] = link[q]
                while x != -1 and nxt[x, ch] == q:
                    nxt[x, ch] = clone
                    x = link[x]
                link[q] = clone
                link[cur] = clone
        last = cur

    v, cur_len, top = 0, 0, 0
    for j in range(stop):
        if top == n:  # the whole part matched: nothing can grow
            out[j] = n
            continue
        ch = table[context[j]]
        if ch < 0:
            v, cur_len = 0, 0
        else:
            while v != 0 and nxt[v, ch] == -1:
                v = link[v]
                cur_len = length[v]
            if nxt[v, ch] != -1:
                v = nxt[v, ch]
                cur_len += 1
            else:
                v, cur_len = 0, 0
        if cur_len > top:
            top = cur_len
        out[j] = top
    for i in range(n):
        table[part[i]] = -1


@njit(cache=True, nogil=True)
def lcsubstr_at_cuts(parts: np.ndarray, offsets: np.ndarray, context: np.ndarray,
                     cuts: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Longest common substring length of each part with each prefix context[:cut].

    `parts` holds every part's symbols back to back, part i being parts[offsets[i]:offsets[i+1]].
    Symbols are non-negative ints below len(table). Returns an int array (len(cuts), n_parts).
    """
    n_parts = offsets.shape[0] - 1
    m = context.shape[0]
    stop = 0
    for c in cuts:
        stop = max(stop, min(c, m))
    best = np.zeros(max(stop, 1), np.int32)
    res = np.zeros((cuts.shape[0], n_parts), np.int32)
    for p in range(n_parts):
        _lcsubstr_prefixes(parts[offsets[p]:offsets[p + 1]], context, stop, table, best)
        for k in range(cuts.shape[0]):
            c = min(cuts[k], m)
            res[k, p] = best[c - 1] if c > 0 else 0
    return res


@njit(cache=True, nogil=True)
def prefix_lcsubseq(part: np.ndarray, context: np.ndarray) -> np.ndarray:
    """Longest common subsequence of `part` with each prefix of `context` (O(L*M) DP)."""
    n = part.shape[0]
    m = context.shape[0]
    row = np.zeros(n + 1, np.int32)
    best = np.zeros(m, np.int32)
    for j in range(m):
        ch = context[j]
        diag = 0
        for i in range(1, n + 1):
            up = row[i]
            if part[i - 1] == ch:
                row[i] = diag + 1
            elif row[i - 1] > up:
                row[i] = row[i - 1]
            diag = up
        best[j] = row[n]
    return best
