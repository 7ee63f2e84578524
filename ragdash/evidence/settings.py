"""Settings of the evidence finder (config `dataset.evidence`), checked in one place.

Kept free of heavy imports: `ragdash.config` validates the section with `check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)

VERSION = 4
"""Bumped when the finder's rules change, so runs that used it get a new ingest key."""

QUOTE_STEP = "evidence: asking the LLM for quotes"
"""The progress step of the finder's quote calls (a job's time left weighs its rate)."""
REPLY_TOKENS = 60
"""Reply tokens a dry run assumes per finder call: a quoted sentence, or the numbers of the
sentences that support an answer sentence."""

METHODS = ("answer", "llm", "aligned", "aligned-llm")
"""`answer`: sentences holding the answer; `llm`: a quote the LLM copied from a document;
`aligned`: sentences supporting a sentence of an answer written in other words
(`ragdash.evidence.align`), `aligned-llm`: such sentences the LLM confirmed."""


class EvidenceSettings(BaseModel):
    """How evidence is found and kept (config `dataset.evidence`; a key set to None keeps its
    default, an unknown key is refused).

    `max_parts`: the most parts kept per question (1 to 3), however they are found;
    `margin`: other candidates are kept when their score is within this of the best
    one's; `llm`: ask the run's LLM to confirm the aligned candidates of an answer written in
    other words (`ragdash.evidence.align`), and to quote a supporting sentence for a shorter
    answer found verbatim nowhere; `passages`: how many top-ranked passages the alignment and
    the LLM's quotes draw on.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)

    llm: bool = False
    """Ask the run's LLM to confirm aligned parts and to quote one for a short answer."""
    max_parts: Annotated[int, Field(ge=1, le=3)] = 3
    """The most parts kept per question."""
    margin: Annotated[StrictInt | StrictFloat, Field(ge=0, le=1)] = 0.05
    """Other candidates are kept within this of the best one's score."""
    passages: Annotated[int, Field(ge=1, le=10)] = 3
    """Top-ranked passages the alignment and the LLM's quotes draw on."""

    @model_validator(mode="before")
    @classmethod
    def _unset(cls, data: Any) -> Any:
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, Mapping) \
            else data

    @field_validator("margin")
    @classmethod
    def _float(cls, value: float) -> float:
        return float(value)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


DEFAULTS: dict[str, Any] = EvidenceSettings().to_dict()


def check(section: Mapping[str, Any] | EvidenceSettings | None) -> EvidenceSettings:
    """The settings of a `dataset.evidence` mapping (missing keys at their defaults);
    ValueError (a pydantic ValidationError) naming the key otherwise."""
    if isinstance(section, EvidenceSettings):
        return section
    return EvidenceSettings.model_validate(dict(section or {}))
