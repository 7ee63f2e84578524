"""Benchmark: fast indexing on one machine, against today's path (fp32, no cache) on the same texts.

Every figure is a ratio or an agreement measured in this process, beside its fp32 baseline:

1. embedding throughput: MiniLM fp32 vs `--precision` (bf16 autocast; by default only on a CPU
   with bfloat16 instructions) on distinct semantic windows of the long-document corpus,
   alternated `--reps` times (wall and CPU time);
2. semantic chunking (§3.1) of a long-document corpus: the first `--docs` SQuAD v1.1 dev articles,
   each article's paragraphs (up to `--max-chars`) joined into one document: fp32 without cache
   (today) vs fp32 with an empty disk cache (cold) and again (warm) vs `--precision` with an
   empty cache; agreement = share of chunk boundaries identical to fp32 (pooled over
   documents) and documents chunked identically;
3. retrieval on the bundled sample (configs/paper.yaml, `--limit` questions, sim, mmr, reo),
   through the pipeline (ingest, chunk, retrieve), the same four ways: stage times and the
   share of top-10 lists identical to today's;
4. approximate indexes: recall@10 of HNSW and IVF against exact search on the same questions.

    nice .venv/bin/python benchmarks/bench_index.py [--docs 30] [--limit 100] [--skip-chunking]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash import embeddings
from ragdash.chunking import chunk_documents
from ragdash.chunking.semantic import merge_sentences, sentences, windows
from ragdash.config import load_config
from ragdash.data import Document
from ragdash.embedding_cache import bf16_native, forget_stores
from ragdash.stages.runner import run_stages

ROOT = Path(__file__).resolve().parent.parent
SQUAD = ROOT / "data" / "squad" / "dev-v1.1.json.gz"
PAPER = ROOT / "configs" / "paper.yaml"


def long_documents(n: int, max_chars: int | None = None) -> list[Document]:
    """The first n SQuAD dev articles, each one document of its paragraphs joined by blank lines
    (whole paragraphs up to max_chars characters)."""
    with gzip.open(SQUAD) as f:
        articles = json.load(f)["data"][:n]
    docs = []
    for i, a in enumerate(articles):
        paras: list[str] = []
        size = 0
        for p in a["paragraphs"]:
            size += len(p["context"]) + 2 * bool(paras)
            if paras and max_chars and size > max_chars:
                break
            paras.append(p["context"])
        docs.append(Document(f"squad-{i}", a["title"], "\n\n".join(paras)))
    return docs


def semantic_windows(docs: list[Document], n: int) -> list[str]:
    """n distinct windows the semantic chunker embeds (every k-th of them, longest first)."""
    wins: set[str] = set()
    for d in docs:
        spans = sentences(d.text)
        groups = merge_sentences([e - s for s, e in spans], 200)
        wins.update(windows(["".join(" " + d.text[s:e] for s, e in spans[a:b])
                             for a, b in groups]))
    ordered = sorted(wins, key=len, reverse=True)
    return ordered[:: max(1, len(ordered) // n)][:n]


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def bench_throughput(texts: list[str], precision: str | None, reps: int) -> None:
    model = embeddings.get_embedder()
    if precision is None:  # fp32 alone
        model.compute(texts[:4], "fp32")
        _, w, _ = timed(lambda: [model.compute(texts, "fp32") for _ in range(reps)])
        print(f"1. embedding {len(texts)} windows x {reps}: fp32 {len(texts) * reps / w:.1f}/s")
        return
    model.compute(texts[:4], "fp32")  # load and warm up
    model.compute(texts[:4], precision)
    wall = {"fp32": 0.0, precision: 0.0}
    cpu = dict(wall)
    out = {}
    for _ in range(reps):
        for p in wall:
            out[p], w, c = timed(lambda p=p: model.compute(texts, p))
            wall[p] += w
            cpu[p] += c
    cos = np.einsum("ij,ij->i", out["fp32"], out[precision])
    n = len(texts) * reps
    print(f"1. embedding {len(texts)} windows x {reps}: fp32 {n / wall['fp32']:.1f}/s, "
          f"{precision} {n / wall[precision]:.1f}/s -> {wall['fp32'] / wall[precision]:.2f}x "
          f"wall, {cpu['fp32'] / cpu[precision]:.2f}x CPU time; cosine to fp32 min "
          f"{cos.min():.6f}, max |diff| {np.abs(out['fp32'] - out[precision]).max():.1e}")


def boundaries(chunks) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for c in chunks:
        out.setdefault(c.doc_id, set()).add(c.end)
    return out


def agreement(base, other) -> str:
    b0, b1 = boundaries(base), boundaries(other)
    both = sum(len(b0[d] & b1.get(d, set())) for d in b0)
    either = sum(len(b0.get(d, set()) | b1.get(d, set())) for d in set(b0) | set(b1))
    same_docs = sum(b0[d] == b1.get(d) for d in b0)
    return (f"boundaries identical to fp32 {both / max(1, either):.2%} ({both}/{either}), "
            f"documents chunked identically {same_docs}/{len(b0)}")


def rotations(configs: list, rounds: int):
    """(round, config) in an order that rotates each round, so load that drifts during the
    benchmark falls on every configuration alike."""
    for r in range(rounds):
        for i in range(len(configs)):
            yield r, configs[(i + r) % len(configs)]


def ratio(base: tuple[float, float], other: tuple[float, float]) -> str:
    return (f"{other[0]:.1f}s -> {base[0] / other[0]:.2f}x wall, "
            f"{base[1] / max(other[1], 1e-9):.2f}x CPU time")


def bench_chunking(docs: list[Document], precision: str | None, cache: Path,
                   rounds: int) -> None:
    """Documents split into `rounds` groups; every configuration chunks each group in turn
    (cold caches: the groups share no window), then fp32 + cache chunks all again (warm)."""
    configs = [("today", None, "fp32"), ("fp32", cache / "fp32", "fp32"),
               *([(precision, cache / precision, precision)] if precision else [])]
    groups = [docs[i::rounds] for i in range(rounds)]
    times = {name: [0.0, 0.0] for name, _, _ in configs}
    chunks: dict[str, list] = {name: [] for name, _, _ in configs}
    for r, (name, where, p) in rotations(configs, rounds):
        with embeddings.embedding_settings(where, p):
            out, w, c = timed(lambda r=r: chunk_documents(groups[r], "semantic"))
        chunks[name] += out
        times[name][0] += w
        times[name][1] += c
    with embeddings.embedding_settings(cache / "fp32", "fp32"):
        warm, w, c = timed(lambda: chunk_documents([d for g in groups for d in g], "semantic"))
    base = times["today"]
    key = lambda c: (c.doc_id, c.start)  # noqa: E731
    today = sorted(chunks["today"], key=key)
    chars = sum(len(d.text) for d in docs)
    print(f"2. semantic chunking of {len(docs)} long documents ({chars:,} chars, "
          f"{len(today):,} chunks), in {rounds} interleaved groups: fp32 no cache (today) "
          f"{base[0]:.1f}s wall, {base[1]:.1f}s CPU")
    print(f"   fp32 + cache, cold {ratio(base, times['fp32'])}; chunks identical to today: "
          f"{sorted(chunks['fp32'], key=key) == today}")
    print(f"   fp32 + cache, warm {ratio(base, (w, c))}; chunks identical: "
          f"{sorted(warm, key=key) == today}")
    if precision:
        print(f"   {precision} + cache, cold {ratio(base, times[precision])}; "
              f"{agreement(today, chunks[precision])}")


def pipeline(root: Path, name: str, limit: int, precision: str, cache: bool, **params) -> tuple:
    """ingest, chunk, retrieve under runs root `root` (its own index and embedding caches)."""
    cfg = load_config(PAPER, {
        "name": name, "runs_root": str(root), "dataset": {"limit": limit},
        "retrievers": {"use": ["sim", "mmr", "reo"], "params": params},
        "embeddings": {"precision": precision, "cache": cache}})
    run, w, c = timed(lambda: run_stages(cfg, root / name, stages=("ingest", "chunk",
                                                                   "retrieve"), force=True))
    return run, (w, c)


def top10(run) -> pd.Series:
    r = run.read("retrieved").sort_values(["retriever", "qid", "rank"])
    return r[r["rank"] < 10].groupby(["retriever", "qid"])["chunk_id"].agg(tuple)


def same_lists(base, other) -> str:
    """The share of (question, retriever) top-10 lists identical to `base`'s, in order."""
    a, b = top10(base), top10(other)
    same = a == b.reindex(a.index)
    per = ", ".join(f"{k} {v:.0%}" for k, v in same.groupby(level=0).mean().items())
    return f"top-10 lists identical to today's {same.mean():.2%} ({per})"


def same_chunks(base, other) -> bool:
    cols = ["chunk_id", "start", "end"]
    return base.read("chunks")[cols].equals(other.read("chunks")[cols])


def bench_retrieval(limit: int, precision: str | None, root: Path, rounds: int) -> None:
    """Each configuration runs the stages on a fresh runs root (cold index and embedding
    caches) once per round, in rotating order; then fp32 + cache runs again (warm)."""
    pipeline(root / "warm-up", "run", 2, "fp32", cache=False)  # imports, tokenizers
    configs = [("today", "fp32", False), ("fp32", "fp32", True),
               *([(precision, precision, True)] if precision else [])]
    times = {name: [0.0, 0.0] for name, _, _ in configs}
    runs = {}
    for r, (name, p, cache) in rotations(configs, rounds):
        runs[name], t = pipeline(root / f"{name}-{r}", "run", limit, p, cache)
        times[name] = [times[name][0] + t[0] / rounds, times[name][1] + t[1] / rounds]
    warm, t_warm = pipeline(root / "fp32-0", "run", limit, "fp32", cache=True)
    base = times["today"]
    print(f"3. sample ({limit} questions, {len(runs['today'].read('chunks')):,} chunks), "
          f"ingest + chunk + retrieve (sim, mmr, reo), mean of {rounds} round(s): fp32 no cache "
          f"(today) {base[0]:.1f}s wall, {base[1]:.1f}s CPU")
    for label, run, t in (("fp32 + cache, cold", runs["fp32"], times["fp32"]),
                          ("fp32 + cache, warm", warm, t_warm),
                          *([(f"{precision} + cache, cold", runs[precision], times[precision])]
                            if precision else [])):
        print(f"   {label} {ratio(base, t)}; {same_lists(runs['today'], run)}; chunks "
              f"identical: {same_chunks(runs['today'], run)}")
    for kind in ("hnsw", "ivf"):
        params = {r: {"index": kind} for r in ("sim", "mmr", "reo")}
        run, t = pipeline(root / "fp32-0", kind, limit, "fp32", cache=True, **params)
        recall = run.manifest["index_recall"]["sim"]
        print(f"4. {kind}: recall@10 against exact search {recall['recall']:.3f} on "
              f"{recall['queries']} questions; {same_lists(runs['today'], run)} (stages "
              f"{t[0]:.1f}s, embeddings from the cache)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=30, help="long documents (SQuAD articles)")
    ap.add_argument("--max-chars", type=int, default=15000, help="characters per document "
                    "(whole paragraphs; 0: the whole article)")
    ap.add_argument("--windows", type=int, default=128, help="windows timed in part 1")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--limit", type=int, default=100, help="sample questions in part 3")
    ap.add_argument("--precision", choices=[p for p in embeddings.PRECISIONS if p != "fp32"],
                    help="the lower precision compared with fp32 (default: bf16 where the CPU "
                         "has bfloat16 instructions, else none: emulated bf16 is 5-7x slower)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (parts 2, 3)")
    ap.add_argument("--skip-chunking", action="store_true", help="skip part 2 (the longest)")
    args = ap.parse_args()
    os.environ.pop(embeddings.CACHE_ENV, None)
    if args.precision is None and bf16_native():
        args.precision = "bf16"
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"bfloat16 instructions: {bf16_native()} (without them bf16 is emulated, slower)")
    docs = long_documents(args.docs, args.max_chars or None)
    bench_throughput(semantic_windows(docs, args.windows), args.precision, args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_chunking:
            bench_chunking(docs, args.precision, Path(tmp) / "chunking", args.rounds)
        bench_retrieval(args.limit, args.precision, Path(tmp) / "runs", args.rounds)
        forget_stores()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
