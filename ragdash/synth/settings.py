"""Settings of a synthetic test set (`ragdash synth` and the Data page's panel), checked in one
place. Kept free of heavy imports.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

DEDUP_THRESHOLD = 0.9
"""A question whose MiniLM cosine with an earlier kept question is at least this is a
near-duplicate and rejected. Measured: rephrasings of one question ("When was the Eiffel Tower
completed?" / "In what year was the Eiffel Tower finished?"; "How long is the Danube?" / "What is
the length of the river Danube?") score 0.94 to 0.98; different questions on one subject ("Who
designed / How tall is / When was ... the Eiffel Tower") 0.76 to 0.88."""
MIN_CHUNK_CHARS = 200
"""Chunks shorter than this (headings, captions, list stubs) are not asked about; when a
corpus has none this long, every chunk is."""
MIN_SPAN_WORDS = 3
"""A span of fewer words is no relevant part (Score_IR of a two-word part says little)."""
SOURCE = "synth"
"""The `source` every synthetic row carries."""


@dataclass(frozen=True)
class SynthSettings:
    """What to generate. `n`: pairs asked for (one LLM call each; the kept ones are written);
    `seed`: the chunk sample; `multihop`: every question needs two chunks of two documents;
    `check_leakage`: ask the model each kept question without the document and reject it when
    the reply holds the answer; `dedup_threshold`: see DEDUP_THRESHOLD; `chunker`: the
    `ragdash.chunking` method that cuts documents into the chunks questions are written on."""

    n: int = 50
    seed: int = 0
    multihop: bool = False
    check_leakage: bool = False
    dedup_threshold: float = DEDUP_THRESHOLD
    chunker: str = "recursive"

    @property
    def hops(self) -> int:
        return 2 if self.multihop else 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check(settings: SynthSettings) -> SynthSettings:
    """The settings when valid, else ValueError naming the setting."""
    from ragdash.chunking import CHUNKERS

    n = settings.n
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100_000:
        raise ValueError(f"synth: n must be a whole number from 1 to 100000, not {n!r}")
    t = settings.dedup_threshold
    if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1:
        raise ValueError(f"synth: the duplicate threshold must be a number in (0, 1], not {t!r}")
    if settings.chunker not in CHUNKERS:
        raise ValueError(f"synth: unknown chunker {settings.chunker!r}; use one of "
                         f"{', '.join(CHUNKERS)}")
    return settings
