"""Compiled kernels: longest common substring / subsequence of a part with every prefix of a context.

Both return `best[j]` = the match length of the part with `context[:j+1]`, so the score of every
budget comes from one pass over the context (C_N are nested prefixes).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def prefix_lcsubstr(part: np.ndarray, context: np.ndarray, alphabet_size: int) -> np.ndarray:
    """Longest common substring of `part` with each prefix of `context`.

    Symbols are ints in [0, alphabet_size); a context symbol < 0 occurs nowhere in the part.
    Builds the suffix automaton of the part (O(L)) and walks the context through it (O(M)).
    """
    n = part.shape[0]
    states = 2 * n + 2
    nxt = np.full((states, max(alphabet_size, 1)), -1, np.int32)
    link = np.full(states, -1, np.int32)
    length = np.zeros(states, np.int32)
    size, last = 1, 0
    for i in range(n):
        ch = part[i]
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

    m = context.shape[0]
    best = np.zeros(m, np.int32)
    v, cur_len, top = 0, 0, 0
    for j in range(m):
        ch = context[j]
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
        best[j] = top
    return best


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
