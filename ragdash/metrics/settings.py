"""The `metrics` section of the run specification (`ragdash.config.RunSpec.metrics`): which
RAGAS and RAGChecker metrics, on how many questions, with which LLM. Kept free of heavy
imports."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from ragdash.llm.settings import LLMSpec
from ragdash.metrics import resolve as resolve_metrics
from ragdash.params import MAX_QUESTIONS
from ragdash.section import ConfigError, Section, number


class MetricsSpec(Section):
    """RAGAS and RAGChecker metrics of every answer, with an LLM (`ragdash metrics`;
    docs/metrics.md)."""

    enabled: bool = False
    use: list[str] = Field(default_factory=lambda: resolve_metrics(None))
    """The metrics (names, or ragas, ragchecker, all); docs/metrics.md lists them."""
    llm: LLMSpec | None = None
    """The metrics' LLM settings (default: the judge's, else the run's `llm`)."""
    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Measure only the answers to the first N questions."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        try:
            d["use"] = resolve_metrics(d.get("use"))
        except ValueError as exc:
            raise ConfigError(f"metrics.use: {exc}") from None
        if d.get("limit") is not None:
            d["limit"] = number(d["limit"], "metrics.limit", int)
            if d["limit"] <= 0:
                raise ConfigError("metrics.limit must be a positive number of questions")
        return d
