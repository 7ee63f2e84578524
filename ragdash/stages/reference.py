"""Reference: score every answer against the dataset's gold answers (SQuAD exact match, token
F1, contains a gold answer; ROUGE-L and MiniLM similarity for long answers;
`ragdash.analysis.reference`). No LLM: it runs whenever answers are generated, and
`ragdash reference --run-dir R` runs it on an existing run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.stages.base import Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec

VERSION = "reference-v2"
"""Changes when the metrics' definition does (the stage's key hashes it)."""


def settings(spec: RunSpec) -> tuple:
    return (VERSION,)


def run(ctx: StageContext) -> dict:
    from ragdash.analysis.reference import metrics_of, minilm_embed, score_answers
    from ragdash.labels import refresh

    out = ctx.run
    ctx.progress("scoring answers against the gold answers", 0, 1)
    table = score_answers(out.read("answers"), out.read("examples"), embed=minilm_embed)
    out.write("reference", table)
    refresh(out)  # the judge's agreement with the reference metrics in calibration.json
    ctx.progress("scoring answers against the gold answers", 1, 1)
    pooled = table[table["em"].notna()]
    return {"answers": len(table), "scored": len(pooled),
            **{m: round(float(pooled[m].astype(float).mean()), 4) if len(pooled) else None
               for m in metrics_of(table)}}


STAGE = Stage("reference", "score the answers against the gold answers (exact match, token F1, "
              "contains a gold answer, ROUGE-L, MiniLM similarity); no LLM",
              needs=("ingest", "generate"),
              settings=settings, run=run, writes=("reference",), switch="generation",
              on_run_dir=True)
