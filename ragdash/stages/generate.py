"""Generate: answers of the LLM alone and with each retriever's C_N (the paper's §3.2).

Every call goes through the persistent cache (`<runs_root>/_llm_cache.sqlite`), which commits
each finished call at once: an interrupted stage re-run repeats no finished call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.constants import LLM_ONLY
from ragdash.llm.prompts import generation_prompt_version
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings


STEP = "generating answers"
"""The stage's progress step (its items are the calls its plan prices)."""


def generator_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings:
    """The generator: `generation.llm` when set, else the run's `llm` (which MLQ uses too)."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(spec.generation.llm or spec.llm, api_key=api_key)


def requests(run: Run, spec: RunSpec,
             contexts: Callable[[int], Mapping[tuple[str, str], str]] | None = None
             ) -> list[tuple]:
    """(qid, system, budget, question, context) for LLM-only and every retriever (or a sweep).
    `contexts(budget)`: C_N of each (qid, retriever) at a budget (default: the run's retrieved
    contexts, cut as the score stage cuts them)."""
    from ragdash.scoring.contexts import budget_contexts

    g = spec.generation
    examples = run.read("examples")
    questions = dict(zip(examples["qid"].astype(str), examples["question"], strict=True))
    qids = list(questions)[: g.limit or None]  # generation.limit: the first N only
    sweep = g.sweep
    plan = ([(sweep.retriever, b) for b in sweep.budgets] if sweep
            else [(r, g.budget) for r in [*spec.retrievers.use, *generated_systems(spec, run)]])
    out = [(q, LLM_ONLY, None, questions[q], None) for q in qids] if g.llm_only else []
    by_budget: dict[int, dict] = {}
    for retriever, budget in plan:
        if budget not in by_budget and contexts is not None:
            by_budget[budget] = dict(contexts(budget))
        elif budget not in by_budget:
            ctx = budget_contexts(run, spec.tokenizer, spec.scoring.mode, budget,
                                  spec.compared)
            by_budget[budget] = {(q, r): t for q, r, t in ctx.itertuples(index=False)}
        texts = by_budget[budget]
        out += [(q, retriever, budget, questions[q], texts[(q, retriever)]) for q in qids
                if (q, retriever) in texts]
    return out


def generated_systems(spec: RunSpec, run: Run) -> list[str]:
    """The imported systems whose contexts the run's generator answers: `generate: true`, or a
    file with no answer at all (a TREC run)."""
    from ragdash.systems.store import answered, imported

    if not spec.systems:
        return []
    table = imported(run)
    has = answered(table) if table is not None else set()
    return [name for name, s in spec.systems.items() if s.generate or name not in has]


def imported_answers(run: Run, spec: RunSpec) -> list[dict]:
    """The answers of the imported systems that bring their own (`ragdash.systems`), to the
    first `generation.limit` questions, as answer rows at the generation budget."""
    from ragdash.systems.store import answer_rows, imported

    table = imported(run)
    own = [n for n in spec.systems if n not in generated_systems(spec, run)]
    if table is None or not own:
        return []
    qids = run.read("examples")["qid"].astype(str).tolist()[: spec.generation.limit or None]
    table = table[table["qid"].astype(str).isin(set(qids))]
    return answer_rows(table, own, spec.generation.budget)


ADDED_LATER = {"prompt": "paper", "limit": None}
"""Generation settings added after runs were made, with their defaults: each is hashed only
when it differs from its default, so those runs keep their key (and their answers)."""


def settings(spec: RunSpec) -> tuple:
    gen = {k: v for k, v in spec.generation.model_dump().items()
           if not (k in ADDED_LATER and v == ADDED_LATER[k])}
    key = (spec.tokenizer, spec.scoring.mode, spec.llm.model_dump(), gen,
           generation_prompt_version(spec.generation.prompt))
    # imported systems: which are answered by the generator (left out without, as before them)
    return (*key, {"generate": [n for n, s in spec.systems.items() if s.generate]}) \
        if spec.systems else key


def run(ctx: StageContext) -> dict:
    from ragdash.llm.generate import generate

    spec, out = ctx.spec, ctx.run
    gen = generator_settings(spec, ctx.api_key)
    answers = generate(requests(out, spec), gen, cache=RunsRoot(spec.runs_root).llm_cache,
                       reference_prompts=spec.generation.reference_prompts,
                       prompt=spec.generation.prompt,
                       progress=lambda d, t: ctx.progress(STEP, d, t),
                       executor=ctx.executor)
    if own := imported_answers(out, spec):  # the systems' own answers, as they gave them
        from ragdash.llm.generate import answers_frame

        answers = pd.concat([answers, answers_frame(own)], ignore_index=True)
    out.write("answers", answers)
    out.update(llm={**out.manifest.get("llm", {}), "generator": gen.to_manifest()})
    return {"answers": len(answers), "errors": int(answers["error"].notna().sum()),
            "mean_latency_s": round(float(answers["latency_s"].mean()), 2)
            if answers["latency_s"].notna().any() else None}


def failed_calls(run: Run) -> int:
    """Generation calls that ended in errors (a re-run retries them)."""
    return int(run.read("answers")["error"].notna().sum()) if run.has("answers") else 0


TOKENS_OUT = 40
"""Tokens assumed per reply of the generator (a one-sentence answer), for its estimate, and
eRAG's and the stress test's (they ask the same prompt)."""
STAND_IN_ANSWER = "A one-sentence answer of about twenty tokens written by the generator model."
"""The answer the judge and the metrics are priced with before answers exist."""


def stand_in_context(run: Run, tokenizer: str, budget: int) -> str:
    """`budget` tokens of the run's chunk texts: as long as a context C_N can be, for pricing
    generation before retrieval has run."""
    from ragdash.budget import cuts, join_chunks

    texts = [t for t in run.read("chunks")["text"] if t] if run.has("chunks") else []
    taken: list[str] = []
    while texts and sum(map(len, taken)) < 16 * budget:
        taken.append(texts[len(taken) % len(texts)])
    text = join_chunks(taken) or "word " * budget
    return text[: cuts(text, [budget], tokenizer)[0]]


def stand_in_contexts(run: Run, spec: RunSpec) -> Callable[[int], dict[tuple[str, str], str]]:
    """`requests`' contexts before retrieval: every (qid, retriever) gets `stand_in_context`."""
    sweep = spec.generation.sweep
    names = {*spec.retrievers.use, *([sweep.retriever] if sweep else []),
             *(n for n, s in spec.systems.items() if s.generate)}
    qids = run.read("examples")["qid"].astype(str).tolist()

    def contexts(budget: int) -> dict[tuple[str, str], str]:
        text = stand_in_context(run, spec.tokenizer, budget)
        return {(q, r): text for q in qids for r in names}

    return contexts


def stand_in_answers(reqs: list[tuple]) -> pd.DataFrame:
    """An answers table with STAND_IN_ANSWER for every generation request: the judge's and the
    metrics' calls priced before answers exist, built by their own code."""
    return pd.DataFrame([{"qid": q, "system": s, "budget": b, "answer": STAND_IN_ANSWER,
                          "error": None} for q, s, b, _, _ in reqs],
                        columns=["qid", "system", "budget", "answer", "error"])


def planned_requests(ctx: PlanContext) -> list[tuple]:
    """`requests` as a plan sees them (contexts of the full budget before retrieval), made once
    per dry run."""
    if "requests" not in ctx.memo:
        ctx.memo["requests"] = requests(
            ctx.run, ctx.spec, None if ctx.retrieved else stand_in_contexts(ctx.run, ctx.spec))
    return ctx.memo["requests"]


def plan(ctx: PlanContext) -> CallPlan:
    """The calls generation sends (`generation_plan`, what `generate` sends), those the reply
    cache answers left out; before retrieval, one call per request with stand-in contexts of
    the full budget (an upper bound: a context holds at most N tokens)."""
    from ragdash.llm.generate import generation_plan
    from ragdash.llm.plan import CallPlan

    g = ctx.spec.generation
    made = generation_plan(planned_requests(ctx), reference_prompts=g.reference_prompts,
                           prompt=g.prompt)
    if ctx.retrieved:
        return CallPlan(made.calls, TOKENS_OUT)
    why = " (mlq's sub-questions would call the LLM)" if "retrieve" in ctx.before else ""
    return CallPlan(made.per_request(), TOKENS_OUT, cached=False, notes=(
        f"retrieval not run{why}: generation priced with full-budget contexts, an upper "
        "bound",))


STAGE = Stage("generate", "generate answers with the LLM (LLM only and each retriever's C_N); "
              "resumable", needs=("retrieve",), after=("score",), settings=settings, run=run,
              writes=("answers",), switch="generation", section="generation",
              failed_calls=failed_calls, llm=generator_settings, plan=plan, part="generation",
              step=STEP, work="generation", llm_stage=True)
