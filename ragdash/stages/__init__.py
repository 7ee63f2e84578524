"""The pipeline's stages, one file each, and the registry that orders them.

A stage (`base.Stage`) names what it reads, hashes its settings into a key and runs on a
`StageContext`; `runner` orders stages by what they need and skips, forces or resumes them.
Adding a stage is one new file here and one line in `REGISTRY`.
"""

from ragdash.stages import (
    calibrate,
    chunk,
    erag,
    generate,
    ingest,
    judge,
    metrics,
    reference,
    retrieve,
    score,
    stress,
)
from ragdash.stages.base import Progress, Stage, StageContext, no_progress

REGISTRY: tuple[Stage, ...] = (
    ingest.STAGE,
    chunk.STAGE,
    retrieve.STAGE,
    score.STAGE,
    generate.STAGE,
    reference.STAGE,
    judge.STAGE,
    metrics.STAGE,
    erag.STAGE,
    stress.STAGE,
    calibrate.STAGE,
)
"""Every stage, each after the stages it needs."""

STAGES: dict[str, Stage] = {s.name: s for s in REGISTRY}

__all__ = ["REGISTRY", "STAGES", "Progress", "Stage", "StageContext", "no_progress"]
