"""Benchmark: the Ray executor against the local one, and the per-unit figures of
docs/speed-and-scale.md. Every figure is measured here; run it under `nice` on a shared machine.

1. `compare`: configs/paper.yaml on `--limit` questions (bm25, sim), once per executor (with
   `--actors` also Ray with actor pools), each in its own fresh runs root (cold embedding and
   index caches): times per stage, and whether chunks, retrieved, ir_scores (row for row),
   ir_summary and ir_metrics are identical.
2. `scaling`: the score stage's batches (`score_batch`, Llama-3 tokenizer, budgets 100..1000)
   over `--copies` copies of the sample's 1,186 contexts (each question's 10 paragraphs
   joined, as a 10-chunk retriever returns them), with the local executor and on a local Ray
   instance with 1 and 2 workers: one warm-up round, then `--reps` alternated rounds; medians.
3. `units`: MiniLM embeddings per second of the sample's chunk texts in one process limited to
   one thread (what a one-CPU Ray worker gets), chunks and semantic windows per document and
   documents chunked per second on the sample, exact FAISS search time per query, and tokens
   per LLM call in the bundled HotpotQA demo run.

    nice .venv/bin/python benchmarks/bench_ray.py compare --limit 50 [--actors]
    nice .venv/bin/python benchmarks/bench_ray.py scaling --copies 4 --reps 5
    nice .venv/bin/python benchmarks/bench_ray.py units
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
TABLES = ("chunks", "retrieved", "ir_scores", "ir_summary", "ir_metrics")


def compare(limit: int, actors: bool) -> None:
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    ways = {"local": {"kind": "local"}, "ray": {"kind": "ray"},
            **({"ray, actors": {"kind": "ray", "actors": True}} if actors else {})}
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        runs = {}
        for i, (name, executor) in enumerate(ways.items()):
            cfg = load_config(ROOT / "configs" / "paper.yaml", {
                "dataset": {"limit": limit}, "retrievers": {"use": "bm25,sim"},
                "runs_root": f"{tmp}/root-{i}", "executor": executor})
            t0 = time.perf_counter()
            run = run_stages(cfg, f"{tmp}/run-{i}")
            stages = {k: v.get("seconds") for k, v in run.manifest["stages"].items()}
            print(f"{name:>11}: {time.perf_counter() - t0:6.1f} s  stages {stages}", flush=True)
            runs[name] = {k: run.read(k) for k in TABLES}
        for key in TABLES:
            a, b = runs["local"][key], runs["ray"][key]
            same = a.equals(b)
            line = f"{key:>11}: {len(a):5d} rows, identical on ray: {same}"
            if not same and key == "retrieved":
                cols = ["qid", "retriever", "rank", "chunk_id"]
                diff = (a["score"] - b["score"]).abs().max()
                line += (f" (ids and ranks identical: {a[cols].equals(b[cols])}, "
                         f"largest score difference {diff:.2e})")
            print(line)


def contexts_frame(copies: int) -> pd.DataFrame:
    from bench_score_ir import load_cases

    cases = load_cases(1186)
    return pd.DataFrame([(f"{qid}-{c}", "all10", ctx, parts) for c in range(copies)
                         for qid, ctx, parts in cases],
                        columns=["qid", "retriever", "context", "parts"])


def scaling(copies: int, reps: int) -> None:
    import ray

    from ragdash.budget import DEFAULT_BUDGETS
    from ragdash.executors import LocalExecutor, batch_size
    from ragdash.executors.ray_data import RayExecutor
    from ragdash.stages.score import score_batch

    frame = contexts_frame(copies)
    kwargs = {"budgets": list(DEFAULT_BUDGETS), "tokenizer": "llama3", "method": "substring",
              "mode": "corrected"}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    executors = {"local": LocalExecutor(), "ray, 1 worker": RayExecutor(workers=1),
                 "ray, 2 workers": RayExecutor(workers=2)}
    times: dict[str, list[float]] = {name: [] for name in executors}
    reference = None
    for rnd in range(reps + 1):  # round 0 warms the workers (imports, tokenizer, kernel)
        for name, ex in executors.items():
            t0 = time.perf_counter()
            out = ex.map_batches(frame, score_batch, kwargs=kwargs,
                                 batch_size=batch_size(ex, len(frame), most=2000))
            if rnd:
                times[name].append(time.perf_counter() - t0)
            reference = out if reference is None else reference
            assert out.equals(reference), f"{name}: scores differ from the local executor"
    ray.shutdown()
    base = statistics.median(times["local"])
    print(f"{len(frame):,} contexts x {len(kwargs['budgets'])} budgets; medians of {reps} "
          "rounds (all outputs identical to the local executor's); load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:>15}: {m:6.2f} s  ({1000 * m / len(frame):.3f} ms per context, "
              f"{base / m:.2f}x the local executor; rounds {', '.join(f'{t:.2f}' for t in ts)})")


def units() -> None:
    import torch

    from ragdash.chunking.semantic import merge_sentences, sentences
    from ragdash.config import load_config
    from ragdash.embeddings import get_embedder
    from ragdash.stages.runner import run_stages

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        cfg = load_config(ROOT / "configs" / "paper.yaml", {
            "dataset": {"limit": 200}, "retrievers": {"use": "bm25"}, "runs_root": tmp,
            "embeddings": {"cache": False}})
        run = run_stages(cfg, f"{tmp}/run", stages=["ingest", "chunk"])
        docs, chunks = run.read("documents"), run.read("chunks")
        seconds = run.stage("chunk")["seconds"]
    texts = chunks["text"].tolist()
    pieces = [len(merge_sentences([e - s for s, e in sentences(t)])) for t in docs["text"]]
    wins = sum(n for n in pieces if n > 4)  # a document of <= 4 pieces is never embedded
    print(f"sample, 200 questions: {len(docs):,} documents, {len(chunks):,} semantic chunks "
          f"({len(chunks) / len(docs):.2f} per document, mean {chunks['text'].str.len().mean():.0f}"
          f" chars), {wins:,} windows embedded by the semantic chunker "
          f"({wins / len(docs):.2f} per document); chunk stage {seconds:.1f} s on 1 thread "
          f"({len(docs) / seconds:.0f} documents/s); load average {os.getloadavg()[0]:.1f}")
    embedder = get_embedder()
    embedder.embed_documents(texts[:64])  # load and warm
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        embedder.embed_documents(texts)
        rates.append(len(texts) / (time.perf_counter() - t0))
    print(f"MiniLM fp32, 1 thread: {statistics.median(rates):.0f} chunks/s (median of 3 passes "
          f"over {len(texts):,} chunks: {', '.join(f'{r:.0f}' for r in rates)})")
    flat_search(n=500_000, queries=256)
    llm_tokens(ROOT / "data" / "demo_run")


def llm_tokens(run_dir: Path) -> None:
    """Tokens per LLM call in a finished run (the bundled HotpotQA demo: Qwen2.5 0.5B answers
    at N = 1000, stepwise judging by Qwen2.5-Coder 1.5B)."""
    from ragdash.rundir import Run

    run = Run(run_dir)
    answers, judgments = run.read("answers"), run.read("judgments")
    rag = answers[answers["budget"].notna()]
    alone = answers[answers["budget"].isna()]
    calls = judgments.drop_duplicates("call_id").dropna(subset=["tokens_in"])
    print(f"{run_dir.name}: generation with C_N (n={len(rag)}): {rag['tokens_in'].mean():.0f} "
          f"tokens in, {rag['tokens_out'].mean():.0f} out; LLM only (n={len(alone)}): "
          f"{alone['tokens_in'].mean():.0f} in, {alone['tokens_out'].mean():.0f} out; "
          f"{run.manifest['config']['judge']['mode']} judging per answer (n={len(calls)}): "
          f"{calls['tokens_in'].mean():.0f} in, {calls['tokens_out'].mean():.0f} out")


def flat_search(n: int, queries: int) -> None:
    """Exact FAISS inner-product search, one thread: seconds per query per million vectors."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(384)
    index.add(vectors)
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        index.search(vectors[:queries], 10)
        rates.append((time.perf_counter() - t0) / queries / (n / 1e6))
    print(f"FAISS exact search, 1 thread, batches of {queries} queries over {n:,} vectors: "
          f"{1000 * statistics.median(rates):.1f} ms per query per million vectors "
          f"(index {index.ntotal * 384 * 4 / 1e9:.2f} GB; load average {os.getloadavg()[0]:.1f})")


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # as the `ragdash` command sets
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--limit", type=int, default=50)
    c.add_argument("--actors", action="store_true", help="also time executor.actors: true")
    s = sub.add_parser("scaling")
    s.add_argument("--copies", type=int, default=4)
    s.add_argument("--reps", type=int, default=5)
    sub.add_parser("units")
    args = ap.parse_args()
    if args.what == "compare":
        compare(args.limit, args.actors)
    elif args.what == "scaling":
        scaling(args.copies, args.reps)
    else:
        units()


if __name__ == "__main__":
    main()
