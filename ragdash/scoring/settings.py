"""The `scoring` section of the run specification (`ragdash.config.RunSpec.scoring`): how
Score_IR matches relevant parts in C_N (the paper's §2.2). Kept free of heavy imports."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ragdash.constants import DEFAULT_SCORING_METHOD, DEFAULT_SCORING_MODE
from ragdash.section import ConfigError, Section, number


class ScoringSpec(Section):
    """How Score_IR matches relevant parts in C_N (the paper's §2.2)."""

    method: str = DEFAULT_SCORING_METHOD
    """How a relevant part is matched in C_N: substring (the paper's), subsequence,
    normalized, token, contains or semantic."""
    mode: Literal["corrected", "reference"] = DEFAULT_SCORING_MODE
    """corrected (Score_IR as the paper defines it) or reference (as the paper's code computes
    it, its bugs included: docs/reproducing-the-paper.md)."""
    relevance_share: float = 1.0
    """The share of a relevant part that counts as found, in (0, 1]."""
    also: list[str] = Field(default_factory=list)
    """More matching methods scored beside `method`."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        from ragdash.scoring import METHODS

        d = dict(data or {})
        share = number(d.get("relevance_share", 1.0), "scoring.relevance_share", float)
        method = d.get("method", DEFAULT_SCORING_METHOD)
        if method not in METHODS:
            raise ConfigError(f"scoring.method: '{d['method']}' is not one of "
                              f"{', '.join(METHODS)}")
        d["also"] = _also(d.get("also"), method)
        if d.get("mode", DEFAULT_SCORING_MODE) not in ("corrected", "reference"):
            raise ConfigError("scoring.mode must be 'corrected' or 'reference'")
        if not 0 < share <= 1:
            raise ConfigError("scoring.relevance_share must be in (0, 1]")
        d["relevance_share"] = share
        return d


def _also(value: object, method: str) -> list[str]:
    """`scoring.also` as a list of known methods (a comma string accepted), in order, without
    repeats or `scoring.method`; ConfigError otherwise."""
    from ragdash.scoring import METHODS

    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"scoring.also must be a list of scoring methods, not {value!r}")
    unknown = [v for v in value if v not in METHODS]
    if unknown:
        raise ConfigError(f"scoring.also: {', '.join(map(repr, unknown))} not one of "
                          f"{', '.join(METHODS)}")
    return [v for v in dict.fromkeys(value) if v != method]
