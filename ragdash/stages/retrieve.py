"""Retrieve: every configured retriever's ranked chunks for every question.

Each finished retriever's results are kept under `.parts/retrieve-<key>/`, so an interrupted
stage resumes where it stopped; the folder is removed once the stage is done.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.rundir import read_table, write_table
from ragdash.rundir.root import RunsRoot
from ragdash.stages.base import PlanContext, Progress, Stage, StageContext
from ragdash.systems.store import retrieved_rows

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.llm.plan import CallPlan
    from ragdash.llm.settings import LLMSettings
    from ragdash.retrieval.multiquery import Ask


MLQ_STEP = "mlq: sub-questions"
"""mlq's progress step (its items are the calls the stage's plan prices)."""


def cache_dir(spec: RunSpec) -> Path:
    """Where built indexes are cached, shared by the runs under one root."""
    return RunsRoot(spec.runs_root).index_cache


def mlq_ask(ctx: StageContext, params: dict) -> Ask:
    """MLQ's sub-question replies through the LLM layer (`ragdash.llm.decompose`): the run's
    `llm`, the reply cache shared under the runs root, retries, the stage's executor."""
    from ragdash.llm.decompose import decompose

    settings = mlq_settings(ctx.spec, ctx.api_key)
    cache = RunsRoot(ctx.spec.runs_root).llm_cache

    def ask(questions: Sequence[str]) -> list[str]:
        return decompose(questions, settings, mode=params["mode"],
                         max_queries=params["max_queries"], cache=cache,
                         progress=lambda d, t: ctx.progress(MLQ_STEP, d, t),
                         executor=ctx.executor)

    return ask


def settings(spec: RunSpec) -> tuple:
    from ragdash.embeddings import precision_key
    from ragdash.llm.prompts import DECOMPOSE_PROMPT_V1, decompose_prompt_version
    from ragdash.retrieval import RETRIEVERS, key_params

    r, mlq = spec.retrievers, calls_llm(spec)
    key = ({name: key_params(p) for name, p in r.resolved.items()},
           spec.llm.model_dump() if mlq else None)
    if mlq and decompose_prompt_version() != DECOMPOSE_PROMPT_V1:
        key = (*key, decompose_prompt_version())  # a new sub-question prompt: mlq again
    # the embedding precision only where it shapes results (left out at fp32, as before it)
    dense = any(RETRIEVERS[name].embeds for name in r.use if name in RETRIEVERS)
    precision = precision_key(spec.embeddings.precision) if dense else None
    key = key if precision is None else (*key, precision)
    if spec.systems:  # imported systems: their files (left out without, as before them)
        from ragdash.stages.ingest import system_keys

        key = (*key, {"systems": system_keys(spec)})
    return key


def index_recalls(spec: RunSpec, chunks: pd.DataFrame, queries: list[str], k: int = 10) -> dict:
    """For each dense retriever on an approximate index (hnsw, ivf): its index, the recall@k of
    that index against exact search on the run's own questions, and how many were asked."""
    from ragdash.retrieval import build_retriever

    out = {}
    for name, params in spec.retrievers.resolved.items():
        if params.get("index", "exact") == "exact" or name not in spec.retrievers.use:
            continue
        ret = build_retriever(name, chunks, cache_dir(spec), params)
        out[name] = {"index": params["index"], "k": k, "queries": len(queries),
                     "recall": round(ret.index_recall(queries, k), 4)}
    return out


EXAMPLES = 3
"""Questions named as examples in a warning about questions a retriever found nothing for."""


def empty_results(retrieved: pd.DataFrame, examples: pd.DataFrame,
                  names: Sequence[str]) -> list[dict]:
    """Per retriever that returned no chunk for some questions: its name, how many questions of
    how many, the first few (qid, question) and the likely cause. These questions score 0."""
    from ragdash.retrieval import RETRIEVERS

    qids = examples["qid"].astype(str)
    out = []
    for name in names:
        found = set(retrieved.loc[retrieved["retriever"] == name, "qid"].astype(str))
        empty = examples[~qids.isin(found)]
        if empty.empty:
            continue
        cls = RETRIEVERS.get(name)
        out.append({"retriever": name, "questions": len(empty), "of": len(examples),
                    "examples": [{"qid": str(q), "question": str(t)} for q, t in
                                 zip(empty["qid"][:EXAMPLES], empty["question"][:EXAMPLES],
                                     strict=True)],
                    "cause": cls.finds_nothing_for if cls else "no chunk was found"})
    return out


def empty_message(warning: dict, quote: Callable[[str], str] | None = None) -> str:
    """One line about a retriever that found nothing for some questions (an `empty_results`
    entry). `quote` shows the ids and questions (a markdown-safe quoting on pages); plain
    text by default: the id as is, the question in quotes."""
    shown = ", ".join(f"{quote(e['qid'])} {quote(e['question'][:80])}" if quote else
                      f"{e['qid']} {e['question'][:80]!r}" for e in warning["examples"])
    n, of = warning["questions"], warning["of"]
    return (f"{warning['retriever']} retrieved nothing for {n:,} of {of:,} question"
            f"{'s' if of != 1 else ''} (e.g. {shown}): {warning['cause']} score 0")


def ranked(name: str, res: pd.DataFrame) -> pd.DataFrame:
    """A retriever's results as rows of the run's `retrieved` table."""
    return pd.DataFrame({"qid": res["qid"].astype(str), "retriever": name,
                         "rank": res["rank"].astype(int), "chunk_id": res["docno"],
                         "score": res["score"].astype(float)})


class SearchBatch:
    """Searches a batch of questions (qid, query) with one retriever; built once per worker,
    which loads the retriever's cached index (built before under `cache_dir`) and the run's
    chunks."""

    def __init__(self, name: str, run_dir: str, index_dir: str, params: dict):
        from ragdash.retrieval import build_retriever
        from ragdash.rundir import Run

        self.name = name
        self.retriever = build_retriever(name, Run(run_dir).read("chunks"), Path(index_dir),
                                         params)

    def __call__(self, topics: pd.DataFrame, progress: Progress | None = None) -> pd.DataFrame:
        return ranked(self.name, self.retriever(topics))


class EmbedBatch:
    """MiniLM vectors of a batch of texts (column `text`); the model loaded once per worker."""

    def __init__(self, model: str):
        from ragdash.embeddings import get_embedder

        self.embedder = get_embedder(model)

    def __call__(self, texts: pd.DataFrame, progress: Progress | None = None) -> pd.DataFrame:
        import numpy as np

        vectors = np.asarray(self.embedder.embed_documents(texts["text"].tolist()),
                             dtype=np.float32)
        return pd.DataFrame({"vector": list(vectors)})


def search(ctx: StageContext, name: str, chunks: pd.DataFrame,
           topics: pd.DataFrame) -> pd.DataFrame:
    """One retriever's ranked chunks for every question, searched in batches on the executor.
    Elsewhere than in this process the index is built here first (a dense index from chunk
    vectors embedded in batches on the workers), so workers only load it."""
    from ragdash.executors import batch_size
    from ragdash.retrieval import RETRIEVERS, build_retriever
    from ragdash.retrieval.dense import build_vectorstore

    ex, spec = ctx.executor, ctx.spec
    params = spec.retrievers.resolved[name]
    if not ex.in_process:
        if RETRIEVERS[name].embeds:
            def embed(texts: list[str]) -> list:
                out = ex.map_batches(pd.DataFrame({"text": texts}), EmbedBatch,
                                     batch_size=batch_size(ex, len(texts), most=2048),
                                     args=(params["model"],), progress=ctx.progress,
                                     label=f"{name}: embedding chunks")
                return out["vector"].tolist()

            build_vectorstore(chunks, cache_dir(spec), params["model"], params["index"],
                              embed=embed, long_chunks=params.get("long_chunks", "truncate"))
        else:
            build_retriever(name, chunks, cache_dir(spec), params)  # BM25's index, k1/b files
    return ex.map_batches(topics, SearchBatch, batch_size=batch_size(ex, len(topics), most=1000),
                          args=(name, str(ctx.run.path.resolve()),  # workers have their
                                str(cache_dir(spec).resolve()), params),  # own working dirs
                          progress=ctx.progress, label=f"searching with {name}")


def run(ctx: StageContext) -> dict:
    from ragdash.retrieval import RETRIEVERS, build_retriever

    spec, progress = ctx.spec, ctx.progress
    examples = ctx.run.read("examples")
    chunks = ctx.run.read("chunks")
    topics = pd.DataFrame({"qid": examples["qid"].astype(str), "query": examples["question"]})
    # the systems' files first: a bad one stops the stage before any search
    systems, matched = import_systems(ctx, examples, chunks)
    parts_dir = ctx.run.path / ".parts" / f"retrieve-{ctx.key}"
    parts_dir.mkdir(parents=True, exist_ok=True)
    ctx.run.set_stage(STAGE.name, warnings=[])  # those of an earlier run no longer hold
    counts: dict = {}
    names = spec.retrievers.use
    for i, name in enumerate(names):
        part = parts_dir / f"{name}.parquet"
        if part.exists():
            counts[name] = "resumed"
            continue
        progress(f"{name}: loading the embedding model and embedding {len(chunks):,} chunks…"
                 if name in RETRIEVERS and RETRIEVERS[name].embeds else
                 f"retrieving with {name}", i, len(names))
        params = spec.retrievers.resolved[name]
        if name in spec.retrievers.custom:  # a live retriever, asked from this process
            frame = live(ctx, name, topics, parts_dir)
        elif name == "mlq":  # its LLM calls are dispatched from this process
            ret = build_retriever(name, chunks, cache_dir(spec), params, ask=mlq_ask(ctx, params))
            frame = ranked(name, ret(topics))
            write_table(parts_dir / "mlq.queries.parquet", pd.DataFrame({
                "qid": topics["qid"], "retriever": name,
                "queries": [ret.generated.get(q, []) for q in topics["query"]]}))
        else:
            frame = search(ctx, name, chunks, topics)
        write_table(part, frame)
        counts[name] = len(frame)
    progress("retrieval done", len(names), len(names))
    retrieved = pd.concat([read_table(parts_dir / f"{n}.parquet") for n in names]
                          + [retrieved_rows(systems)], ignore_index=True)
    if spec.systems:
        ctx.run.write("imported", systems)
    else:  # systems of an earlier run no longer asked for
        ctx.run.file("imported").unlink(missing_ok=True)
    live_names = [n for n in names if n in spec.retrievers.custom]
    if live_names:  # their passages, looked up as chunks (ragdash.retrieval.passages)
        ctx.run.write("passages", pd.concat(
            [read_table(parts_dir / f"{n}.passages.parquet") for n in live_names],
            ignore_index=True))
    else:  # passages of an earlier run's live retrievers
        ctx.run.file("passages").unlink(missing_ok=True)
    ctx.run.write("retrieved", retrieved)
    warnings = [{**w, "message": empty_message(w)}
                for w in empty_results(retrieved, examples, names)]
    ctx.run.set_stage(STAGE.name, warnings=warnings + system_warnings(matched))
    ctx.run.update(systems={m.name: m.summary() for m in matched})
    counts.update({m.name: int(sum(map(len, systems.loc[systems["system"] == m.name,
                                                        "contexts"]))) for m in matched})
    ctx.run.update(index_recall=index_recalls(spec, chunks, topics["query"].tolist()))
    if (parts_dir / "mlq.queries.parquet").exists():
        ctx.run.write("queries", read_table(parts_dir / "mlq.queries.parquet"))
    shutil.rmtree(ctx.run.path / ".parts", ignore_errors=True)  # only needed to resume
    return counts


def import_systems(ctx: StageContext, examples: pd.DataFrame, chunks: pd.DataFrame
                   ) -> tuple[pd.DataFrame, list]:
    """The imported systems' rows of `imported.parquet` and their matchings (`ragdash.systems`;
    none without `systems`)."""
    from ragdash.systems import import_systems as imports

    if not ctx.spec.systems:
        from ragdash.systems.store import IMPORTED_COLUMNS

        return pd.DataFrame(columns=IMPORTED_COLUMNS), []
    ctx.progress("reading your systems' files", 0, len(ctx.spec.systems))
    return imports(ctx.spec, examples, ctx.run.read("documents"), chunks)


def system_warnings(matched: Sequence) -> list[dict]:
    """The retrieve stage's warnings about imported systems: questions a file lacks (the
    system is scored on those it has), records that match no question, several or one already
    matched (each kind with its first records)."""
    out = []
    for m in matched:
        if m.missing:
            out.append({"retriever": m.name, "questions": m.missing, "of": m.questions,
                        "message": f"{m.name} is scored on {len(m.records):,} of "
                                   f"{m.questions:,} questions: its file has no record for the "
                                   f"other {m.missing:,}"})
        issues = m.issues()
        if issues:
            shown = "; ".join(f"{i.record}: {i.message}" for i in issues[:3])
            out.append({"retriever": m.name, "issues": [str(i) for i in issues],
                        "message": f"{m.name}: {len(m.unmatched):,} record(s) match no "
                                   f"question of the run, {len(m.ambiguous):,} match several, "
                                   f"{len(m.duplicates):,} repeat a question (e.g. {shown})"})
    return out


def live(ctx: StageContext, name: str, topics: pd.DataFrame, parts_dir: Path) -> pd.DataFrame:
    """A live retriever's ranked passages for every question (`ragdash.retrieval.custom`:
    cached by content key under the index cache, resumed from its checkpoint in `.parts/`); its
    passages kept beside its part until the stage writes passages.parquet."""
    from ragdash.retrieval.custom import retrieve as ask

    frame, passages = ask(name, ctx.spec.retrievers.custom[name], topics["qid"].tolist(),
                          topics["query"].tolist(), cache_dir(ctx.spec),
                          ctx.run.path / ".parts" / "live", progress=ctx.progress)
    write_table(parts_dir / f"{name}.passages.parquet", passages)
    return frame


def calls_llm(spec: RunSpec) -> bool:
    """Whether retrieval asks the LLM: mlq writes its sub-questions with it."""
    return "mlq" in spec.retrievers.use


def mlq_settings(spec: RunSpec, api_key: str | None = None) -> LLMSettings | None:
    """The LLM mlq asks for sub-questions (the run's `llm`), None when mlq is not used."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(spec.llm, api_key=api_key) if calls_llm(spec) else None


SUBQUESTION_TOKENS = 15
"""Tokens assumed per sub-question line of an mlq reply, for its estimate."""


def plan(ctx: PlanContext) -> CallPlan | None:
    """mlq's sub-question calls, before retrieval has run (after it, none is left to price):
    one per question, priced whole (the reply cache is not asked)."""
    from ragdash.llm.decompose import decompose_calls
    from ragdash.llm.plan import CallPlan

    if ctx.retrieved or not calls_llm(ctx.spec):
        return None
    mlq = ctx.spec.retrievers.resolved["mlq"]
    _, calls = decompose_calls(ctx.run.read("examples")["question"].astype(str).tolist(),
                               mode=mlq["mode"], max_queries=mlq["max_queries"])
    return CallPlan(calls, SUBQUESTION_TOKENS * mlq["max_queries"], cached=False)


STAGE = Stage("retrieve", "retrieve chunks for every question", needs=("chunk",),
              settings=settings, run=run, writes=("retrieved", "queries", "passages"),
              section="retrievers", llm=mlq_settings, plan=plan, part="mlq", step=MLQ_STEP,
              work="MLQ's sub-questions")
