"""`ragdash erag --run-dir R [--limit N] [--k K] [--metric M] [--dry-run]`: eRAG (Salemi &
Zamani, SIGIR 2024) on an existing run's retrievals, with the config saved in R (its `erag`
section, then these options)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.metrics import print_estimate, reasons
from ragdash.cli.options import add_llm_stage_options, stage_spec
from ragdash.erag.settings import METRICS
from ragdash.stages.base import Progress, no_progress

if TYPE_CHECKING:
    from ragdash.config import RunSpec


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `erag` on the `ragdash` subparsers."""
    p = sub.add_parser(
        "erag", help="eRAG: each retrieved chunk alone to the generator, scored against the "
                     "gold answers (LLM)",
        description="Give the generator each question with each of its top-k retrieved chunks "
                    "alone, score its output against the gold answers (the chunk's label), and "
                    "aggregate the labels per question and retriever with precision, MAP, MRR, "
                    "nDCG and hit at k (Salemi & Zamani, SIGIR 2024) into erag.parquet; the "
                    "labels go to erag_labels.parquet. Up to k LLM calls per question and "
                    "retriever (Score_IR needs none). Replies are cached: a re-run asks only "
                    "what is missing.")
    p.add_argument("--run-dir", required=True, help="run with retrieved.parquet")
    p.add_argument("--limit", type=int, help="judge the chunks of the first N questions")
    p.add_argument("--k", type=int, help="chunks judged per question and retriever (default: "
                                         "the config's erag.k, else each retriever's k; at "
                                         "most erag.max_k)")
    p.add_argument("--metric", choices=METRICS, help="the downstream metric that labels a "
                                                     "chunk (default: erag.metric, contains)")
    add_llm_stage_options(p, "erag.max_k=5")
    return p


def config(args: argparse.Namespace) -> RunSpec:
    """The run's saved config with eRAG switched on and this command's options."""
    return stage_spec(args, "erag", ("limit", "k", "metric"))


def run(args: argparse.Namespace, progress: Progress = no_progress) -> int:
    from ragdash.rundir import Run

    spec = config(args)
    if args.dry_run:
        from ragdash.planning import stage_estimate

        print_estimate("eRAG", *stage_estimate(Run(args.run_dir), spec, "erag"))
        return 0
    from ragdash.erag.summary import erag_summary
    from ragdash.stages.runner import run_on

    print_endpoints(spec, ("erag",))
    run_dir, counts = run_on(args.run_dir, "erag", progress, spec=spec)
    labels = run_dir.read("erag_labels")
    failed = labels["error"].notna()
    print(f"eRAG ({spec.erag.metric}) of {counts['questions']:,} questions: {counts['chunks']:,} "
          f"chunks judged; LLM calls: {counts['calls']:,} made, {counts['cached']:,} from the "
          f"reply cache; written to {run_dir.file('erag')}")
    means = erag_summary(run_dir.read("erag"), spec.compared).means
    print(means.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if failed.any():
        print(f"warning: {int(failed.sum()):,} calls failed and are labelled 0 "
              f"({reasons(labels.loc[failed, 'error'])}); run it again to retry them (finished "
              "calls come from the cache)", file=sys.stderr)
    return 0
