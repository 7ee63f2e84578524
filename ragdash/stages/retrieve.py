"""Retrieve: every configured retriever's ranked chunks for every question.

Each finished retriever's results are kept under `.parts/retrieve-<key>/`, so an interrupted
stage resumes where it stopped; the folder is removed once the stage is done.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from ragdash.rundir import read_table, write_table
from ragdash.stages.base import Stage, StageContext


def cache_dir(cfg: dict) -> Path:
    """Where built indexes are cached, shared by the runs under one root."""
    return Path(cfg["runs_root"]) / "_index_cache"


@contextlib.contextmanager
def mlq_llm(cfg: dict, api_key: str | None = None) -> Iterator[object]:
    """The LangChain chat model MLQ uses, with a local llama.cpp server started if needed."""
    from ragdash.llm import open_chat_model

    with open_chat_model(cfg["llm"], api_key=api_key) as llm:
        yield llm


def settings(cfg: dict) -> tuple:
    from ragdash.embeddings import precision_key
    from ragdash.retrieval import RETRIEVERS, key_params

    r = cfg["retrievers"]
    key = ({name: key_params(p) for name, p in r["resolved"].items()},
           cfg["llm"] if "mlq" in r["use"] else None)
    # the embedding precision only where it shapes results (left out at fp32, as before it)
    dense = any(RETRIEVERS[name].embeds for name in r["use"])
    precision = precision_key(cfg) if dense else None
    return key if precision is None else (*key, precision)


def index_recalls(cfg: dict, chunks: pd.DataFrame, queries: list[str], k: int = 10) -> dict:
    """For each dense retriever on an approximate index (hnsw, ivf): its index, the recall@k of
    that index against exact search on the run's own questions, and how many were asked."""
    from ragdash.retrieval import build_retriever

    out = {}
    for name, params in cfg["retrievers"]["resolved"].items():
        if params.get("index", "exact") == "exact" or name not in cfg["retrievers"]["use"]:
            continue
        ret = build_retriever(name, chunks, cache_dir(cfg), params)
        out[name] = {"index": params["index"], "k": k, "queries": len(queries),
                     "recall": round(ret.index_recall(queries, k), 4)}
    return out


def run(ctx: StageContext) -> dict:
    from ragdash.retrieval import RETRIEVERS, build_retriever

    cfg, progress = ctx.cfg, ctx.progress
    examples = ctx.run.read("examples")
    chunks = ctx.run.read("chunks")
    topics = pd.DataFrame({"qid": examples["qid"].astype(str), "query": examples["question"]})
    parts_dir = ctx.run.path / ".parts" / f"retrieve-{ctx.key}"
    parts_dir.mkdir(parents=True, exist_ok=True)
    counts: dict = {}
    names = cfg["retrievers"]["use"]
    for i, name in enumerate(names):
        part = parts_dir / f"{name}.parquet"
        if part.exists():
            counts[name] = "resumed"
            continue
        progress(f"{name}: loading the embedding model and embedding {len(chunks):,} chunks…"
                 if RETRIEVERS[name].embeds else f"retrieving with {name}", i, len(names))
        params = cfg["retrievers"]["resolved"][name]
        with mlq_llm(cfg, ctx.api_key) if name == "mlq" else contextlib.nullcontext() as llm:
            ret = build_retriever(
                name, chunks, cache_dir(cfg), params, llm=llm,
                progress=lambda d, t, n=name: progress(f"{n}: sub-questions", d, t))
            res = ret(topics)
        frame = pd.DataFrame({"qid": res["qid"].astype(str), "retriever": name,
                              "rank": res["rank"].astype(int), "chunk_id": res["docno"],
                              "score": res["score"].astype(float)})
        if name == "mlq":
            write_table(parts_dir / "mlq.queries.parquet", pd.DataFrame({
                "qid": topics["qid"], "retriever": name,
                "queries": [ret.generated.get(q, []) for q in topics["query"]]}))
        write_table(part, frame)
        counts[name] = len(frame)
    progress("retrieval done", len(names), len(names))
    retrieved = pd.concat([read_table(parts_dir / f"{n}.parquet") for n in names],
                          ignore_index=True)
    ctx.run.write("retrieved", retrieved)
    ctx.run.update(index_recall=index_recalls(cfg, chunks, topics["query"].tolist()))
    if (parts_dir / "mlq.queries.parquet").exists():
        ctx.run.write("queries", read_table(parts_dir / "mlq.queries.parquet"))
    shutil.rmtree(ctx.run.path / ".parts", ignore_errors=True)  # only needed to resume
    return counts


STAGE = Stage("retrieve", "retrieve chunks for every question", needs=("chunk",),
              settings=settings, run=run, writes=("retrieved", "queries"))
