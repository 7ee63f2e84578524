"""`ragdash cache`: what the shared caches of a runs root hold, and trimming the embedding cache.

The embedding cache (`<runs_root>/_embedding_cache.sqlite`) is only ever a speed-up: trimming it
costs recomputation, never results. The LLM reply cache holds paid-for calls, so it is shown
here and never trimmed by this command.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdash.rundir.root import RunsRoot

MB = 1024 * 1024


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "cache", help="show the shared caches of a runs root; trim the embedding cache",
        description="Show how many embeddings and LLM replies the runs root caches. --max-mb "
                    "deletes the embeddings stored first until the rest fit; --clear deletes "
                    "them all. LLM replies are never deleted here.")
    p.add_argument("--runs-root", default="runs", help="the runs root (default: runs)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--max-mb", type=float, metavar="MB",
                      help="keep the embeddings stored last, at most this many MB")
    what.add_argument("--clear", action="store_true", help="delete every cached embedding")
    return p


def _size(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*") if p.is_file()) / MB


def run(args: argparse.Namespace) -> int:
    from ragdash.embedding_cache import open_store

    root = Path(args.runs_root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory (give --runs-root)")
    path = RunsRoot(root).embedding_cache
    if path.exists():
        store = open_store(root)
        if args.clear or args.max_mb is not None:
            if args.max_mb is not None and args.max_mb < 0:
                raise ValueError("--max-mb must be 0 or more")
            gone = store.prune(0 if args.clear else int(args.max_mb * MB))
            print(f"Deleted {gone:,} cached embeddings.")
        rows = store.stats()
        print(f"Embeddings: {path} ({_size(path):.1f} MB on disk)")
        for model, precision, n, size in rows:
            print(f"  {n:>10,}  {model} ({precision}), {size / MB:.1f} MB")
        if not rows:
            print("  (empty)")
    else:
        print(f"Embeddings: none cached yet under {root}")
    _llm_replies(root)
    return 0


def _llm_replies(root: Path) -> None:
    from ragdash.llm.cache import LLMCache

    path = RunsRoot(root).llm_cache
    if not path.exists():
        print(f"LLM replies: none cached yet under {root}")
        return
    with LLMCache(path) as cache:
        print(f"LLM replies: {len(cache):,} in {path} ({_size(path):.1f} MB; kept: they cost "
              "calls)")
