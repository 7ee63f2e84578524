"""`ragdash reference`: score an existing run's answers against the dataset's gold answers
(SQuAD exact match and token F1, and whether an answer contains a gold answer); no LLM."""

from __future__ import annotations

import argparse
from typing import Any

from ragdash.cli.summary import print_reference


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `reference` on the `ragdash` subparsers."""
    ref = sub.add_parser("reference", help="score a run's answers against the gold answers "
                         "(exact match, token F1, contains); no LLM",
                         description="Score every answer of an existing run against the "
                                     "dataset's gold answers (SQuAD exact match and token F1, "
                                     "the maximum over the gold answers, and whether it contains "
                                     "one) into reference.parquet. No LLM call; `ragdash run` "
                                     "does it too whenever it generates answers.")
    ref.add_argument("--run-dir", required=True, help="run with answers.parquet")
    return ref


def run(args: argparse.Namespace) -> int:
    """Run the reference stage on `--run-dir` and print its means per system."""
    from ragdash.stages.runner import run_on

    done, counts = run_on(args.run_dir, "reference")
    print_reference(done)
    print(f"\n{counts['scored']:,} of {counts['answers']:,} answers scored (the others' "
          f"questions have no gold answer); written to {done.file('reference')}")
    return 0
