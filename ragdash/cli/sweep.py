"""`ragdash sweep`: one run per combination of varied config values, then a leaderboard
(the work is ragdash.sweep's; this is its command line)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.options import add_run_options, overrides_from
from ragdash.cli.progress import Bars


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `sweep` (every option of `ragdash run`, and --vary) on the subparsers."""
    sweep = sub.add_parser(
        "sweep", help="one run per combination of varied config values, then a leaderboard",
        description="Make one run per combination of the --vary values (cartesian product), "
                    "each in its own directory under --runs-root, sharing indexes and caches; "
                    "finished runs are skipped. Every option of `ragdash run` applies to all.",
        epilog="example: ragdash sweep --config configs/paper.yaml --limit 50 --retrievers bm25 "
               "--vary chunker.method=semantic,recursive --vary retrievers.params.bm25.k=5,10 "
               "--runs-root runs/sweep1", formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(sweep)
    sweep.add_argument("--vary", action="append", required=True, metavar="KEY=V1,V2,...",
                       help="a dotted config key and its values, read as YAML (repeatable)")
    sweep.add_argument("--runs-root", help="where the runs go (default: <runs_root>/<config "
                                           "name>-sweep); indexes and caches are shared there")
    sweep.add_argument("--leaderboard-budget", type=int, metavar="N",
                       help="rank the runs at this token budget (default: 1000 or the largest)")
    return sweep


def run(args: argparse.Namespace) -> int:
    """Run the sweep with progress bars, saying where each run's LLM calls go."""
    from ragdash.config import RunSpec
    from ragdash.sweep import main as sweep

    def announce(cfg: dict, stages: Sequence[str]) -> None:
        print_endpoints(RunSpec.from_config(cfg), stages)

    with Bars(args.quiet) as bars:
        return sweep(args, overrides_from(args), bars, announce)
