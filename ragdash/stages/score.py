"""Score: Score_IR of every (question, retriever, budget N), its summary table (the paper's
Table 3.1) and chunk-level IR metrics; with `scoring.also`, Score_IR by more matching methods
(e.g. `semantic`) beside the main one."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    ir = score_contexts(ctx_, parts, cfg["budgets"], cfg["tokenizer"], s["method"], s["mode"],
                        ctx.progress)
    out.write("ir_scores", ir)
    also = s.get("also") or []
    if also:
        out.write("ir_scores_also", pd.concat(
            [score_contexts(ctx_, parts, cfg["budgets"], cfg["tokenizer"], m, s["mode"],
                            ctx.progress).assign(method=m) for m in also], ignore_index=True))
    else:  # scores of methods no longer asked for would be shown as this run's
        out.file("ir_scores_also").unlink(missing_ok=True)
    table = summary_table(ir, cfg["retrievers"]["use"], s["mode"])
    out.write("ir_summary", table.reset_index())
    metrics = chunk_metrics(out.read("retrieved"), out.read("chunks"), parts,
                            share=float(s.get("relevance_share", 1.0)),
                            retrievers=list(cfg["retrievers"]["use"]))
    out.write("ir_metrics", metrics)
    ctx.progress("scoring done", len(ctx_), len(ctx_))
    top = table.loc[table.index.max()]
    return {"contexts": len(ctx_), "rows": len(ir), "methods": [s["method"], *also],
            "mean_at_max_budget": {k: round(float(v), 4) for k, v in top.items()
                                   if not np.isnan(v)}}


def settings(cfg: dict) -> tuple:
    """Tokenizer, budgets and the scoring section; `also` left out while empty, so runs made
    before it keep their key."""
    from ragdash.embeddings import precision_key

    scoring = {k: v for k, v in cfg["scoring"].items() if not (k == "also" and not v)}
    key = (cfg["tokenizer"], cfg["budgets"], scoring)
    semantic = "semantic" in (scoring["method"], *scoring.get("also", ()))
    # semantic matching embeds: a bf16 run scores apart from an fp32 one (fp32 keeps old keys)
    return (*key, precision) if semantic and (precision := precision_key(cfg)) else key


STAGE = Stage("score", "score retrieval over token budgets", needs=("retrieve",),
              settings=settings, run=run, writes=("ir_scores", "ir_scores_also", "ir_summary",
                                                  "ir_metrics"))
