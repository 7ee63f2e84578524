"""What every retriever shares: the chunk corpus, the on-disk index cache, the PyTerrier contract.

A retriever is a `pyterrier.Transformer`: a queries frame (qid, query) in, a results frame
(qid, query, docno, score, rank) out, where docno is the chunk_id. So retrievers compose into
PyTerrier pipelines and `pt.Experiment` evaluates them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyterrier as pt

RESULT_COLUMNS = ["qid", "query", "docno", "score", "rank"]


def corpus_fingerprint(chunks: pd.DataFrame) -> str:
    """sha256 of the chunk ids and texts, in order: the identity of an indexed corpus."""
    h = hashlib.sha256()
    for cid, text in zip(chunks["chunk_id"], chunks["text"], strict=True):
        h.update(str(cid).encode())
        h.update(b"\x00")
        h.update(text.encode())
        h.update(b"\x01")
    return h.hexdigest()


def index_key(kind: str, fingerprint: str, params: dict) -> str:
    """Directory name of a cached index: kind + hash of corpus and index-time parameters."""
    blob = json.dumps({"corpus": fingerprint, "params": params}, sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def cached_build(cache_dir: Path, key: str, build: Callable[[Path], None]) -> Path:
    """Return `cache_dir/key`, building it first (into a temp dir, then renamed) if absent."""
    final = Path(cache_dir) / key
    if (final / ".complete").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        build(tmp)
        (tmp / ".complete").write_text("ok")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def results_frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """Results frame from (qid, query, docno, score) rows already in rank order per query."""
    df = pd.DataFrame(rows, columns=RESULT_COLUMNS[:4])
    df["rank"] = df.groupby("qid", sort=False).cumcount().astype(int)
    return df


class Retriever(pt.Transformer):
    """Base class: subclasses implement `search(queries) -> list of ranked (docno, score) lists`."""

    name = "retriever"
    embeds = False  # it embeds the chunks with MiniLM (the first use loads the model)
    finds_nothing_for = "questions its search found no chunk for"  # when it returns nothing

    def __init__(self, k: int):
        if k <= 0:
            raise ValueError(f"{self.name}: k must be positive, got {k}")
        self.k = k

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        raise NotImplementedError

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        missing = {"qid", "query"} - set(inp.columns)
        if missing:
            raise ValueError(f"{self.name}: queries frame lacks column(s) {sorted(missing)}")
        qids = inp["qid"].astype(str).tolist()
        queries = inp["query"].astype(str).tolist()
        hits = self.search(queries)
        rows = [
            (qid, q, docno, float(score))
            for qid, q, ranked in zip(qids, queries, hits, strict=True)
            for docno, score in ranked
        ]
        return results_frame(rows)
