"""The controlled contexts: for one question, its relevant chunks (those holding a relevant part)
and noise chunks at each noise ratio, and at each position of the relevant chunks (Chen et al.,
AAAI 2024, §3.1: ceil(ratio × n) noise passages, the rest relevant, shuffled; a question with
fewer relevant chunks than the rest gets a shorter context, as RGB's did with fewer positive
passages). Pure: chunk ids in, chunk ids out."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragdash.stress.settings import StressSpec

NOISE, POSITION, INTEGRATION = "noise", "position", "integration"
"""The tests: accuracy against the noise ratio, against where the evidence stands, and with one
part's evidence against every part's."""
ONE_PART, ALL_PARTS = "one part", "all parts"
SHUFFLED = "shuffled"
"""The noise test's position: the relevant chunks at seeded random places, as RGB's."""


@dataclass(frozen=True)
class Condition:
    """One controlled context of one question: the test, its noise ratio and position, its
    chunks in order, and how many of them are relevant and how many are noise."""

    qid: str
    test: str
    ratio: float
    position: str
    chunk_ids: tuple[str, ...]
    relevant: int
    noise: int

    @property
    def name(self) -> str:
        """The condition as the answers table's `system`: 'stress:noise:0.4:shuffled'."""
        return f"stress:{self.test}:{self.ratio:g}:{self.position}"


def noise_count(ratio: float, chunks: int) -> int:
    """Noise chunks in a context of `chunks` at `ratio` (RGB: ceil, so 0.2 of 5 is 1)."""
    return math.ceil(round(ratio * chunks, 9))


def placed(relevant: Sequence[str], noise: Sequence[str], position: str,
           rng: np.random.Generator) -> tuple[str, ...]:
    """The relevant chunks first, last, in the middle of the noise, or shuffled in."""
    rel, nz = list(relevant), list(noise)
    if position == "first":
        return (*rel, *nz)
    if position == "last":
        return (*nz, *rel)
    if position == "middle":
        half = len(nz) // 2
        return (*nz[:half], *rel, *nz[half:])
    order = rel + nz
    return tuple(order[i] for i in rng.permutation(len(order)))


def conditions(qid: str, relevant: Sequence[str], negatives: Sequence[str],
               spec: StressSpec, cover: Sequence[str] = (), single: str | None = None
               ) -> list[Condition]:
    """Every controlled context of `qid`: one per noise ratio (relevant chunks shuffled in) and
    one per position at `spec.position_ratio`. `relevant`: its relevant chunks, best first;
    `negatives`: chunks holding none of its parts, hardest first. With `cover` (chunks that
    together hold every part, two or more) and `single` (a chunk holding one part only), the
    integration test: `single` first, then `cover` first, each filled with noise to `chunks`.
    A question without a relevant chunk gets none (nothing can be controlled)."""
    if not relevant:
        return []
    rng = np.random.default_rng([spec.seed, zlib.crc32(qid.encode())])
    out = []
    cases = [(NOISE, r, SHUFFLED) for r in spec.ratios] + \
        [(POSITION, spec.position_ratio, p) for p in spec.positions]
    for test, ratio, position in cases:
        n_noise = min(noise_count(ratio, spec.chunks), len(negatives))
        rel = list(relevant[: spec.chunks - noise_count(ratio, spec.chunks)])
        nz = list(negatives[:n_noise])
        if not rel and not nz:
            continue
        out.append(Condition(qid, test, ratio, position, placed(rel, nz, position, rng),
                             len(rel), len(nz)))
    if spec.integration and single is not None and len(cover) > 1:
        for name, rel in ((ONE_PART, [single]), (ALL_PARTS, list(cover))):
            nz = list(negatives[: max(spec.chunks - len(rel), 0)])
            out.append(Condition(qid, INTEGRATION, spec.position_ratio, name, (*rel, *nz),
                                 len(rel), len(nz)))
    return out


def part_cover(holders: Sequence[set[str]], order: Sequence[str]) -> tuple[list[str], str | None]:
    """For the chunks holding each part (`holders`, one set per part): a few chunks holding
    every part between them, taken greedily in `order` (best retrieval rank first), and a chunk
    holding the first part and no other one; ([], None) when the parts are not all held, or
    when one chunk holds them all (nothing to integrate)."""
    if len(holders) < 2 or not all(holders):
        return [], None
    rank = {c: i for i, c in enumerate(order)}
    left, cover = set(range(len(holders))), []
    while left:
        best = min({c for i in left for c in holders[i]},
                   key=lambda c: (-sum(c in holders[i] for i in left), rank.get(c, len(rank))))
        cover.append(best)
        left -= {i for i in left if best in holders[i]}
    alone = sorted((c for c in holders[0] if not any(c in h for h in holders[1:])),
                   key=lambda c: rank.get(c, len(rank)))
    if len(cover) < 2 or not alone:
        return [], None
    return cover, alone[0]


def hard_negatives(ranked: Sequence[Sequence[str]], relevant: set[str],
                   pool: Sequence[str], want: int, rng: np.random.Generator) -> list[str]:
    """Up to `want` chunks holding no relevant part: those the retrievers ranked (each list in
    rank order; the best rank over lists first), then chunks of `pool` drawn at random when the
    retrievers found too few."""
    best: dict[str, int] = {}
    for chunk_ids in ranked:
        for rank, cid in enumerate(chunk_ids):
            if cid not in relevant and rank < best.get(cid, math.inf):
                best[cid] = rank
    out = sorted(best, key=lambda c: best[c])[:want]
    if len(out) < want:
        taken = set(out) | relevant
        rest = [c for c in pool if c not in taken]
        extra = rng.choice(len(rest), size=min(want - len(out), len(rest)), replace=False) \
            if rest else []
        out += [rest[i] for i in sorted(extra)]
    return out
