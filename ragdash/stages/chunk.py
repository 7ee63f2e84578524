"""Chunk: split the corpus's documents with the configured chunker."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from ragdash.stages.base import Stage, StageContext


def run(ctx: StageContext) -> dict:
    from ragdash.chunking import chunk_documents
    from ragdash.data import Document

    docs = ctx.run.read("documents")
    documents = [Document(r.doc_id, r.title, r.text) for r in docs.itertuples(index=False)]
    c = ctx.cfg["chunker"]
    chunks = chunk_documents(documents, c["method"], max_chars=c.get("max_chars"),
                             progress=ctx.progress, **(c.get("params") or {}))
    frame = pd.DataFrame([asdict(x) for x in chunks])
    ctx.run.write("chunks", frame)
    lengths = frame["text"].str.len()
    return {"chunks": len(frame), "mean_chars": round(float(lengths.mean()), 1),
            "max_chars": int(lengths.max())}


STAGE = Stage("chunk", "chunk the corpus (indexes are built and cached on first use)",
              needs=("ingest",), settings=lambda cfg: (cfg["chunker"],), run=run,
              command="index", writes=("chunks",))
