"""Before and instead of LLM calls: what the LLM stages would cost (a dry run: one loop over
the registry's stages, each pricing its own `plan` with its own `llm`, at the rate measured in
the LLM cache), and what saved thresholds predict for a run that has only retrieval scores
(the paper's §3.3 estimate)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ragdash.llm.plan import answered_note
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages import REGISTRY, STAGES, Stage
from ragdash.stages.base import NotPriced, PlanContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.cost import Estimate


def priced_stages(spec: RunSpec, stages: Iterable[str] | None = None) -> list[Stage]:
    """The stages a dry run prices, in registry order: those with a plan that call an LLM under
    `spec` and are switched on, of `stages` (default: every one)."""
    wanted = None if stages is None else set(stages)
    return [s for s in REGISTRY if s.plan is not None and (wanted is None or s.name in wanted)
            and s.enabled(spec) and s.uses_llm(spec) is not None]


def dry_run(run: Run, spec: RunSpec, *, retrieved: bool = True,
            stages: Iterable[str] | None = None) -> dict:
    """What the LLM calls of `stages` (default: every stage switched on) would cost, before any
    call: {part: Estimate} (`Stage.priced_as`: evidence, mlq, generation, judge, metrics, erag,
    stress) and a `note`. Each stage prices its own `plan` with its own `llm`; the calls the reply
    cache answers are left out and counted in the note.

    `retrieved=False`: priced before retrieval (a dry run stops before it when mlq would ask
    the LLM for its sub-questions): mlq's calls are priced too, and generation with contexts
    of the full budget (an upper bound); the stages that read the retrieved chunks say they are
    not priced."""
    from functools import cache

    from ragdash.stages.runner import stage_keys

    keys = cache(lambda: stage_keys(spec))  # they hash the dataset's files: only if asked
    ctx = PlanContext(run, spec, retrieved,
                      up_to_date=lambda name: run.stage_done(name, keys()[name]))
    root = RunsRoot(spec.runs_root)
    out: dict = {}
    notes: list[str] = []
    for stage in priced_stages(spec, stages):
        try:
            if "ingest" in ctx.before and not run.has("examples"):  # its finder asks first
                raise NotPriced("the questions are not loaded yet (ingest's evidence finder "
                                "calls the LLM first: run it, then price the rest)")
            plan = stage.plan(ctx)  # type: ignore[misc]  # priced_stages: it has one
        except NotPriced as exc:
            notes.append(f"{stage.priced_as} not priced: {exc}")
            continue
        if plan is None:
            continue
        est, cached = plan.price(stage.uses_llm(spec), root)
        ctx.before[stage.name] = out[stage.priced_as] = est
        if cached:
            notes.append(answered_note(stage.priced_as, cached))
        notes += plan.notes
    if notes:
        out["note"] = "; ".join(notes)
    return out


def stage_estimate(run: Run, spec: RunSpec, name: str) -> tuple[Estimate, int]:
    """What stage `name` alone would cost on the run (`ragdash <name> --run-dir R --dry-run`,
    the LLM page's launchers): its plan's estimate, and the calls the reply cache answers.
    `NotPriced` (a ValueError) when it cannot be planned yet."""
    stage = STAGES[name]
    llm = stage.uses_llm(spec)
    plan = stage.plan(PlanContext(run, spec)) if stage.plan is not None and llm else None
    if plan is None:
        raise NotPriced(f"stage {name} calls no LLM here")
    return plan.price(llm, RunsRoot(spec.runs_root))


def before_run(spec: RunSpec) -> dict:
    """`dry_run` of a run not made yet: its questions read from the dataset alone (no corpus
    read, no stage run, unless ingest's evidence finder asks the LLM: it is priced by running
    it on the dataset and corpus with nothing sent), generation priced at contexts of the full
    budget (an upper bound), the judge on stand-in answers (answers the refusal rule will score
    are not known yet, so it is an upper bound too)."""
    import tempfile

    from ragdash.data import load_questions
    from ragdash.stages.ingest import examples_frame

    ds = spec.dataset
    examples = load_questions(ds.path, ds.format, include_unanswerable=ds.include_unanswerable,
                              limit=ds.limit, sample=ds.sample, sheet=ds.sheet,
                              columns=ds.columns)
    if not examples:
        raise ValueError(f"{ds.path}: no valid question to price")
    with tempfile.TemporaryDirectory(prefix="ragdash-estimate-") as tmp:
        run = Run(tmp)
        run.write("examples", examples_frame(examples))
        return dry_run(run, spec, retrieved=False)


def estimated_stages() -> dict[str, str]:
    """The stage whose LLM calls each part of a dry run's estimate prices."""
    return {s.priced_as: s.name for s in REGISTRY if s.plan is not None}


def stage_plan(est: dict) -> dict[str, dict[str, float]]:
    """{stage: {calls, seconds}} of a dry run's estimate, for the stages whose time it knows:
    a job's ETA counts the stages it has not reached (`ragdash.jobs.Reporter`)."""
    parts = estimated_stages()
    return {parts[k]: {"calls": e.calls, "seconds": float(e.seconds)} for k, e in est.items()
            if k in parts and getattr(e, "seconds", None) is not None}


def estimate_run(run: Run, calibration: dict, budget: int | None = None,
                 judge_model: str = "gpt-4o", generator_model: str = "llama3:8b") -> dict:
    """Apply saved thresholds to a run with retrieval scores only; write estimate.json."""
    from ragdash.calibration import calls_avoided, estimate
    from ragdash.llm.cost import estimate as cost_estimate
    from ragdash.run_spec import ir_scores

    budget = budget or calibration.get("budget", 1000)
    ir = ir_scores(run, calibration.get("scores"))  # the matching method h and k were fit on
    if budget not in set(ir["budget"]):
        raise ValueError(f"run {run.path} has no Score_IR at budget {budget} "
                         f"(budgets: {sorted(set(ir['budget']))})")
    table = estimate(ir, calibration["h"], calibration["k"], budget=budget)
    n_q, n_r = ir["qid"].nunique(), ir["retriever"].nunique()
    avoided = calls_avoided(n_q, n_r)
    # typical sizes: a RAG prompt ~1,100 tokens in, 40 out; a 6-candidate judge call ~700/20
    gen = cost_estimate(avoided["generation_calls"], 1100, 40, generator_model)
    jud = cost_estimate(avoided["judge_calls"], 700, 20, judge_model)
    data = {
        "budget": budget, "h": calibration["h"], "k": calibration["k"],
        "estimated_shares": table.to_dict(orient="records"),
        "calls_avoided": avoided,
        "cost_avoided": {"generation": str(gen), "judge": str(jud),
                         "usd": (gen.usd or 0.0) + (jud.usd or 0.0)},
    }
    run.write_json("estimate", data)
    return data
