"""Score: Score_IR of every (question, retriever, budget N), its summary table (the paper's
Table 3.1) and chunk-level IR metrics."""

from __future__ import annotations

import numpy as np

from ragdash.stages.base import Stage, StageContext


def run(ctx: StageContext) -> dict:
    from ragdash.analysis.curves import summary_table
    from ragdash.scoring.contexts import contexts, score_contexts
    from ragdash.scoring.ir_metrics import chunk_metrics

    cfg, out = ctx.cfg, ctx.run
    examples = out.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    ctx_ = contexts(out)
    ctx.progress("scoring contexts", 0, len(ctx_))
    s = cfg["scoring"]
    ir = score_contexts(ctx_, parts, cfg["budgets"], cfg["tokenizer"], s["method"], s["mode"])
    out.write("ir_scores", ir)
    table = summary_table(ir, cfg["retrievers"]["use"], s["mode"])
    out.write("ir_summary", table.reset_index())
    metrics = chunk_metrics(out.read("retrieved"), out.read("chunks"), parts,
                            share=float(s.get("relevance_share", 1.0)),
                            retrievers=list(cfg["retrievers"]["use"]))
    out.write("ir_metrics", metrics)
    ctx.progress("scoring done", len(ctx_), len(ctx_))
    top = table.loc[table.index.max()]
    return {"contexts": len(ctx_), "rows": len(ir),
            "mean_at_max_budget": {k: round(float(v), 4) for k, v in top.items()
                                   if not np.isnan(v)}}


STAGE = Stage("score", "score retrieval over token budgets", needs=("retrieve",),
              settings=lambda cfg: (cfg["tokenizer"], cfg["budgets"], cfg["scoring"]),
              run=run, writes=("ir_scores", "ir_summary", "ir_metrics"))
