"""`ragdash` command line: parses arguments and calls the pipeline."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from ragdash.budget import TOKENIZERS

STAGE_COMMANDS = {
    "ingest": (("ingest",), "load and validate a dataset and corpus into a run directory"),
    "index": (("ingest", "chunk"), "chunk the corpus (indexes are built and cached on first use)"),
    "retrieve": (("ingest", "chunk", "retrieve"), "retrieve chunks for every question"),
    "score": (("ingest", "chunk", "retrieve", "score"), "score retrieval over token budgets"),
    "run": (("ingest", "chunk", "retrieve", "score"), "run every stage the config asks for"),
}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (e.g. configs/paper.yaml)")
    p.add_argument("--run-dir", help="run directory (default: <runs_root>/<config name>)")
    p.add_argument("--dataset", help="dataset file (HotpotQA/SQuAD JSON, JSONL, CSV, Parquet)")
    p.add_argument("--corpus", help="corpus file, folder or .zip (for generic datasets)")
    p.add_argument("--format", help="dataset format: auto, hotpotqa, squad, jsonl, csv, parquet")
    p.add_argument("--limit", type=int, help="keep only the first N questions")
    p.add_argument("--chunker", help="chunking method: semantic, recursive, tokens, none")
    p.add_argument("--retrievers", help="comma-separated: bm25,sim,mmr,reo,mlq")
    p.add_argument("--preset", help="retriever preset: paper or equal-k")
    p.add_argument("--tokenizer", help=f"{', '.join(TOKENIZERS)} or a tokenizer.json path")
    p.add_argument("--budgets", help="token budgets, e.g. 100:1000:100 or 100,500,1000")
    p.add_argument("--scoring", help="substring, subsequence, normalized, token, contains")
    p.add_argument("--mode", choices=["corrected", "reference"], help="scoring mode")
    p.add_argument("--llm-backend", help="LLM for mlq: local, ollama or openai")
    p.add_argument("--llm-model", help="LLM model name (or GGUF path for local)")
    p.add_argument("--force", action="store_true", help="redo stages even if up to date")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragdash",
        description="Evaluate RAG retrieval by how much of each relevant part lands in the first "
                    "N tokens of the retrieved context.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in STAGE_COMMANDS.items():
        _common(sub.add_parser(name, help=help_text, description=help_text))
    llm = sub.add_parser("llm", help="local LLM server utilities")
    llm_sub = llm.add_subparsers(dest="llm_command", required=True)
    serve = llm_sub.add_parser("serve", help="serve the local GGUF model (OpenAI-compatible)")
    serve.add_argument("--model", help="GGUF path or 'smollm2' (default: bundled Qwen2.5 0.5B)")
    serve.add_argument("--port", type=int, default=8011)
    return parser


def overrides_from(args: argparse.Namespace) -> dict:
    o: dict = {}
    ds = {k: v for k, v in {"path": args.dataset, "corpus": args.corpus, "format": args.format,
                            "limit": args.limit}.items() if v is not None}
    if ds:
        o["dataset"] = ds
    if args.chunker:
        o["chunker"] = {"method": args.chunker}
    r = {k: v for k, v in {"use": args.retrievers, "preset": args.preset}.items() if v}
    if r:
        o["retrievers"] = r
    if args.tokenizer:
        o["tokenizer"] = args.tokenizer
    if args.budgets:
        o["budgets"] = args.budgets
    s = {k: v for k, v in {"method": args.scoring, "mode": args.mode}.items() if v}
    if s:
        o["scoring"] = s
    llm = {k: v for k, v in {"backend": args.llm_backend, "model": args.llm_model}.items() if v}
    if llm:
        o["llm"] = llm
    return o


class _Bars:
    """tqdm progress bars keyed by stage message prefix."""

    def __init__(self, quiet: bool):
        self.quiet, self.bars = quiet, {}

    def __call__(self, msg: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        key = msg.split(":")[0]
        bar = self.bars.get(key)
        if bar is None or bar.total != total:
            if bar is not None:
                bar.close()
            bar = self.bars[key] = tqdm(total=total, desc=msg, unit="step", leave=False)
        bar.set_description(msg)
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def _print_summary(run) -> None:
    import pandas as pd

    summary = run.path / "ir_summary.csv"
    if summary.exists():
        table = pd.read_csv(summary).set_index("budget")
        print("\nMean Score_IR per token budget N (rows) and retriever (columns):")
        print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    metrics = run.path / "ir_metrics.csv"
    if metrics.exists():
        print("\nChunk-level IR metrics (a chunk is relevant when it holds a relevant part):")
        print(pd.read_csv(metrics).set_index("retriever").to_string(
            float_format=lambda v: f"{v:.3f}"))
    m = run.manifest
    issues = m.get("issues", {})
    if issues.get("skipped") or issues.get("warnings"):
        print(f"\nInput issues: {issues.get('skipped', 0)} record(s) skipped, "
              f"{issues.get('warnings', 0)} warning(s); all listed in {run.path / 'issues.csv'}")
    print(f"\nRun directory: {run.path}")


def _run_stages(args: argparse.Namespace) -> int:
    from ragdash.config import load_config
    from ragdash.pipeline import run_stages

    cfg = load_config(args.config, overrides_from(args))
    run_dir = Path(args.run_dir) if args.run_dir else Path(cfg["runs_root"]) / cfg["name"]
    bars = _Bars(args.quiet)
    try:
        run = run_stages(cfg, run_dir, STAGE_COMMANDS[args.command][0], force=args.force,
                         progress=bars)
    finally:
        bars.close()
    for issue in run.manifest.get("issues", {}).get("first", [])[:10]:
        print(f"warning: {issue}", file=sys.stderr)
    _print_summary(run)
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("httpx", "sentence_transformers", "faiss", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    from ragdash.config import ConfigError
    from ragdash.data import DataError

    try:
        if args.command == "llm":
            from ragdash.llm.local import serve

            serve(model=args.model, port=args.port)
            return 0
        return _run_stages(args)
    except (ConfigError, DataError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"ragdash: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragdash: interrupted; finished work is kept, run again to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
