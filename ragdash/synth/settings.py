"""Settings of a synthetic test set (`ragdash synth` and the Data page's panel), checked in one
place. Kept free of heavy imports.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


MAX_PAIRS = 100_000
"""The most pairs one generation asks for."""


class SynthSettings(BaseModel):
    """What to generate (one LLM call per pair asked for; the kept ones are written), declared
    once: `ragdash synth`'s options and the task a dashboard job runs are made from it. A value
    outside its bounds is refused when the settings are made (ValueError naming it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    n: Annotated[int, Field(ge=1, le=MAX_PAIRS)] = 50
    """Pairs to generate, one LLM call each; the kept ones are written."""
    seed: Annotated[int, Field(ge=0)] = 0
    """The seed of the chunk sample."""
    multihop: bool = False
    """Each question needs two chunks of two documents; both spans are its relevant parts."""
    check_leakage: bool = False
    """Ask the LLM each kept question without the document and reject it when the reply holds
    the answer."""
    dedup_threshold: Annotated[float, Field(gt=0, le=1)] = DEDUP_THRESHOLD
    """The MiniLM cosine at or above which a question repeats a kept one."""
    chunker: str = "recursive"
    """How documents are cut into the chunks questions are written on (recursive: about 1000
    characters)."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        from ragdash.chunking import CHUNKERS

        d = dict(data or {})
        n = d.get("n", 50)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PAIRS:
            raise ValueError(f"synth: n must be a whole number from 1 to {MAX_PAIRS}, not {n!r}")
        t = d.get("dedup_threshold", DEDUP_THRESHOLD)
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1:
            raise ValueError(f"synth: the duplicate threshold must be a number in (0, 1], not "
                             f"{t!r}")
        if d.get("chunker", "recursive") not in CHUNKERS:
            raise ValueError(f"synth: unknown chunker {d['chunker']!r}; use one of "
                             f"{', '.join(CHUNKERS)}")
        return d

    @property
    def hops(self) -> int:
        return 2 if self.multihop else 1

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def settings_of(values: dict[str, Any]) -> SynthSettings:
    """`SynthSettings` of `values`; ValueError with the first problem in one sentence (`synth:
    n must be ...`) instead of pydantic's report."""
    from pydantic import ValidationError

    try:
        return SynthSettings(**values)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        cause = (err.get("ctx") or {}).get("error")
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(str(cause) if cause is not None else
                         f"synth: {where}: {err['msg'][:1].lower()}{err['msg'][1:]}") from None


def check(settings: SynthSettings) -> SynthSettings:
    """The settings (checked when they were made: `SynthSettings._check`)."""
    return settings
