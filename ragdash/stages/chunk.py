"""Chunk: split the corpus's documents with the configured chunker."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.rundir.files import FILES
from ragdash.stages.base import Progress, Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec


class ChunkBatch:
    """Chunks a batch of `documents` rows with the configured chunker; built once per worker,
    so the semantic chunker's embedding model is loaded once. Documents are chunked one by one
    (chunk ids count within a document), so any split of the corpus gives the same chunks."""

    def __init__(self, method: str, max_chars: int | None, params: dict | None):
        from ragdash.chunking import resolve_params

        self.method, self.max_chars = method, max_chars
        self.params = dict(params or {})
        if method == "semantic":  # load the model now, once per worker
            from ragdash.embeddings import get_embedder

            get_embedder(resolve_params(method, self.params)["model"])

    def __call__(self, docs: pd.DataFrame, progress: Progress | None = None) -> pd.DataFrame:
        from ragdash.chunking import Chunk, chunk_documents
        from ragdash.data import Document
        from ragdash.data.layout import from_columns

        documents = [Document(r.doc_id, r.title, r.text,
                              *from_columns(getattr(r, "pages", None),
                                            getattr(r, "headings", None)))
                     for r in docs.itertuples(index=False)]
        chunks = chunk_documents(documents, self.method, max_chars=self.max_chars,
                                 progress=progress, **self.params)
        return pd.DataFrame([asdict(x) for x in chunks], columns=[f.name for f in fields(Chunk)])


def run(ctx: StageContext) -> dict:
    from ragdash.chunking import check_unique_ids
    from ragdash.executors import batch_size

    docs = ctx.run.read("documents")
    check_unique_ids(docs["doc_id"])  # across batches too
    c = ctx.spec.chunker
    frame = ctx.executor.map_batches(
        docs, ChunkBatch, batch_size=batch_size(ctx.executor, len(docs), most=500),
        args=(c.method, c.max_chars, dict(c.params)),
        progress=ctx.progress, label="chunking documents")
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


def settings(spec: RunSpec) -> tuple:
    """The chunker; for the semantic one also the embedding precision (left out at fp32, so
    runs made before the option keep their key)."""
    from ragdash.embeddings import precision_key

    chunker = spec.chunker.model_dump()
    precision = (precision_key(spec.embeddings.precision)
                 if spec.chunker.method == "semantic" else None)
    return (chunker,) if precision is None else (chunker, precision)


STAGE = Stage("chunk", "chunk the corpus (indexes are built and cached on first use)",
              needs=("ingest",), settings=settings, run=run, writes=("chunks",),
              section="chunker")
