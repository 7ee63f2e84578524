"""eRAG's labels and measures (Salemi & Zamani, SIGIR 2024, §3): each chunk's call through the
LLM layer (reply cache, retries, executor, as generation's), its output scored against the
gold answers with a reference metric (`ragdash.analysis.reference.score`), then the IR
measures of each (question, retriever)'s labels in rank order (`measures`).

A failed call is recorded with its error and labelled 0 (as a failed answer scores 0); it is
not cached, so a re-run asks it again. A failure that would repeat for every call (no server,
bad key) stops the run with an `LLMError` once the finished calls are cached."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.analysis.reference import score
from ragdash.erag.calls import ChunkItem, erag_plan
from ragdash.erag.measures import MEASURES, measures
from ragdash.erag.settings import METRICS
from ragdash.llm.cache import LLMCache
from ragdash.llm.factory import calls_session
from ragdash.llm.runner import Progress, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend

if TYPE_CHECKING:
    from ragdash.executors import Executor

LABEL_COLUMNS = ["qid", "system", "rank", "chunk_id", "answer", "label", "error", "model",
                 "tokens_in", "tokens_out", "latency_s", "cached"]
"""erag_labels.parquet: one row per judged chunk."""
TABLE_COLUMNS = ["qid", "system", "k", "judged", *MEASURES, "errors", "metric"]
"""erag.parquet: one row per (question, retriever)."""


def label(answer: str | None, golds: Sequence[str], metric: str) -> float:
    """The chunk's label: `metric` (one of METRICS) of the output against the gold answers, in
    [0, 1]; 0 for no output (a failed call)."""
    if metric not in METRICS:
        raise ValueError(f"eRAG metric must be one of {', '.join(METRICS)}, not {metric!r}")
    return float(getattr(score(answer, golds), metric))


def judge_chunks(items: Sequence[ChunkItem], golds: Mapping[str, Sequence[str]],
                 settings: LLMSettings, *, metric: str = "contains",
                 cache: LLMCache | str | Path | None = None, progress: Progress | None = None,
                 reference_prompts: bool = False, prompt: str = "paper",
                 backend: Backend | None = None, executor: Executor | None = None
                 ) -> pd.DataFrame:
    """One row per item (LABEL_COLUMNS): the LLM's output given the question and that chunk
    alone, and its label. `cached`: the reply came from the reply cache (no request)."""
    plan = erag_plan(items, reference_prompts=reference_prompts, prompt=prompt)
    with calls_session(settings, cache, backend) as (be, store):
        done = dispatch_calls(be, plan.calls, settings, progress, cache=store,
                              executor=None if backend is not None else executor) \
            if plan.calls else []
        model = be.model
    rows = []
    for it, slot in zip(items, plan.slots, strict=True):
        o = done[slot]
        r = o.result
        answer = r.text.strip() if r else None
        rows.append({"qid": it.qid, "system": it.system, "rank": it.rank,
                     "chunk_id": it.chunk_id, "answer": answer,
                     "label": label(answer, golds.get(it.qid, ()), metric), "error": o.error,
                     "model": r.model if r else model,
                     "tokens_in": r.tokens_in if r else None,
                     "tokens_out": r.tokens_out if r else None,
                     "latency_s": r.latency_s if r else None, "cached": bool(r and r.cached)})
    df = pd.DataFrame(rows, columns=LABEL_COLUMNS)
    return df.astype({"rank": "int64", "label": "float64", "tokens_in": "Int64",
                      "tokens_out": "Int64", "latency_s": "float64", "cached": "bool"})


def erag_table(labels: pd.DataFrame, depth: Mapping[str, int], metric: str) -> pd.DataFrame:
    """One row per (question, retriever) of `labels` (TABLE_COLUMNS): k (depth[retriever]),
    the chunks judged, each measure at k, and the calls that failed (labelled 0)."""
    rows = []
    for (qid, system), g in labels.groupby(["qid", "system"], sort=False):
        k = int(depth[system])
        rows.append({"qid": qid, "system": system, "k": k, "judged": len(g),
                     **measures(g.sort_values("rank")["label"].tolist(), k),
                     "errors": int(g["error"].notna().sum()), "metric": metric})
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def calls_made(labels: pd.DataFrame) -> tuple[int, int]:
    """(calls sent, calls the reply cache answered) of a labels table: one call per distinct
    (question, chunk), as one prompt is sent once."""
    calls = distinct_calls(labels)
    cached = int(calls["cached"].sum())
    return len(calls) - cached, cached


def distinct_calls(labels: pd.DataFrame) -> pd.DataFrame:
    """The rows of a labels table that each stand for one call: the first of each (question,
    chunk), whose prompt the other retrievers' rows share."""
    return labels.drop_duplicates(["qid", "chunk_id"])


def evaluate(items: Iterable[ChunkItem], golds: Mapping[str, Sequence[str]],
             settings: LLMSettings, depth: Mapping[str, int], *, metric: str = "contains",
             **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The labels (`judge_chunks`, `options` passed on) and the per-(question, retriever)
    measures (`erag_table`)."""
    labels = judge_chunks(list(items), golds, settings, metric=metric, **options)
    return labels, erag_table(labels, depth, metric)
