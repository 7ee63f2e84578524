"""Metrics: RAGAS's and RAGChecker's metrics of every answer with an LLM (`ragdash.metrics`),
through the reply cache, retries and executor that generation and judging use; a re-run asks
only what the cache lacks. `ragdash metrics --run-dir R` runs it on an existing run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Stage, StageContext, needs_retrieval

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.settings import LLMSettings
    from ragdash.metrics.plan import ChosenSteps, StepPlan
    from ragdash.scoring.contexts import ContextCut

STEP = "measuring answers"
"""The stage's progress step (its items are the answers whose steps its plan prices)."""
MAX_TOKENS = 384
"""Reply tokens when the metrics borrow the judge's LLM settings (a judge's few tokens would
cut a list of claims)."""


def metrics_llm(spec: RunSpec) -> dict:
    """The metrics' LLM section: `metrics.llm` when set, else the judge's (`judge.llm`, else
    `llm`) with at least MAX_TOKENS reply tokens."""
    if spec.metrics.llm:
        return spec.metrics.llm.model_dump()
    borrowed = (spec.judge.llm or spec.llm).model_dump()
    return {**borrowed, "max_tokens": max(borrowed.get("max_tokens") or 0, MAX_TOKENS)}


def metrics_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings:
    """`LLMSettings` of `metrics_llm`."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(metrics_llm(spec), api_key=api_key)


def context_cut(spec: RunSpec) -> ContextCut:
    """How the run cut the C_N its answers were written from."""
    from ragdash.scoring.contexts import ContextCut

    return ContextCut(spec.tokenizer, spec.scoring.mode, spec.scoring.relevance_share)


def step_plan(run: Run, spec: RunSpec, reqs: list[tuple] | None = None) -> StepPlan:
    """Every metric's LLM steps on the run's answers (of the first `metrics.limit` questions),
    else on stand-in answers for every generation request (`reqs`, default the run's own), as
    `ragdash.metrics.plan.StepPlan`; the calls the runs root's reply cache already answers are
    counted apart. The metric chooser re-prices it for any choice (`ChosenSteps`)."""
    from ragdash.llm.plan import cache_only
    from ragdash.metrics.evaluate import items_from_run
    from ragdash.metrics.plan import planned_with
    from ragdash.stages.generate import requests, stand_in_answers

    answers = None if run.has("answers") else stand_in_answers(
        requests(run, spec) if reqs is None else reqs)
    items = items_from_run(run, context_cut(spec), answers, limit=spec.metrics.limit)
    root = RunsRoot(spec.runs_root)
    for f in (root.llm_cache, root.llm_cache.with_name(f"{root.llm_cache.name}-wal")):
        run.reader.stamp(f)  # a memo of this plan follows the cache
    if answers is not None:  # stand-ins: no reply of the cache can be theirs
        return planned_with(items)
    llm = metrics_settings(spec)
    with cache_only(llm, root) as replies:
        return planned_with(items, replies, llm)


def plan(ctx: PlanContext) -> ChosenSteps:
    """The steps of the metrics `metrics.use` selects (`step_plan`): a lower bound, correction
    rounds after unreadable replies are not counted."""
    from ragdash.stages.generate import planned_requests

    needs_retrieval(ctx)
    reqs = None if ctx.run.has("answers") else planned_requests(ctx)
    return step_plan(ctx.run, ctx.spec, reqs).chosen(ctx.spec.metrics.use)


def settings(spec: RunSpec) -> tuple:
    from ragdash.metrics.prompts import prompt_version

    m = spec.metrics
    return (m.use, m.limit, metrics_llm(spec), spec.scoring.relevance_share, prompt_version())


def run(ctx: StageContext) -> dict:
    from ragdash.metrics.evaluate import evaluate, items_from_run

    spec, out = ctx.spec, ctx.run
    m = spec.metrics
    llm = metrics_settings(spec, ctx.api_key)
    items = items_from_run(out, context_cut(spec), limit=m.limit)
    table = evaluate(items, llm, use=m.use, cache=RunsRoot(spec.runs_root).llm_cache,
                     progress=lambda d, t: ctx.progress(STEP, d, t),
                     executor=ctx.executor)
    out.write("metrics", table)
    out.update(llm={**out.manifest.get("llm", {}), "metrics": llm.to_manifest()})
    means = {n: round(float(table[n].mean()), 4) for n in m.use if table[n].notna().any()}
    return {"answers": len(table), "errors": int(failed_rows(table)),
            "calls": int(table["calls"].sum()), "means": means}


def failed_rows(table) -> int:
    """Rows with a failed step (not those without an answer to measure)."""
    from ragdash.metrics.evaluate import NO_ANSWER

    return int((table["error"].notna() & (table["error"] != NO_ANSWER)).sum())


def failed_calls(run: Run) -> int:
    """Answers whose steps ended in errors last time (a re-run retries them)."""
    return failed_rows(run.read("metrics")) if run.has("metrics") else 0


STAGE = Stage("metrics", "RAGAS and RAGChecker metrics of every answer with an LLM "
              "(faithfulness, answer relevancy, claim precision/recall, hallucination, ...)",
              needs=("ingest", "generate"), settings=settings, run=run,
              writes=("metrics",), switch="metrics", section="metrics",
              failed_calls=failed_calls, llm=metrics_settings, plan=plan, step=STEP,
              work="the answer metrics", llm_stage=True, on_run_dir=True)
