"""Settings of the evidence finder (config `dataset.evidence`), checked in one place.

Kept free of heavy imports: `ragdash.config` validates the section with `check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

VERSION = 4
"""Bumped when the finder's rules change, so runs that used it get a new ingest key."""

METHODS = ("answer", "llm", "aligned", "aligned-llm")
"""`answer`: sentences holding the answer; `llm`: a quote the LLM copied from a document;
`aligned`: sentences supporting a sentence of an answer written in other words
(`ragdash.evidence.align`), `aligned-llm`: such sentences the LLM confirmed."""


@dataclass(frozen=True)
class EvidenceSettings:
    """How evidence is found and kept.

    `max_parts`: the most parts kept per question (1 to 3), however they are found;
    `margin`: other candidates are kept when their score is within this of the best
    one's; `llm`: ask the run's LLM to confirm the aligned candidates of an answer written in
    other words (`ragdash.evidence.align`), and to quote a supporting sentence for a shorter
    answer found verbatim nowhere; `passages`: how many top-ranked passages the alignment and
    the LLM's quotes draw on.
    """

    llm: bool = False
    max_parts: int = 3
    margin: float = 0.05
    passages: int = 3

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULTS: dict[str, Any] = EvidenceSettings().to_dict()


def _integer(value: object, key: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"evidence.{key} must be a whole number from {low} to {high}, "
                         f"not {value!r}")
    return value


def check(section: Mapping[str, Any] | None) -> EvidenceSettings:
    """The settings of a `dataset.evidence` mapping (missing keys at their defaults);
    ValueError naming the key otherwise."""
    data = dict(section or {})
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"evidence: unknown key(s) {unknown}; known: {', '.join(DEFAULTS)}")
    merged = {**DEFAULTS, **{k: v for k, v in data.items() if v is not None}}
    if not isinstance(merged["llm"], bool):
        raise ValueError(f"evidence.llm must be true or false, not {merged['llm']!r}")
    margin = merged["margin"]
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin <= 1:
        raise ValueError(f"evidence.margin must be a number from 0 to 1, not {margin!r}")
    return EvidenceSettings(llm=merged["llm"],
                            max_parts=_integer(merged["max_parts"], "max_parts", 1, 3),
                            margin=float(margin),
                            passages=_integer(merged["passages"], "passages", 1, 10))
