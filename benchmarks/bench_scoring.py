"""Benchmark: Score_IR per retrieved context, its token ends composed from the chunks' against
each context tokenized whole, and RAGAS NonLLMContextRecall on the same contexts.

The contexts are those of BM25 and SIM over the first `--limit` questions of the bundled HotpotQA
sample (the default config: semantic chunks, bm25 keeps 5 and sim 10), retrieved once into
`--run-dir`. In this process, alternated `--reps` times, `score_contexts` scores every context
at the 10 budgets 100..1000 three ways (and the tokenization alone the same three ways):

- before: each context tokenized whole, with Hugging Face offsets (the path before this change;
  Hugging Face tokenizers only);
- whole: each context tokenized whole with the tokenizer's engine now (Llama-3 through tiktoken,
  `ragdash.byte_bpe`);
- composed: each distinct chunk tokenized once and a context's token ends composed from its
  chunks' (what `ragdash score` does now).

It checks that all three give identical ir_scores rows and prints ms per context (medians) and
the ratios; then times the score stage itself (`run_stages(..., ["score"], force=True)`: reading
the run, scoring, chunk metrics, writing the files), now and with chunk relevance found as
before (one str.find scan of the corpus per gold part), checking the chunk metrics are identical.
Tokenizers run single-threaded, as under the CLI.

RAGAS NonLLMContextRecall (one score per context: rapidfuzz similarity of each part with each
chunk) is timed on the same contexts: in this process when ragas imports, else under
`--ragas-python` (a virtualenv with ragas, rapidfuzz, pandas and pyarrow) on the contexts
exported to parquet (benchmarks/ragas_context_recall.py), else skipped with a message.

    nice .venv/bin/python benchmarks/bench_scoring.py [--limit 300] [--reps 7]
        [--tokenizer llama3] [--ragas-python /tmp/ragas-venv/bin/python]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pandas as pd

from ragdash.budget import DEFAULT_BUDGETS, get_tokenizer, joins_cleanly
from ragdash.config import load_config
from ragdash.scoring.contexts import contexts, score_contexts
from ragdash.scoring.ir_metrics import _docs_containing
from ragdash.stages.runner import chain, run_stages

ROOT = Path(__file__).resolve().parent.parent
RAGAS_SCRIPT = ROOT / "benchmarks" / "ragas_context_recall.py"
RAGAS_VENV = Path("/tmp/ragas-venv/bin/python")


def docs_by_find(probes: set[str], doc_ids: list, texts: list[str]) -> dict[str, list]:
    """The documents holding each probe, found as before the Aho-Corasick pass: every probe
    searched with str.find through all documents joined (a drop-in for
    `ir_metrics._docs_containing`)."""
    joined = "\x00".join(texts)
    starts = np.cumsum([0] + [len(t) + 1 for t in texts])
    found: dict[str, list] = {}
    for p in probes:
        at = joined.find(p) if p else -1
        while at >= 0:
            doc = doc_ids[int(np.searchsorted(starts, at, side="right")) - 1]
            if doc not in found.setdefault(p, []):
                found[p].append(doc)
            at = joined.find(p, at + 1)
    return found


def ms(seconds: list[float], n: int) -> float:
    return 1000 * float(np.median(seconds)) / n


def _identical(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError:
        return False
    return True


def ragas_timings(frame: pd.DataFrame, python: str | None, reps: int) -> dict | None:
    """RAGAS's timings on `frame` (chunks, parts): in this process or under `python`."""
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "contexts.parquet", Path(tmp) / "ragas.json"
        frame[["chunks", "parts"]].to_parquet(data)
        if importlib.util.find_spec("ragas") is not None:
            cmd = [sys.executable, str(RAGAS_SCRIPT), str(data), str(out)]
        elif python and Path(python).is_file():
            cmd = [python, str(RAGAS_SCRIPT), str(data), str(out)]
        else:
            print("RAGAS comparison skipped: ragas is not installed here, and no --ragas-python "
                  f"(looked for {python}); see benchmarks/ragas_context_recall.py")
            return None
        done = subprocess.run([*cmd, "--reps", str(reps)], capture_output=True, text=True)
        if done.returncode:
            print(f"RAGAS comparison skipped: {' '.join(cmd[:2])} failed:\n{done.stderr[-800:]}")
            return None
        return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=300, help="questions of the bundled sample")
    ap.add_argument("--run-dir", default=str(ROOT / "runs" / "bench-scoring"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--tokenizer", default="llama3")
    ap.add_argument("--ragas-python", default=os.environ.get("RAGAS_PYTHON", str(RAGAS_VENV)),
                    help="python of a virtualenv with ragas (when ragas is not importable here)")
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # single-threaded, as the CLI

    cfg = load_config(None, {"dataset": {"limit": args.limit}, "tokenizer": args.tokenizer,
                             "retrievers": {"use": ["bm25", "sim"]}})
    run = run_stages(cfg, args.run_dir, stages=chain("retrieve"))  # done once, then skipped
    examples = run.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    ctx = contexts(run, chunks=True)
    ctx = ctx[[len(c) > 0 and len(parts[q]) > 0 for q, c in zip(ctx["qid"], ctx["chunks"],
                                                                  strict=True)]]
    ctx = ctx.reset_index(drop=True)  # RAGAS needs a chunk and a part: the same set for both
    whole_ctx = ctx.drop(columns="chunks")
    budgets, n = list(DEFAULT_BUDGETS), len(ctx)
    tok = get_tokenizer(args.tokenizer)
    pieces = {(j > 0, c) for chunks in ctx["chunks"] for j, c in enumerate(chunks)}
    print(f"contexts: {n} (bm25 + sim, {args.limit} questions), {args.tokenizer} tokenizer, "
          f"{len(budgets)} budgets; {sum(map(len, ctx['chunks'])):,} chunk occurrences, "
          f"{len(pieces):,} distinct pieces tokenized; "
          f"{sum(not joins_cleanly(c) for c in ctx['chunks'])} contexts tokenized whole "
          "(a join next to whitespace or an empty chunk)")

    def score(frame: pd.DataFrame) -> pd.DataFrame:
        return score_contexts(frame, parts, budgets, args.tokenizer, "substring", "corrected")

    score(ctx.head(3))  # compiles the kernel, loads the tokenizer
    hf_offsets = {"_fast": None}  # the Hugging Face offsets every text, as before tiktoken
    jobs = {"tok before": lambda: tok.token_ends(ctx["context"].tolist()),
            "tok whole": lambda: tok.token_ends(ctx["context"].tolist()),
            "tok composed": lambda: tok.context_ends(ctx["chunks"].tolist()),
            "before": lambda: score(whole_ctx), "whole": lambda: score(whole_ctx),
            "composed": lambda: score(ctx)}
    if tok._kind != "hf":  # no Hugging Face path to compare with
        jobs = {k: v for k, v in jobs.items() if "before" not in k}
    times: dict[str, list[float]] = {k: [] for k in jobs}
    out = {}
    for _ in range(args.reps):
        for name, job in jobs.items():
            with patch.dict(tok.__dict__, hf_offsets if "before" in name else {}):
                t0 = time.perf_counter()
                out[name] = job()
                times[name].append(time.perf_counter() - t0)
    ends_same = all(all(np.array_equal(a, b) for a, b in zip(out[k], out["tok composed"],
                                                             strict=True))
                    for k in jobs if k.startswith("tok "))
    same = all(_identical(out[k], out["composed"]) for k in jobs if not k.startswith("tok "))

    def line(label: str, prefix: str, what: str) -> None:
        keys = [k for k in (f"{prefix}before", f"{prefix}whole", f"{prefix}composed")
                if k in times]
        figures = "  ".join(f"{k.removeprefix(prefix)} {ms(times[k], n):.3f}" for k in keys)
        ratios = ", ".join(f"{k.removeprefix(prefix)}/composed "
                           f"{np.median(times[k]) / np.median(times[keys[-1]]):.2f}x"
                           for k in keys[:-1])
        print(f"{label:16s} {figures} ms/context -> {ratios} ({what})")

    line("tokenization:", "tok ", f"identical token ends: {ends_same}")
    line("score_contexts:", "", f"identical ir_scores: {same}; medians of {args.reps}")
    print(("  before: whole contexts, Hugging Face offsets; " if "before" in times else "  ")
          + "whole: whole contexts, the tokenizer's engine now; composed: `ragdash score` now")

    stage: dict[str, list[float]] = {"before": [], "now": []}
    metrics: dict[str, pd.DataFrame] = {}
    for _ in range(3):
        for name in stage:  # before: one str.find scan of the corpus per gold part
            with patch("ragdash.scoring.ir_metrics._docs_containing",
                       docs_by_find if name == "before" else _docs_containing):
                t0 = time.perf_counter()
                run = run_stages(cfg, args.run_dir, stages=["score"], force=True)
                stage[name].append(time.perf_counter() - t0)
            metrics[name] = run.read("ir_metrics")
    n_ctx = len(run.read("ir_scores")) // len(budgets)
    before, now = (1000 * float(np.median(stage[k])) / n_ctx for k in ("before", "now"))
    print(f"score stage:         before {before:.3f}  now {now:.3f} ms/context -> "
          f"{before / now:.2f}x ({n_ctx} contexts, I/O and chunk metrics included; chunk "
          f"relevance by str.find per part before, one Aho-Corasick pass now; identical "
          f"ir_metrics: {metrics['before'].equals(metrics['now'])}; medians of 3)")

    frame = ctx.assign(parts=[parts[q] for q in ctx["qid"]])
    ragas = ragas_timings(frame, args.ragas_python, max(3, args.reps // 2))
    if ragas:
        r_ms, f_ms = ms(ragas["ragas_s"], n), ms(ragas["rapidfuzz_s"], n)
        ours = ms(times["composed"], n)
        print(f"RAGAS {ragas['ragas']} NonLLMContextRecall (1 score): {r_ms:.3f} ms/context "
              f"(rapidfuzz alone {f_ms:.3f}); ragdash ({len(budgets)} budgets) {ours:.3f} "
              f"-> ragdash/RAGAS time {ours / r_ms:.2f}, per score "
              f"{ours / len(budgets) / r_ms:.3f}; mean recall {np.mean(ragas['scores']):.3f}")
    if not (same and ends_same):
        raise SystemExit("composed and whole tokenization differ")
    if not metrics["before"].equals(metrics["now"]):
        raise SystemExit("chunk metrics differ between str.find and Aho-Corasick")


if __name__ == "__main__":
    main()
