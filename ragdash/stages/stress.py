"""Stress: the run's generator answers contexts built from the run's own chunks with known
relevance (`ragdash.stress`): RGB's noise robustness and negative rejection (Chen et al., AAAI
2024) and where the evidence stands, each context's Score_IR at the generation budget beside
the answer's accuracy. `ragdash stress --run-dir R` runs it on an existing run; the dry run
prices the same calls (`stress_requests`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Stage, StageContext, needs_retrieval

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings
    from ragdash.stress.contexts import Condition

STEP = "answering controlled contexts"
"""The stage's progress step (its items are the calls its plan prices)."""
SEP = "\x1f"
"""Between a question's id and a part's index in the per-part relevance keys."""
COLUMNS = ["qid", "test", "ratio", "position", "relevant", "noise", "chunk_ids", "budget",
           "score_ir", "context_tokens", "model", "answer", "error", "correct", "refused",
           "latency_s", "tokens_in", "tokens_out"]


def stress_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings:
    """The LLM that answers: `stress.llm` when set, else the run's generator."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(spec.stress.llm or spec.generation.llm or spec.llm,
                                   api_key=api_key)


def build(run: Run, spec: RunSpec) -> list[Condition]:
    """Every controlled context of the first `stress.limit` questions that have a relevant
    chunk and a gold answer: relevant chunks ordered by their best retrieval rank (then corpus
    order), noise from the retrievers' own misses (`hard_negatives`)."""
    import zlib

    import numpy as np

    from ragdash.analysis.reference import gold_answers
    from ragdash.scoring.ir_metrics import relevant_chunks
    from ragdash.stress.contexts import conditions, hard_negatives, part_cover

    st = spec.stress
    examples = run.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    from ragdash.systems.store import chunk_table

    chunks = chunk_table(run)  # the imported systems' contexts too
    chunk_ids = chunks["chunk_id"].astype(str).tolist()
    each = {f"{q}{SEP}{i}": [p] for q, plist in parts.items() for i, p in enumerate(plist)}
    qrels = relevant_chunks(chunks, each, spec.scoring.relevance_share)
    holders: dict[str, list[set[str]]] = {q: [set() for _ in plist] for q, plist in parts.items()}
    for key, c in zip(qrels["query_id"], qrels["doc_id"], strict=True):
        q, _, i = str(key).rpartition(SEP)
        holders[q][int(i)].add(str(c))
    relevant = {q: set().union(*h) for q, h in holders.items() if h}
    retrieved = run.read("retrieved").sort_values(["qid", "retriever", "rank"])
    ranked: dict[str, list[list[str]]] = {}
    for (q, _), group in retrieved.groupby(["qid", "retriever"], sort=False):
        ranked.setdefault(str(q), []).append(group["chunk_id"].astype(str).tolist())
    position = {c: i for i, c in enumerate(chunk_ids)}
    out: list[Condition] = []
    golds = gold_answers(examples)  # a question without one cannot be scored correct
    qids = [q for q in parts if relevant.get(q) and golds.get(q)][: st.limit or None]
    for q in qids:
        rank = {c: r for lst in ranked.get(q, []) for r, c in reversed(list(enumerate(lst)))}
        rel = sorted(relevant[q], key=lambda c: (rank.get(c, len(chunk_ids)), position[c]))
        rng = np.random.default_rng([st.seed, zlib.crc32(q.encode())])
        negatives = hard_negatives(ranked.get(q, []), relevant[q], chunk_ids, st.chunks, rng)
        cover, single = part_cover(holders[q], rel)
        out += conditions(q, rel, negatives, st, cover, single)
    return out


def stress_requests(run: Run, spec: RunSpec) -> tuple[list[Condition], pd.DataFrame, list]:
    """The conditions, their contexts' Score_IR at the generation budget (qid, retriever = the
    condition's name, score, context_tokens, cut) and the generation requests (qid, condition,
    budget, question, C_N): what the stage sends and the dry run prices."""
    from ragdash.budget import join_chunks
    from ragdash.scoring.contexts import score_contexts

    conds = build(run, spec)
    budget = spec.generation.budget
    from ragdash.systems.store import chunk_table

    chunks = chunk_table(run)
    texts = dict(zip(chunks["chunk_id"].astype(str), chunks["text"], strict=True))
    examples = run.read("examples")
    questions = dict(zip(examples["qid"].astype(str), examples["question"], strict=True))
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    lists = [[texts[c] for c in cond.chunk_ids] for cond in conds]
    ctx = pd.DataFrame({"qid": [c.qid for c in conds], "retriever": [c.name for c in conds],
                        "context": [join_chunks(x) for x in lists], "chunks": lists})
    if not conds:
        return conds, pd.DataFrame(columns=["qid", "retriever", "score", "context_tokens",
                                            "cut"]), []
    scored = score_contexts(ctx, parts, [budget], spec.tokenizer, spec.scoring.method,
                            spec.scoring.mode)
    requests = [(c.qid, c.name, budget, questions[c.qid], context[:cut]) for c, context, cut
                in zip(conds, ctx["context"], scored["cut"], strict=True)]
    return conds, scored[["qid", "retriever", "score", "context_tokens", "cut"]], requests


def plan(ctx: PlanContext) -> CallPlan:
    """The calls of the stage's own requests (`stress_requests`), those the reply cache answers
    left out, priced as generation's replies are."""
    from ragdash.llm.generate import generation_plan
    from ragdash.llm.plan import CallPlan
    from ragdash.stages.generate import TOKENS_OUT

    needs_retrieval(ctx)
    g = ctx.spec.generation
    return CallPlan(generation_plan(stress_requests(ctx.run, ctx.spec)[2], prompt=g.prompt,
                                    reference_prompts=g.reference_prompts).calls, TOKENS_OUT)


def settings(spec: RunSpec) -> tuple:
    from ragdash.llm.prompts import generation_prompt_version
    from ragdash.stages.reference import VERSION as REFERENCE

    st = spec.stress.model_dump(exclude={"enabled", "llm"})
    return (st, stress_settings(spec).to_manifest(), spec.generation.budget,
            spec.generation.prompt, spec.generation.reference_prompts,
            generation_prompt_version(spec.generation.prompt), spec.tokenizer,
            spec.scoring.mode, spec.scoring.method, spec.scoring.relevance_share,
            spec.judge.refusal.model_dump(), REFERENCE)


def run(ctx: StageContext) -> dict:
    from ragdash.llm.generate import generate
    from ragdash.stress.summary import summary

    spec, out = ctx.spec, ctx.run
    llm = stress_settings(spec, ctx.api_key)
    conds, scored, requests = stress_requests(out, spec)
    answers = generate(requests, llm, cache=RunsRoot(spec.runs_root).llm_cache,
                       reference_prompts=spec.generation.reference_prompts,
                       prompt=spec.generation.prompt,
                       progress=lambda d, t: ctx.progress(STEP, d, t),
                       executor=ctx.executor)
    table = results(conds, scored, answers, out.read("examples"), spec)
    out.write("stress", table)
    out.update(llm={**out.manifest.get("llm", {}), "stress": llm.to_manifest()})
    s = summary(table)
    return {"questions": int(table["qid"].nunique()), "contexts": len(table),
            "errors": int(table["error"].notna().sum()),
            "accuracy": {f"{r:g}": v for r, v in s.by_ratio["accuracy"].round(3).items()},
            "rejection": None if s.rejection is None else round(s.rejection, 3)}


def results(conds: list[Condition], scored: pd.DataFrame, answers: pd.DataFrame,
            examples: pd.DataFrame, spec: RunSpec) -> pd.DataFrame:
    """One row per controlled context: the condition, its Score_IR at the generation budget,
    the answer (or the call's error), whether it contains a gold answer (`correct`, None for a
    failed call) and whether the refusal rule matches it (`refused`)."""
    from ragdash.analysis.reference import gold_answers, score
    from ragdash.llm.refusal import RefusalRule

    golds = gold_answers(examples)
    rule = RefusalRule.from_config(spec.judge.refusal)
    rows = []
    for c, s, a in zip(conds, scored.itertuples(index=False),
                       answers.itertuples(index=False), strict=True):
        ok = a.error is None and a.answer is not None
        rows.append({"qid": c.qid, "test": c.test, "ratio": c.ratio, "position": c.position,
                     "relevant": c.relevant, "noise": c.noise, "chunk_ids": list(c.chunk_ids),
                     "budget": spec.generation.budget, "score_ir": float(s.score),
                     "context_tokens": int(s.context_tokens),
                     "model": a.model, "answer": a.answer, "error": a.error,
                     "correct": bool(score(a.answer, golds.get(c.qid, [])).contains) if ok
                     else None,
                     "refused": rule.match(a.answer) is not None if ok else None,
                     "latency_s": a.latency_s, "tokens_in": a.tokens_in,
                     "tokens_out": a.tokens_out})
    return pd.DataFrame(rows, columns=COLUMNS)


def failed_calls(run: Run) -> int:
    """Controlled contexts whose call ended in an error last time (a re-run retries them)."""
    return int(run.read("stress")["error"].notna().sum()) if run.has("stress") else 0


STAGE = Stage("stress", "answer contexts built from the run's chunks with known relevance "
              "(noise ratios, evidence first / middle / last, no evidence): accuracy against the "
              "evidence in the context", needs=("ingest", "chunk", "retrieve"), after=("score",),
              settings=settings, run=run, writes=("stress",), switch="stress", section="stress",
              failed_calls=failed_calls, llm=stress_settings, plan=plan, step=STEP,
              work="the controlled contexts", llm_stage=True, on_run_dir=True)
