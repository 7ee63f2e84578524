"""Settings of the controlled-contexts test (config `stress`; `ragdash stress`), checked in one
place: unknown keys and values out of range are refused with the key."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragdash.llm.settings import LLMSpec
from ragdash.params import MAX_QUESTIONS

Position = Literal["first", "middle", "last"]
Checker = Literal["phrase", "judge"]
MAX_PASSAGES = 100
"""The most counterfactual passages one question's context may hold."""
RATIOS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
"""RGB's noise ratios: the share of a context's chunks that hold no relevant part."""


class StressSpec(BaseModel):
    """Contexts built from the run's chunks with known relevance, answered by the run's
    generator (Chen et al., AAAI 2024, §3): each question's relevant chunks with hard negatives
    (chunks the retrievers ranked high that hold no relevant part) at each noise ratio, and the
    relevant chunks first, in the middle and last at `position_ratio`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: bool = False
    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = 10
    """Test the first N questions that have a relevant chunk (None: all)."""
    chunks: Annotated[int, Field(ge=1, le=20)] = 5
    """Chunks per context, as RGB's five passages."""
    ratios: list[Annotated[float, Field(ge=0, le=1)]] = Field(
        default_factory=lambda: list(RATIOS))
    """Noise ratios: ceil(ratio × chunks) noise chunks, the rest relevant (as many as the
    question has)."""
    positions: list[Position] = Field(default_factory=lambda: ["first", "middle", "last"])
    """Where the relevant chunks go in the position test."""
    position_ratio: Annotated[float, Field(ge=0, lt=1)] = 0.8
    """The noise ratio of the position test (below 1: a context must hold evidence)."""
    integration: bool = True
    """For questions whose parts lie in different chunks: one part's chunk against every part's
    (RGB's information integration), at `position_ratio`'s share of noise chunks."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Where the relevant chunks go in the noise test (RGB shuffles its passages)."""
    llm: LLMSpec | None = None
    """The LLM that answers (default: the run's generator)."""

    @field_validator("ratios", "positions", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        """One value, or values written as `a,b` (a `--set` option), as a list."""
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return [value] if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _check(self) -> StressSpec:
        if not self.ratios and not self.positions and not self.integration:
            raise ValueError("stress.ratios and stress.positions are empty and "
                             "stress.integration is off: nothing to test")
        if len(set(self.ratios)) != len(self.ratios):
            raise ValueError(f"stress.ratios must not repeat a ratio, not {list(self.ratios)}")
        return self


class CounterfactualSettings(BaseModel):
    """RGB's counterfactual robustness test of a generator (`ragdash counterfactual`; Chen et
    al., AAAI 2024, §3.4): its options are made from these fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Only the first N questions."""
    passages: Annotated[int, Field(ge=1, le=MAX_PASSAGES)] = 5
    """Counterfactual passages per question (RGB's passage_num: 5)."""
    checker: Checker = "phrase"
    """How a reply detects the error: phrase, 'factual errors' in it (RGB's evalue.py), or
    judge, RGB's LLM check (fact_evalue.py) asked of the judge's LLM."""
