"""Runs the stages over a run directory; the CLI and the dashboard both call these functions.

Stages: ingest -> chunk -> retrieve -> score. Each stage has a key (hash of its config and of its
inputs' keys); a stage whose key is unchanged and whose status is `done` is skipped unless
forced. Retrieval keeps each finished retriever's results, so an interrupted stage resumes.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.budget import cuts_from_ends, get_tokenizer, join_chunks, reference_prefixes
from ragdash.config import fingerprint
from ragdash.llm.prompts import generation_prompt_version, judge_prompt_version
from ragdash.runs import Run, write_table
from ragdash.scoring import part_scores

log = logging.getLogger("ragdash")
STAGES = ("ingest", "chunk", "retrieve", "score", "generate", "judge", "calibrate")
LLM_STAGES = ("generate", "judge", "calibrate")
Progress = Callable[[str, int, int], None]  # (stage message, done, total)


def _noop(msg: str, done: int, total: int) -> None:
    pass


def file_sha256(path: str | Path | None) -> str | None:
    if not path:
        return None
    p = Path(path)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(x for x in p.rglob("*") if x.is_file()):
            h.update(str(f.relative_to(p)).encode())
            h.update(f.read_bytes())
        return h.hexdigest()
    if not p.exists():
        return None
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stage_keys(cfg: dict) -> dict[str, str]:
    """The key of every stage: its own settings plus the keys of the stages it reads."""
    ds = {k: v for k, v in cfg["dataset"].items() if not (k == "sample" and v is None)}
    # (a later key left out at its default, so runs made before it keep their retrieval)
    ingest = fingerprint(ds, file_sha256(ds["path"]), file_sha256(ds.get("corpus")))
    chunk = fingerprint(ingest, cfg["chunker"])
    retrieve = fingerprint(chunk, cfg["retrievers"]["resolved"],
                           cfg["llm"] if "mlq" in cfg["retrievers"]["use"] else None)
    score = fingerprint(retrieve, cfg["tokenizer"], cfg["budgets"], cfg["scoring"])
    generate = fingerprint(retrieve, cfg["tokenizer"], cfg["scoring"]["mode"], cfg["llm"],
                           cfg["generation"], generation_prompt_version())
    judge = fingerprint(generate, cfg["judge"], None if cfg["judge"].get("llm") else cfg["llm"],
                        judge_prompt_version())
    calibrate = fingerprint(judge, score, cfg["calibration"])
    return {"ingest": ingest, "chunk": chunk, "retrieve": retrieve, "score": score,
            "generate": generate, "judge": judge, "calibrate": calibrate}


def configured_stages(cfg: dict) -> tuple[str, ...]:
    """The stages `ragdash run` performs: retrieval always, LLM stages when enabled."""
    on = {"generate": cfg["generation"]["enabled"],
          "judge": cfg["judge"]["enabled"],
          "calibrate": cfg["calibration"]["enabled"]}
    return tuple(s for s in STAGES if s not in LLM_STAGES or on[s])


# --- ingest ---------------------------------------------------------------------------------


def ingest(run: Run, cfg: dict, key: str) -> dict:
    from ragdash.data import load_dataset

    ds = cfg["dataset"]
    dataset = load_dataset(ds["path"], ds.get("format", "auto"), corpus=ds.get("corpus"),
                           corpus_fmt=ds.get("corpus_format", "auto"),
                           include_unanswerable=ds.get("include_unanswerable", False),
                           limit=ds.get("limit"), sample=ds.get("sample"))
    issues = pd.DataFrame([asdict(i) for i in dataset.issues],
                          columns=["file", "record", "field", "message", "severity"])
    write_table(run.path / "issues.csv", issues)
    if not dataset.examples:
        first = "; ".join(str(i) for i in dataset.issues[:3]) or "no record found"
        raise ValueError(f"{ds['path']}: no valid example could be loaded "
                         f"({dataset.skipped} record(s) skipped; all listed in "
                         f"{run.path / 'issues.csv'}). First: {first}")
    meta_keys = sorted({k for e in dataset.examples for k in e.meta})
    examples = pd.DataFrame({
        "qid": [e.qid for e in dataset.examples],
        "question": [e.question for e in dataset.examples],
        "answer": [e.answer for e in dataset.examples],
        "parts": [list(e.parts) for e in dataset.examples],
        **{k: [e.meta.get(k) for e in dataset.examples] for k in meta_keys},
    })
    documents = pd.DataFrame([asdict(d) for d in dataset.documents],
                             columns=["doc_id", "title", "text"])
    run.write("examples", examples)
    run.write("documents", documents)
    run.update(source=dataset.source, issues={
        "skipped": dataset.skipped, "warnings": dataset.warnings,
        "first": [str(i) for i in dataset.issues[:20]],
    })
    return {"examples": len(examples), "documents": len(documents),
            "skipped": dataset.skipped, "warnings": dataset.warnings}


# --- chunk ----------------------------------------------------------------------------------


def chunk(run: Run, cfg: dict, key: str, progress: Progress = _noop) -> dict:
    from ragdash.chunking import chunk_documents
    from ragdash.data import Document

    docs = run.read("documents")
    documents = [Document(r.doc_id, r.title, r.text) for r in docs.itertuples(index=False)]
    c = cfg["chunker"]
    chunks = chunk_documents(documents, c["method"], max_chars=c.get("max_chars"),
                             progress=progress, **(c.get("params") or {}))
    frame = pd.DataFrame([asdict(x) for x in chunks])
    run.write("chunks", frame)
    lengths = frame["text"].str.len()
    return {"chunks": len(frame), "mean_chars": round(float(lengths.mean()), 1),
            "max_chars": int(lengths.max())}


# --- retrieve -------------------------------------------------------------------------------


def cache_dir(cfg: dict) -> Path:
    return Path(cfg["runs_root"]) / "_index_cache"


@contextlib.contextmanager
def mlq_llm(cfg: dict) -> Iterator[object]:
    """The LangChain chat model MLQ uses, with a local llama.cpp server started if needed."""
    from ragdash.llm import open_chat_model

    with open_chat_model(cfg["llm"]) as llm:
        yield llm


def retrieve(run: Run, cfg: dict, key: str, progress: Progress = _noop) -> dict:
    from ragdash.retrieval import build_retriever

    examples = run.read("examples")
    chunks = run.read("chunks")
    topics = pd.DataFrame({"qid": examples["qid"].astype(str), "query": examples["question"]})
    parts_dir = run.path / ".parts" / f"retrieve-{key}"
    parts_dir.mkdir(parents=True, exist_ok=True)
    counts: dict = {}
    names = cfg["retrievers"]["use"]
    for i, name in enumerate(names):
        part = parts_dir / f"{name}.parquet"
        if part.exists():
            counts[name] = "resumed"
            continue
        progress(f"retrieving with {name}", i, len(names))
        params = cfg["retrievers"]["resolved"][name]
        with mlq_llm(cfg) if name == "mlq" else contextlib.nullcontext() as llm:
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
    retrieved = pd.concat([pd.read_parquet(parts_dir / f"{n}.parquet") for n in names],
                          ignore_index=True)
    run.write("retrieved", retrieved)
    if (parts_dir / "mlq.queries.parquet").exists():
        run.write("queries", pd.read_parquet(parts_dir / "mlq.queries.parquet"))
    shutil.rmtree(run.path / ".parts", ignore_errors=True)  # only needed to resume
    return counts


# --- score ----------------------------------------------------------------------------------


def contexts(run: Run) -> pd.DataFrame:
    """One row per (qid, retriever): the retrieved context (chunk texts joined in rank order).

    Every question of the run gets a row for every retriever of its config: a question that
    retrieved nothing has the empty context, which scores 0 at every budget."""
    retrieved = run.read("retrieved")
    texts = run.read("chunks").set_index("chunk_id")["text"]
    retrieved = retrieved.sort_values(["retriever", "qid", "rank"])
    retrieved["text"] = texts.reindex(retrieved["chunk_id"]).to_numpy()
    out = retrieved.groupby(["retriever", "qid"], sort=False)["text"].agg(join_chunks)
    used = run.manifest.get("config", {}).get("retrievers", {}).get("use") or []
    names = list(dict.fromkeys([*retrieved["retriever"], *used]))
    qids = sorted(run.read("examples")["qid"].astype(str))
    full = pd.MultiIndex.from_product([names, qids], names=["retriever", "qid"])
    out = out.reindex(full, fill_value="")
    return out.rename("context").reset_index()[["qid", "retriever", "context"]]


def score_contexts(ctx: pd.DataFrame, parts: dict[str, list[str]], budgets: list[int],
                   tokenizer: str, method: str, mode: str) -> pd.DataFrame:
    """Score_IR for every (qid, retriever, budget); `ctx` has qid, retriever, context."""
    tok = get_tokenizer(tokenizer)
    rows = []
    if mode == "corrected":
        all_ends = tok.token_ends(ctx["context"].tolist())
        for (qid, ret, context), ends in zip(ctx[["qid", "retriever", "context"]].itertuples(
                index=False), all_ends, strict=True):
            cut_list = cuts_from_ends(ends, budgets, len(context))
            scores = part_scores(parts[qid], context, cut_list, method)
            for b, cut, row in zip(budgets, cut_list, scores, strict=True):
                rows.append((qid, ret, b, float(row.mean()) if len(row) else 0.0, row.tolist(),
                             len(ends), int(cut), len(ends) >= b))
    else:
        from ragdash.budget import reference_reaches

        for qid, ret, context in ctx[["qid", "retriever", "context"]].itertuples(index=False):
            prefixes, total = reference_prefixes(context, budgets, tokenizer)
            for b, prefix in zip(budgets, prefixes, strict=True):
                row = part_scores(parts[qid], prefix, [len(prefix)], method)[0]
                rows.append((qid, ret, b, float(row.mean()) if len(row) else 0.0, row.tolist(),
                             total, len(prefix), reference_reaches(total, b)))
    return pd.DataFrame(rows, columns=["qid", "retriever", "budget", "score", "part_scores",
                                       "context_tokens", "cut", "reached"])


def summary_table(ir: pd.DataFrame, mode: str = "corrected") -> pd.DataFrame:
    """Mean Score_IR per budget x retriever (the paper's Table 3.1).

    Corrected mode averages every question (a short context keeps its whole-context score);
    reference mode averages only the questions whose context reaches N, as the original code did.
    """
    data = ir[ir["reached"]] if mode == "reference" else ir
    table = data.pivot_table(index="budget", columns="retriever", values="score", aggfunc="mean")
    return table.reindex(columns=list(dict.fromkeys(ir["retriever"])))


def score(run: Run, cfg: dict, key: str, progress: Progress = _noop) -> dict:
    from ragdash.scoring.ir_metrics import chunk_metrics

    examples = run.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    ctx = contexts(run)
    progress("scoring contexts", 0, len(ctx))
    s = cfg["scoring"]
    ir = score_contexts(ctx, parts, cfg["budgets"], cfg["tokenizer"], s["method"], s["mode"])
    run.write("ir_scores", ir)
    table = summary_table(ir, s["mode"])
    write_table(run.path / "ir_summary.csv", table.reset_index())
    metrics = chunk_metrics(run.read("retrieved"), run.read("chunks"), parts,
                            share=float(s.get("relevance_share", 1.0)),
                            retrievers=list(cfg["retrievers"]["use"]))
    write_table(run.path / "ir_metrics.csv", metrics)
    progress("scoring done", len(ctx), len(ctx))
    top = table.loc[table.index.max()]
    return {"contexts": len(ctx), "rows": len(ir),
            "mean_at_max_budget": {k: round(float(v), 4) for k, v in top.items()
                                   if not np.isnan(v)}}


# --- orchestration --------------------------------------------------------------------------


def failed_calls(run: Run, stage: str) -> int:
    """LLM calls of a finished generate or judge stage that ended in errors (a re-run retries
    them; judge rows without an answer to judge are not calls and are left out)."""
    if stage not in ("generate", "judge") or not run.has("answers" if stage == "generate"
                                                         else "judgments"):
        return 0
    if stage == "generate":
        return int(run.read("answers")["error"].notna().sum())
    from ragdash.llm.judge import NO_ANSWER

    j = run.read("judgments")
    return int((j["error"].notna() & (j["error"] != NO_ANSWER)).sum())


def run_stages(cfg: dict, run_dir: str | Path, stages=STAGES, force: bool = False,
               progress: Progress = _noop) -> Run:
    """Run the given stages in order, skipping finished ones whose inputs are unchanged."""
    run = Run(run_dir)
    run.create(cfg)
    keys = stage_keys(cfg)
    from ragdash.llm_stages import calibrate_stage, generate_stage, judge_stage

    redo = False
    funcs = {"ingest": ingest, "chunk": chunk, "retrieve": retrieve, "score": score,
             "generate": generate_stage, "judge": judge_stage, "calibrate": calibrate_stage}
    for i, name in enumerate(STAGES):
        if name not in stages:
            continue
        for up in STAGES[:i]:
            if up not in stages and not run.stage_done(up, keys[up]):
                raise RuntimeError(f"stage {name} needs stage {up} to be up to date in "
                                   f"{run.path}: run `ragdash {up}` (or `ragdash run`) first")
        failed = failed_calls(run, name)
        if not force and not redo and run.stage_done(name, keys[name]) and not failed:
            log.info("stage %s: up to date, skipped (use --force to redo)", name)
            progress(f"{name}: up to date", 1, 1)
            continue
        if failed and not force and not redo and run.stage_done(name, keys[name]):
            log.warning("stage %s: %d call(s) ended in errors last time; retrying them (finished "
                     "calls come from the LLM cache)", name, failed)
        redo = True  # a stage that ran may change what the next ones read
        with run.running(name, keys[name]) as counts:
            kwargs = {"progress": progress} if name != "ingest" else {}
            counts.update(funcs[name](run, cfg, keys[name], **kwargs))
    return run
