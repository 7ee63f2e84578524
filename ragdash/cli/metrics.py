"""`ragdash metrics --run-dir R [--use a,b] [--limit N] [--dry-run]`: RAGAS's and RAGChecker's
metrics of an existing run's answers, with the config saved in R (its `metrics` section,
then these options)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.options import add_llm_stage_options, stage_spec
from ragdash.stages.base import Progress, no_progress
from ragdash.terminal import safe

if TYPE_CHECKING:
    import pandas as pd

    from ragdash.config import RunSpec
    from ragdash.llm.cost import Estimate


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `metrics` on the `ragdash` subparsers."""
    p = sub.add_parser(
        "metrics", help="RAGAS and RAGChecker metrics of a run's answers, with an LLM",
        description="Measure every answer of an existing run with RAGAS's metrics "
                    "(faithfulness, answer relevancy, context precision and recall) and "
                    "RAGChecker's claim-level ones (claim precision/recall/F1, hallucination, "
                    "...) into metrics.parquet, with the LLM of metrics.llm (default: the "
                    "judge's). Replies are cached: a re-run asks only what is missing.")
    p.add_argument("--run-dir", required=True, help="run with answers.parquet")
    p.add_argument("--use", help="comma-separated metrics, or ragas, ragchecker, all (default: "
                                 "the config's metrics.use)")
    p.add_argument("--limit", type=int, help="measure the answers to the first N questions")
    add_llm_stage_options(p, "metrics.llm.model=qwen")
    return p


def config(args: argparse.Namespace) -> RunSpec:
    """The run's saved config with the metrics switched on and this command's options."""
    return stage_spec(args, "metrics", ("use", "limit"))


def run(args: argparse.Namespace, progress: Progress = no_progress) -> int:
    from ragdash.rundir import Run

    spec = config(args)
    if args.dry_run:
        from ragdash.planning import stage_estimate

        print_estimate("The metrics", *stage_estimate(Run(args.run_dir), spec, "metrics"),
                       "(a lower bound: correction rounds after unreadable replies are not "
                       "counted)")
        return 0
    from ragdash.metrics.evaluate import NO_ANSWER
    from ragdash.stages.runner import run_on

    print_endpoints(spec, ("metrics",))
    run_dir, counts = run_on(args.run_dir, "metrics", progress, spec=spec)
    table = run_dir.read("metrics")
    failed = table["error"].notna() & (table["error"] != NO_ANSWER)
    measured = int((table["error"].isna()
                    & table[[m for m in spec.metrics.use if m in table]].notna().any(axis=1)
                    ).sum())
    why = reasons(table.loc[failed, "error"])
    if failed.any() and not measured:
        print(f"ragdash: error: metrics: no answer measured: the LLM steps of all "
              f"{int(failed.sum()):,} answers to measure failed ({why}); written to "
              f"{run_dir.file('metrics')} with the errors. Fix the cause (the server, model or "
              "API key) and run again: finished calls come from the cache", file=sys.stderr)
        return 2
    print(f"{len(table):,} answers: {measured:,} measured with {counts['calls']:,} LLM calls"
          + (f"; {int(failed.sum()):,} with a failed step, kept apart (NaN): {why}"
             if failed.any() else "") + f"; written to {run_dir.file('metrics')}")
    for name, mean in counts["means"].items():
        print(f"  {name:>36}: {mean:.3f}")
    if failed.any():
        print("warning: run it again to retry the failed steps (finished calls come from the "
              "cache)", file=sys.stderr)
    return 0


def print_estimate(what: str, est: Estimate, cached: int, caveat: str = "") -> None:
    """A dry run's report: what `what` would cost, `caveat`, and the calls the reply cache
    answers (`cached`)."""
    print(f"Dry run, no LLM call made. {what} would cost:\n  {est}"
          + (f"\n{caveat}" if caveat else ""))
    if cached:
        print(f"{cached:,} more calls are answered by the reply cache: a run does not send "
              "them again")


def reasons(errors: pd.Series, most: int = 3) -> str:
    """The commonest errors of `errors` (answers' failed steps), each with how many answers it
    ended, then how many other errors there were; made safe for the terminal."""
    counted = errors.astype(str).value_counts()
    shown = [f"{safe(text, 300)} ({n:,} answer{'s' if n != 1 else ''})"
             for text, n in counted.head(most).items()]
    if len(counted) > most:
        shown.append(f"and {len(counted) - most:,} other error(s)")
    return "; ".join(shown)
