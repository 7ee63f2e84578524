"""Reference: score every answer against the dataset's gold answers (SQuAD exact match, token
F1, contains a gold answer; `ragdash.analysis.reference`). No LLM: it runs whenever answers are
generated, and `ragdash reference --run-dir R` runs it on an existing run."""

from __future__ import annotations

from ragdash.stages.base import Stage, StageContext

VERSION = "reference-v1"
"""Changes when the metrics' definition does (the stage's key hashes it)."""


def settings(cfg: dict) -> tuple:
    return (VERSION,)


def run(ctx: StageContext) -> dict:
    from ragdash.analysis.reference import score_answers

    out = ctx.run
    table = score_answers(out.read("answers"), out.read("examples"))
    out.write("reference", table)
    pooled = table[table["em"].notna()]
    return {"answers": len(table), "scored": len(pooled),
            "em": round(float(pooled["em"].mean()), 4) if len(pooled) else None,
            "f1": round(float(pooled["f1"].mean()), 4) if len(pooled) else None,
            "contains": round(float(pooled["contains"].astype(bool).mean()), 4)
            if len(pooled) else None}


STAGE = Stage("reference", "score the answers against the gold answers (exact match, token F1, "
              "contains a gold answer); no LLM", needs=("ingest", "generate"),
              settings=settings, run=run, writes=("reference",), switch="generation",
              on_run_dir=True)
