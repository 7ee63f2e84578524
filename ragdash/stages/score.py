"""Score: Score_IR of every (question, retriever, budget N), its summary table (the paper's
Table 3.1) and chunk-level IR metrics; with `scoring.also`, Score_IR by more matching methods
(e.g. `semantic`) beside the main one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ragdash.stages.base import Progress, Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.rundir import Run


def score_batch(batch: pd.DataFrame, budgets: list[int], tokenizer: str, method: str,
                mode: str, progress: Progress | None = None) -> pd.DataFrame:
    """Score_IR rows of a batch of contexts (qid, retriever, context, parts, and optionally
    chunks: the context's chunk texts, each distinct one tokenized once per batch): each
    context is scored on its own, so any split of the contexts gives the same rows."""
    from ragdash.scoring.contexts import score_contexts

    parts = {str(q): list(p) for q, p in zip(batch["qid"], batch["parts"], strict=True)}
    return score_contexts(batch.drop(columns="parts"), parts, budgets, tokenizer, method, mode,
                          progress)


def run(ctx: StageContext) -> dict:
    from ragdash.analysis.curves import summary_table
    from ragdash.executors import batch_size
    from ragdash.scoring.contexts import contexts

    spec, out = ctx.spec, ctx.run
    examples = out.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    ctx_ = contexts(out, chunks=True, compared=spec.compared)
    ctx.progress("scoring contexts", 0, len(ctx_))
    s = spec.scoring
    batch = ctx_.assign(parts=[parts[q] for q in ctx_["qid"]])

    def score(method: str) -> pd.DataFrame:  # in batches on the executor
        return ctx.executor.map_batches(
            batch, score_batch, batch_size=batch_size(ctx.executor, len(batch), most=2000),
            kwargs={"budgets": list(spec.budgets), "tokenizer": spec.tokenizer,
                    "method": method, "mode": s.mode},
            progress=ctx.progress, label="scoring contexts")

    ir = score(s.method)
    out.write("ir_scores", ir)
    also = list(s.also)
    if also:
        out.write("ir_scores_also", pd.concat([score(m).assign(method=m) for m in also],
                                              ignore_index=True))
    else:  # scores of methods no longer asked for would be shown as this run's
        out.file("ir_scores_also").unlink(missing_ok=True)
    table = summary_table(ir, spec.compared, s.mode)
    out.write("ir_summary", table.reset_index())
    metrics = system_metrics(out, parts, s.relevance_share, spec)
    out.write("ir_metrics", metrics)
    ctx.progress("scoring done", len(ctx_), len(ctx_))
    top = table.loc[table.index.max()]
    return {"contexts": len(ctx_), "rows": len(ir), "methods": [s.method, *also],
            "mean_at_max_budget": {k: round(float(v), 4) for k, v in top.items()
                                   if not np.isnan(v)}}


def system_metrics(run: Run, parts: dict[str, list[str]], share: float,
                   spec: RunSpec) -> pd.DataFrame:
    """The chunk-level metrics of every retriever: the built-in ones over the run's chunks, each
    imported system over the contexts it returned for each question (`systems.store`), on the
    questions it has."""
    from ragdash.scoring.ir_metrics import chunk_metrics
    from ragdash.systems import store

    retrieved = run.read("retrieved")
    chunks = run.read("chunks")
    # live retrievers (retrievers.custom) have no corpus of their own either: scored as the
    # imported systems are, over the passages they returned, on every question
    live = [n for n in spec.retrievers.use if n in spec.retrievers.custom]
    own = retrieved["retriever"].isin([*spec.systems, *live])
    frames = [chunk_metrics(retrieved[~own], chunks, parts, share=share,
                            retrievers=[n for n in spec.retrievers.use if n not in live])]
    if spec.systems or live:
        every, has = store.chunk_table(run, chunks), store.coverage(run)
        frames += [store.chunk_metrics(name, retrieved[own], every,
                                       {q: p for q, p in parts.items()
                                        if name in live or q in has.get(name, ())}, share)
                   for name in [*spec.systems, *live]]
    return pd.concat(frames, ignore_index=True)


def settings(spec: RunSpec) -> tuple:
    """Tokenizer, budgets and the scoring section; `also` left out while empty, so runs made
    before it keep their key."""
    from ragdash.embeddings import precision_key

    s = spec.scoring
    scoring = {k: v for k, v in s.model_dump().items() if not (k == "also" and not v)}
    key = (spec.tokenizer, spec.budgets, scoring)
    # semantic matching embeds: a bf16 run scores apart from an fp32 one (fp32 keeps old keys)
    precision = precision_key(spec.embeddings.precision)
    return (*key, precision) if "semantic" in (s.method, *s.also) and precision else key


STAGE = Stage("score", "score retrieval over token budgets", needs=("retrieve",),
              settings=settings, run=run, writes=("ir_scores", "ir_scores_also", "ir_summary",
                                                  "ir_metrics"), section="scoring")
