"""Calibrate: fit thresholds h < k on Score_IR against the judge (the paper's §3.3), measure
how well retrieval predicts the judge, and cross-validate the estimators. `calibration.scores`
picks the matching method whose Score_IR is used (default: scoring.method)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ragdash.stages.base import Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec


def run(ctx: StageContext) -> dict:
    from ragdash.calibration import calibrate, cross_validate
    from ragdash.run_spec import ir_scores

    spec, out = ctx.spec, ctx.run
    c = spec.calibration
    budget = c.budget or spec.generation.budget
    scores = c.scores or spec.scoring.method
    ir = ir_scores(out, scores)
    judgments = out.read("judgments")
    result = calibrate(ir, judgments, budget=budget, per_retriever=c.per_retriever,
                       method=c.method, n_boot=c.n_boot, seed=c.seed)
    try:
        table, verdict = cross_validate(ir, judgments, budget=budget, seed=c.seed)
        out.write("estimator_cv", table)
    except ValueError as exc:  # too few questions or retrievers to cross-validate
        verdict = f"not cross-validated: {exc}"
    from ragdash.labels import evaluate

    # labels, the judge's agreement with them and the reference metrics, PPI share estimates
    result = replace(result, generation_budget=spec.generation.budget,
                     scores=scores,  # the Score_IR matching method h and k apply to
                     estimators={"verdict": verdict},
                     **evaluate(out, n_boot=c.n_boot, seed=c.seed))
    out.write_json("calibration", result.to_dict())
    return {"h": float(result.h), "k": float(result.k), "pairs": int(result.n),
            "excluded": int(result.n_excluded), "scores": scores}


def settings(spec: RunSpec) -> tuple:
    """The calibration section; `scores` and `estimand` left out at their defaults, so runs
    made before them keep their key."""
    return ({k: v for k, v in spec.calibration.model_dump().items()
             if not (k == "scores" and v is None or k == "estimand" and v == "these answers")},)


STAGE = Stage("calibrate", "fit thresholds h and k, compare estimated and actual shares",
              needs=("judge", "score"), settings=settings, run=run,
              writes=("estimator_cv", "calibration"),
              switch="calibration", section="calibration")
