"""`ragdash stress --run-dir R [--limit N] [--chunks M] [--set KEY=VALUE] [--dry-run]`: the
run's generator answers contexts built from its own chunks with known relevance (RGB's noise
robustness and negative rejection, and where the evidence stands), with the config saved in R
(its `stress` section, then these options)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.metrics import print_estimate
from ragdash.cli.options import add_llm_stage_options, stage_spec
from ragdash.stages.base import Progress, no_progress

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.stress.summary import Summary


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `stress` on the `ragdash` subparsers."""
    p = sub.add_parser(
        "stress", help="accuracy of the run's generator against controlled evidence",
        description="Build contexts from an existing run's chunks whose relevance is known: "
                    "each question's relevant chunks with the retrievers' own misses as noise "
                    "at noise ratios 0 to 1, and with the evidence first, in the middle or "
                    "last; the run's generator answers each (RGB, Chen et al. AAAI 2024). "
                    "Writes stress.parquet: accuracy per noise ratio and position, the "
                    "rejection rate without evidence, and each context's Score_IR. Replies "
                    "are cached: a re-run asks only what is missing.")
    p.add_argument("--run-dir", required=True, help="run with retrieved.parquet")
    p.add_argument("--limit", type=int, help="test the first N questions that have evidence "
                                             "(default: the config's stress.limit, 10)")
    p.add_argument("--chunks", type=int, help="chunks per context (default 5)")
    add_llm_stage_options(p, "stress.positions=first,last")
    return p


def config(args: argparse.Namespace) -> RunSpec:
    """The run's saved config with the stress test switched on and this command's options."""
    return stage_spec(args, "stress", ("limit", "chunks"))


def run(args: argparse.Namespace, progress: Progress = no_progress) -> int:
    from ragdash.rundir import Run

    spec = config(args)
    if args.dry_run:
        from ragdash.planning import stage_estimate

        print_estimate("The controlled contexts",
                       *stage_estimate(Run(args.run_dir), spec, "stress"))
        return 0
    from ragdash.stages.runner import run_on
    from ragdash.stress.summary import summary

    print_endpoints(spec, ("stress",))
    run_dir, _ = run_on(args.run_dir, "stress", progress, spec=spec)
    table = run_dir.read("stress")
    if table.empty:
        print("ragdash: error: stress: no question has a chunk holding a relevant part: "
              "nothing to control", file=sys.stderr)
        return 2
    failed = int(table["error"].notna().sum())
    print(f"{table['qid'].nunique():,} questions, {len(table):,} controlled contexts"
          + (f", {failed:,} failed calls kept apart" if failed else "")
          + f"; written to {run_dir.file('stress')}")
    print(report(summary(table)))
    if failed:
        print("warning: run it again to retry the failed calls (finished calls come from the "
              "cache)", file=sys.stderr)
    return 0


def report(s: Summary) -> str:
    """The summary as the terminal shows it: accuracy per noise ratio and per position with
    Wilson intervals, and the rejection rate without evidence."""
    lines = ["Accuracy (answer contains a gold answer) by noise ratio:"]
    lines += [f"  {r:>4.0%} noise: {x.accuracy:6.1%}  [{x.lo:.0%}–{x.hi:.0%}]  n={int(x.n)}"
              for r, x in s.by_ratio.iterrows()]
    if len(s.by_position):
        lines.append("By where the evidence stands:")
        lines += [f"  {p:>6}: {x.accuracy:6.1%}  [{x.lo:.0%}–{x.hi:.0%}]  n={int(x.n)}"
                  for p, x in s.by_position.iterrows()]
    if len(s.by_parts):
        lines.append("With one part's evidence, and with every part's (RGB's integration):")
        lines += [f"  {p:>9}: {x.accuracy:6.1%}  [{x.lo:.0%}–{x.hi:.0%}]  n={int(x.n)}"
                  for p, x in s.by_parts.iterrows()]
    if s.rejection is not None:
        lo, hi = s.rejection_ci
        lines.append(f"Rejection rate with no evidence (noise only): {s.rejection:.1%} "
                     f"[{lo:.0%}–{hi:.0%}], n={s.rejection_n}")
    return "\n".join(lines)
