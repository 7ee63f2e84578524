"""The `calibration` section of the run specification (`ragdash.config.RunSpec.calibration`):
fitting the thresholds h and k (the paper's §3.3). Kept free of heavy imports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ragdash.budget import MAX_BUDGET
from ragdash.params import MAX_BOOT
from ragdash.section import ConfigError, Section


class CalibrationSpec(Section):
    """Fitting the thresholds h and k (the paper's §3.3)."""

    enabled: bool = False
    budget: Annotated[int, Field(ge=1, le=MAX_BUDGET)] | None = None
    """The N the thresholds are fit at (default: generation.budget)."""
    per_retriever: bool = False
    method: Literal["sweep", "de"] = "sweep"
    n_boot: Annotated[int, Field(ge=1, le=MAX_BOOT)] = 200
    """Bootstrap resamples of the intervals."""
    seed: Annotated[int, Field(ge=0)] = 0
    """The seed of the bootstrap resamples."""
    scores: str | None = None
    """The Score_IR method h and k are fit on (None: scoring.method)."""
    estimand: Literal["these answers", "new questions"] = "these answers"
    """What the share correct and its interval are about: this run's answers (a finite
    population) or new questions like these."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        data = dict(data or {})
        if data.get("method", "sweep") not in ("sweep", "de"):
            raise ConfigError("calibration.method must be 'sweep' or 'de'")
        return data
