"""Before and instead of LLM calls: what the LLM stages would cost (a dry run, priced with the
rate measured in the LLM cache), and what saved thresholds predict for a run that has only
retrieval scores (the paper's §3.3 estimate)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ragdash.llm.settings import LLMSettings
from ragdash.llm.speed import Speed, call_speed, model_name
from ragdash.llm.types import Backend
from ragdash.llm.wrappers import CacheOnly
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.generate import generator_settings, requests
from ragdash.stages.judge import judge_options, judge_settings

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.cost import Estimate


SUBQUESTION_TOKENS = 15
"""Tokens assumed per sub-question line of an mlq reply, for its estimate."""
GENERATION_TOKENS_OUT = 40
"""Tokens assumed per reply of the generator (a one-sentence answer), for its estimate and
eRAG's."""


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


def stand_in_contexts(run: Run, spec: RunSpec):
    """`requests`' contexts before retrieval: every (qid, retriever) gets `stand_in_context`."""
    sweep = spec.generation.sweep
    names = {*spec.retrievers.use, *([sweep.retriever] if sweep else []),
             *(n for n, s in spec.systems.items() if s.generate)}
    qids = run.read("examples")["qid"].astype(str).tolist()

    def contexts(budget: int) -> dict[tuple[str, str], str]:
        text = stand_in_context(run, spec.tokenizer, budget)
        return {(q, r): text for q in qids for r in names}

    return contexts


@contextlib.contextmanager
def cache_only(settings: LLMSettings, root: RunsRoot) -> Iterator[CacheOnly | None]:
    """For a block, the backend of `settings` answering only from the reply cache of `root`
    (`CacheOnly`: no request); None when the runs root has no cache yet."""
    from ragdash.llm.cache import LLMCache

    if not root.llm_cache.exists():
        yield None
        return
    with LLMCache(root.llm_cache) as cache:
        yield CacheOnly(settings, model_name(settings), cache)


def cache_answers(calls: Iterable[Callable[[Backend], Any]], settings: LLMSettings,
                  root: RunsRoot) -> list[bool]:
    """Per call, whether the reply cache of `root` answers it whole, so that a run with
    `settings` would not send it: each call is asked of the cache alone (`cache_only`), every
    question it asks (correction rounds, a second question) included."""
    with cache_only(settings, root) as replies:
        return [replies is not None and c(replies).error is None for c in calls]


def not_cached(calls: Sequence[Any], settings: LLMSettings, root: RunsRoot
               ) -> tuple[list[Any], int]:
    """The calls a run with `settings` would send (those the reply cache of `root` does not
    answer whole, `cache_answers`), and how many it answers."""
    done = cache_answers(calls, settings, root)
    return [c for c, d in zip(calls, done, strict=True) if not d], sum(done)


def price(calls: Iterable[Any], settings: LLMSettings, root: RunsRoot,
          tokens_out: float) -> Estimate:
    """`estimate_prompts` of the messages `calls` send first, with the model of `settings` at
    its measured speed (`call_speed`) and `tokens_out` reply tokens each."""
    from ragdash.llm import estimate_prompts

    model = model_name(settings)
    return estimate_prompts([c.messages for c in calls], model, tokens_out=tokens_out,
                            speed=call_speed(root, model, settings.backend),
                            backend=settings.backend)


def answered_note(stage: str, cached: int) -> str:
    """The dry run's note on the calls of `stage` the reply cache answers."""
    return f"{stage}: {cached:,} more calls answered by the reply cache (not counted)"


def dry_run(run: Run, spec: RunSpec, *, retrieved: bool = True) -> dict:
    """What the LLM calls would cost, before any call: calls, tokens, money, time.

    `retrieved=False`: priced before retrieval (a dry run stops before it when mlq would ask
    the LLM for its sub-questions): mlq's calls are priced too, and generation with contexts
    of the full budget (an upper bound: a context holds at most N tokens). After retrieval,
    each stage leaves out the calls the reply cache answers (a note says how many), and the
    judge is priced on the run's answers when generation would send nothing new."""
    from ragdash.llm.decompose import decompose_calls
    from ragdash.llm.generate import generation_plan
    from ragdash.llm.judge import items_from_frames, judge_calls

    out: dict = {}
    notes = []
    root = RunsRoot(spec.runs_root)
    if not retrieved and "mlq" in spec.retrievers.use:
        llm = LLMSettings.from_config(spec.llm)
        mlq = spec.retrievers.resolved["mlq"]
        _, calls = decompose_calls(run.read("examples")["question"].astype(str).tolist(),
                                   mode=mlq["mode"], max_queries=mlq["max_queries"])
        out["mlq"] = price(calls, llm, root, SUBQUESTION_TOKENS * mlq["max_queries"])
    if not retrieved:
        why = " (mlq's sub-questions would call the LLM)" if "mlq" in out else ""
        notes.append(f"retrieval not run{why}: generation priced with full-budget contexts, an "
                     "upper bound")
    g = spec.generation
    gen = generator_settings(spec)
    reqs = requests(run, spec, None if retrieved else stand_in_contexts(run, spec))
    plan = generation_plan(reqs, reference_prompts=g.reference_prompts, prompt=g.prompt)
    cached = 0
    if retrieved:  # the calls generation sends, less those the reply cache answers
        asked, cached = not_cached(plan.calls, gen, root)
    else:  # stand-in contexts are all alike: one call per request, as real ones would be
        asked = plan.per_request()
    out["generation"] = price(asked, gen, root, GENERATION_TOKENS_OUT)
    if cached:
        notes.append(answered_note("generation", cached))
    judge = judge_settings(spec)
    mode = spec.judge.mode
    if retrieved and not asked and run.has("answers"):  # the answers the judge will see
        answers = run.read("answers")
    else:  # an answer of typical length for every request generation will answer
        answers = stand_in_answers(reqs)
    calls = judge_calls(items_from_frames(answers, run.read("examples")), judge,
                        **judge_options(spec))[1]
    asked_judge, cached = not_cached(calls, judge, root)
    if cached:
        notes.append(answered_note("judge", cached))
    out["judge"] = price(asked_judge, judge, root, 25 if mode == "grouped" else 8)
    if mode == "stepwise":
        notes.append("stepwise judging: a lower bound, each partially correct answer asks twice")
    for section, priced in (("metrics", metrics_estimate), ("erag", erag_estimate),
                            ("stress", stress_estimate)):
        if not getattr(spec, section).enabled:
            continue
        if not run.has("retrieved"):
            notes.append(f"{section} not priced: retrieval not run")
            continue
        out[section], cached = priced(run, spec)
        if cached:
            notes.append(answered_note(section, cached))
    if notes:
        out["note"] = "; ".join(notes)
    return out


ESTIMATED_STAGES = {"mlq": "retrieve", "generation": "generate", "judge": "judge",
                    "metrics": "metrics", "erag": "erag", "stress": "stress"}
"""The stage whose LLM calls each part of a dry run's estimate prices."""


def before_run(spec: RunSpec) -> dict:
    """`dry_run` of a run not made yet: its questions read from the dataset alone (no corpus
    read, no stage run), generation priced at contexts of the full budget (an upper bound), the
    judge on stand-in answers (answers the refusal rule will score are not known yet, so it is
    an upper bound too)."""
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


def stage_plan(est: dict) -> dict[str, dict[str, float]]:
    """{stage: {calls, seconds}} of a dry run's estimate, for the stages whose time it knows:
    a job's ETA counts the stages it has not reached (`ragdash.jobs.Reporter`)."""
    return {ESTIMATED_STAGES[k]: {"calls": e.calls, "seconds": float(e.seconds)}
            for k, e in est.items()
            if k in ESTIMATED_STAGES and getattr(e, "seconds", None) is not None}


STAND_IN_ANSWER = "A one-sentence answer of about twenty tokens written by the generator model."
"""The answer the judge and the metrics are priced with before answers exist."""


def stand_in_answers(reqs: Iterable[tuple]) -> pd.DataFrame:
    """An answers table with STAND_IN_ANSWER for every generation request: the judge's and the
    metrics' calls priced before answers exist, built by their own code."""
    return pd.DataFrame([{"qid": q, "system": s, "budget": b, "answer": STAND_IN_ANSWER,
                          "error": None} for q, s, b, _, _ in reqs],
                        columns=["qid", "system", "budget", "answer", "error"])


def metrics_step_plan(run: Run, spec: RunSpec):
    """Every metric's LLM steps on the run's answers (of the first `metrics.limit` questions),
    else on stand-in answers for every generation request (`ragdash.metrics.plan.StepPlan`);
    the calls the runs root's reply cache already answers are counted apart."""
    from ragdash.metrics.evaluate import items_from_run
    from ragdash.metrics.plan import cached_replies, step_plan
    from ragdash.stages.metrics import context_cut, metrics_settings

    answers = None if run.has("answers") else stand_in_answers(requests(run, spec))
    items = items_from_run(run, context_cut(spec), answers, limit=spec.metrics.limit)
    root = RunsRoot(spec.runs_root)
    for f in (root.llm_cache, root.llm_cache.with_name(f"{root.llm_cache.name}-wal")):
        run.reader.stamp(f)  # a memo of this plan follows the cache
    if answers is not None:
        return step_plan(items)
    llm = metrics_settings(spec)
    with cache_only(llm, root) as replies:
        if replies is None:
            return step_plan(items)
        claims, answered = cached_replies(items, replies, llm)
    return step_plan(items, claims=claims, answered=answered)


def metrics_pricing(spec: RunSpec) -> tuple[str, Speed | None, str]:
    """The metrics' model name, its call speed (`call_speed`) and its backend."""
    from ragdash.stages.metrics import metrics_settings

    llm = metrics_settings(spec)
    return (model_name(llm), call_speed(RunsRoot(spec.runs_root), model_name(llm),
                                        llm.backend), llm.backend)


def metrics_estimate(run: Run, spec: RunSpec) -> tuple[Estimate, int]:
    """What `ragdash metrics` would cost on the run (no call): the run's answers, else stand-in
    answers for every generation request; a lower bound (no correction rounds). With the
    calls the reply cache answers, which the estimate leaves out."""
    model, speed, backend = metrics_pricing(spec)
    plan, use = metrics_step_plan(run, spec), spec.metrics.use
    return plan.estimate(use, model, speed=speed, backend=backend), plan.answered(use)


def erag_estimate(run: Run, spec: RunSpec) -> tuple[Estimate, int]:
    """What `ragdash erag` would cost on the run (no call): the calls of its plan
    (`ragdash.erag.calls.erag_plan`, the calls a run sends) less those the reply cache
    answers, priced as generation is; with the number the cache answers."""
    from ragdash.erag.calls import erag_plan
    from ragdash.stages.erag import chunk_items, erag_settings, prompt_options

    llm = erag_settings(spec)
    root = RunsRoot(spec.runs_root)
    asked, cached = not_cached(erag_plan(chunk_items(run, spec), **prompt_options(spec)).calls,
                               llm, root)
    return price(asked, llm, root, GENERATION_TOKENS_OUT), cached
def stress_estimate(run: Run, spec: RunSpec) -> tuple[Estimate, int]:
    """What `ragdash stress` would cost on the run (no call): the calls of the stage's own
    requests (`ragdash.stages.stress.stress_requests`), less those the reply cache answers,
    which are counted apart."""
    from ragdash.llm.generate import generation_plan
    from ragdash.stages.stress import stress_requests, stress_settings

    g, llm, root = spec.generation, stress_settings(spec), RunsRoot(spec.runs_root)
    plan = generation_plan(stress_requests(run, spec)[2], reference_prompts=g.reference_prompts,
                           prompt=g.prompt)
    asked, cached = not_cached(plan.calls, llm, root)
    return price(asked, llm, root, GENERATION_TOKENS_OUT), cached


def estimate_run(run: Run, calibration: dict, budget: int | None = None,
                 judge_model: str = "gpt-4o", generator_model: str = "llama3:8b") -> dict:
    """Apply saved thresholds to a run with retrieval scores only; write estimate.json."""
    from ragdash.calibration import calls_avoided, estimate
    from ragdash.llm.cost import estimate as cost_estimate

    budget = budget or calibration.get("budget", 1000)
    ir = run.ir_scores(calibration.get("scores"))  # the matching method h and k were fit on
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
