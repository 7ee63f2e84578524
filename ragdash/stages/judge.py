"""Judge: score every answer 1-5 against the true answer and relevant parts (the paper's §2.3),
answers matched by the refusal rule scored 1 without a call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.analysis import judge_audit
from ragdash.llm.prompts import judge_prompt_version
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings


STEP = "judging answers"
"""The stage's progress step (its items are the calls its plan prices)."""


def judge_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings:
    """The judge: `judge.llm` when set, else the run's `llm`."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(spec.judge.llm or spec.llm, api_key=api_key)


def judge_options(spec: RunSpec) -> dict:
    """How the run's judge asks (`ragdash.llm.judge.judge`'s options): mode, order, prompts
    and the refusal rule."""
    from ragdash.llm.refusal import RefusalRule

    j = spec.judge
    return {"mode": j.mode, "shuffle": j.shuffle, "seed": j.seed,
            "reference_prompts": j.reference_prompts,
            "refusal": RefusalRule.from_config(j.refusal)}


def settings(spec: RunSpec) -> tuple:
    return (spec.judge.model_dump(), None if spec.judge.llm else spec.llm.model_dump(),
            judge_prompt_version())


def run(ctx: StageContext) -> dict:
    from ragdash.llm import judge_answers

    out = ctx.run
    judge = judge_settings(ctx.spec, ctx.api_key)
    answers = out.read("answers")
    judgments = judge_answers(
        answers, out.read("examples"), judge, cache=RunsRoot(ctx.spec.runs_root).llm_cache,
        **judge_options(ctx.spec), progress=lambda d, t: ctx.progress(STEP, d, t),
        executor=ctx.executor)
    out.write("judgments", judgments)
    checks = judge_audit.audit(judgments, answers, out.read("examples"))
    out.update(llm={**out.manifest.get("llm", {}), "judge": judge.to_manifest()},
               judge_audit=judge_audit.summary(checks))
    scored = judgments["score"].dropna()
    return {"judgments": len(judgments), "errors": int(judgments["score"].isna().sum()),
            "refusals_by_rule": int(judgments["rule"].notna().sum()),
            "distribution": {str(int(s)): int(n) for s, n in scored.value_counts()
                             .sort_index().items()},
            "audit_warnings": [f"{c.title}: {c.finding}" for c in checks if c.status == "warn"]}


def failed_calls(run: Run) -> int:
    """Judge calls that ended in errors; rows without an answer to judge are not calls."""
    if not run.has("judgments"):
        return 0
    from ragdash.llm.judge import NO_ANSWER

    j = run.read("judgments")
    return int((j["error"].notna() & (j["error"] != NO_ANSWER)).sum())


def plan(ctx: PlanContext) -> CallPlan:
    """The judge's calls (`judge_calls`, what `judge_answers` sends) on the run's answers when
    generation would send nothing new, else on a stand-in answer for every request generation
    answers (the refusal rule cannot score answers not made yet: an upper bound); stepwise
    judging is a lower bound (a partly correct answer asks twice)."""
    from ragdash.llm.judge import items_from_frames, judge_calls
    from ragdash.llm.plan import CallPlan
    from ragdash.stages.generate import planned_requests, stand_in_answers

    run, spec = ctx.run, ctx.spec
    generation = ctx.before.get("generate")
    if ctx.retrieved and (generation is None or not generation.calls) and run.has("answers"):
        answers = run.read("answers")
    else:
        answers = stand_in_answers(planned_requests(ctx))
    calls = judge_calls(items_from_frames(answers, run.read("examples")), judge_settings(spec),
                        **judge_options(spec))[1]
    mode = spec.judge.mode
    return CallPlan(calls, 25 if mode == "grouped" else 8, notes=(
        "stepwise judging: a lower bound, each partially correct answer asks twice",)
        if mode == "stepwise" else ())


STAGE = Stage("judge", "judge the answers 1-5 with the judge LLM", needs=("generate",),
              settings=settings, run=run, writes=("judgments",),
              switch="judge", section="judge", failed_calls=failed_calls, llm=judge_settings,
              plan=plan, step=STEP, work="judging", llm_stage=True)
