"""Passages from outside the run's chunks: what a live retriever (`ragdash.retrieval.custom`)
returned, kept in `passages.parquet` with the chunks' columns (and the retriever's name), so a
live retriever's passages are its "chunks" wherever a retriever's chunks are read: Score_IR's
contexts, the chunk-level metrics, the Question browser, eRAG, the stress tests.

A passage's id is `<retriever>@<sha256 of its text, 16 hex>`: the same text returned for two
questions is one passage, and no id of a chunk (`<doc_id>#<i>`) can take that shape unless a
document id does; `with_passages` refuses a clash rather than mixing two texts up.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from ragdash.rundir import Run

COLUMNS = ["chunk_id", "doc_id", "title", "text", "start", "end", "retriever"]


def passage_id(retriever: str, text: str) -> str:
    """The chunk id of a passage `retriever` returned."""
    return f"{retriever}@{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def frame(rows: list[dict]) -> pd.DataFrame:
    """The passages table of rows {chunk_id, text, retriever, title: the system's own id or
    ""}, each chunk id once (its first row). A passage is its own document (doc_id = chunk_id:
    its own unit of relevance, as an imported system's context is), from 0 to its length."""
    df = pd.DataFrame(rows, columns=["chunk_id", "title", "text", "retriever"])
    df = df.drop_duplicates("chunk_id", keep="first").reset_index(drop=True)
    return df.assign(doc_id=df["chunk_id"], start=0,
                     end=df["text"].str.len().fillna(0).astype(int))[COLUMNS]


def with_passages(run: Run, chunks: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run's chunks (`chunks`, else read) with its live retrievers' passages appended
    (`passages.parquet`, when the run has one); ValueError when a passage id is a chunk's."""
    chunks = run.read("chunks") if chunks is None else chunks
    if not run.has("passages"):
        return chunks
    extra = run.read("passages")
    clash = set(extra["chunk_id"]) & set(chunks["chunk_id"])
    if clash:
        raise ValueError(f"passages.parquet: chunk id {sorted(clash)[0]!r} is also a chunk's")
    keep = [c for c in chunks.columns if c in extra.columns]
    return pd.concat([chunks, extra[keep]], ignore_index=True)
