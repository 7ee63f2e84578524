"""Chunk: split the corpus's documents with the configured chunker."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from ragdash.rundir.files import FILES
from ragdash.stages.base import Stage, StageContext


def run(ctx: StageContext) -> dict:
    from ragdash.chunking import chunk_documents
    from ragdash.data import Document
    from ragdash.data.layout import from_columns

    docs = ctx.run.read("documents")
    documents = [Document(r.doc_id, r.title, r.text,
                          *from_columns(getattr(r, "pages", None), getattr(r, "headings", None)))
                 for r in docs.itertuples(index=False)]
    c = ctx.cfg["chunker"]
    chunks = chunk_documents(documents, c["method"], max_chars=c.get("max_chars"),
                             progress=ctx.progress, **(c.get("params") or {}))
    frame = pd.DataFrame([asdict(x) for x in chunks])
    # page and heading columns only for corpora with a layout (PDF, HTML, DOCX, Markdown)
    frame = frame.drop(columns=[col for col in FILES["chunks"].optional
                                if col in frame and frame[col].isna().all()])
    for col in ("page", "last_page"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")  # page numbers, missing for non-PDFs
    ctx.run.write("chunks", frame)
    lengths = frame["text"].str.len()
    return {"chunks": len(frame), "mean_chars": round(float(lengths.mean()), 1),
            "max_chars": int(lengths.max())}


def settings(cfg: dict) -> tuple:
    """The chunker; for the semantic one also the embedding precision (left out at fp32, so
    runs made before the option keep their key)."""
    from ragdash.embeddings import precision_key

    precision = precision_key(cfg) if cfg["chunker"]["method"] == "semantic" else None
    return (cfg["chunker"],) if precision is None else (cfg["chunker"], precision)


STAGE = Stage("chunk", "chunk the corpus (indexes are built and cached on first use)",
              needs=("ingest",), settings=settings, run=run,
              command="index", writes=("chunks",))
