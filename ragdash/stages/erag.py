"""eRAG (Salemi & Zamani, SIGIR 2024): every chunk a retriever ranked within the top k, given
alone with its question to the generator; the output, scored against the gold answers, labels
the chunk, and the labels give precision, MAP, MRR, nDCG and hit at k per (question, retriever)
(`ragdash.erag`). Calls go through the reply cache, retries and executor that generation uses;
a re-run asks only what the cache lacks. `ragdash erag --run-dir R` runs it on an existing
run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Stage, StageContext, needs_retrieval

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.erag.calls import ChunkItem
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings

STEP = "answering from each chunk alone"
"""The stage's progress step (its items are the calls a dry run prices)."""


def erag_llm(spec: RunSpec) -> dict:
    """eRAG's LLM section: `erag.llm` when set, else the generator's (`generation.llm`, else
    `llm`): the paper asks the downstream model itself."""
    return (spec.erag.llm or spec.generation.llm or spec.llm).model_dump()


def erag_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings:
    """`LLMSettings` of `erag_llm`."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(erag_llm(spec), api_key=api_key)


def depth(spec: RunSpec) -> dict[str, int]:
    """The chunks judged per question for each retriever of the run, in its order: `erag.k`
    (default the retriever's own k), at most `erag.max_k`."""
    out = {r: spec.erag.depth(int(spec.retrievers.resolved[r]["k"]))
           for r in spec.retrievers.use}
    # an imported system has no k of its own: erag.k, else erag.max_k
    return {**out, **{s: spec.erag.depth(spec.erag.max_k) for s in spec.systems}}


def chunk_items(run: Run, spec: RunSpec) -> list[ChunkItem]:
    """The chunks eRAG judges on `run` (`ragdash.erag.calls.chunk_items`)."""
    from ragdash.erag.calls import chunk_items as items
    from ragdash.systems.store import chunk_table

    return items(run.read("examples"), run.read("retrieved"), chunk_table(run), depth(spec),
                 spec.erag.limit)


def prompt_options(spec: RunSpec) -> dict:
    """The generation prompt eRAG asks with: the generator's own."""
    return {"reference_prompts": spec.generation.reference_prompts,
            "prompt": spec.generation.prompt}


def plan(ctx: PlanContext) -> CallPlan:
    """The calls eRAG sends (`ragdash.erag.calls.erag_plan`, what `evaluate` sends), those the
    reply cache answers left out, priced as generation's replies are."""
    from ragdash.erag.calls import erag_plan
    from ragdash.llm.plan import CallPlan
    from ragdash.stages.generate import TOKENS_OUT

    needs_retrieval(ctx)
    return CallPlan(erag_plan(chunk_items(ctx.run, ctx.spec), **prompt_options(ctx.spec)).calls,
                    TOKENS_OUT)


def settings(spec: RunSpec) -> tuple:
    from ragdash.llm.prompts import generation_prompt_version

    e = spec.erag
    return (e.k, e.max_k, e.metric, e.limit, erag_llm(spec), prompt_options(spec),
            generation_prompt_version(spec.generation.prompt))


def run(ctx: StageContext) -> dict:
    from ragdash.analysis.reference import gold_answers
    from ragdash.erag.evaluate import calls_made, evaluate
    from ragdash.erag.measures import MEASURES
    from ragdash.erag.summary import erag_summary

    spec, out = ctx.spec, ctx.run
    llm = erag_settings(spec, ctx.api_key)
    labels, table = evaluate(chunk_items(out, spec), gold_answers(out.read("examples")), llm,
                             depth(spec), metric=spec.erag.metric,
                             cache=RunsRoot(spec.runs_root).llm_cache,
                             progress=lambda d, t: ctx.progress(STEP, d, t),
                             executor=ctx.executor, **prompt_options(spec))
    out.write("erag_labels", labels)
    out.write("erag", table)
    out.update(llm={**out.manifest.get("llm", {}), "erag": llm.to_manifest()})
    made, cached = calls_made(labels)
    means = erag_summary(table, spec.compared).means
    return {"questions": int(table["qid"].nunique()), "chunks": len(labels), "calls": made,
            "cached": cached, "errors": int(labels["error"].notna().sum()),
            "means": {str(r["system"]): {m: round(float(r[m]), 4) for m in MEASURES}
                      for r in means.to_dict("records")}}


def failed_calls(run: Run) -> int:
    """Chunks whose call ended in an error last time (a re-run asks them again)."""
    return int(run.read("erag_labels")["error"].notna().sum()) if run.has("erag_labels") else 0


STAGE = Stage("erag", "eRAG: each retrieved chunk alone to the generator, its output scored "
              "against the gold answers as the chunk's label; precision, MAP, MRR, nDCG, hit "
              "at k per question and retriever (k LLM calls each)",
              needs=("ingest", "chunk", "retrieve"), settings=settings, run=run,
              writes=("erag", "erag_labels"), switch="erag", section="erag",
              failed_calls=failed_calls, llm=erag_settings, plan=plan, step=STEP,
              work="eRAG's answers from single chunks", llm_stage=True, on_run_dir=True)
