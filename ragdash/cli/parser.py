"""The `ragdash` argument parser: a sub-command per stage (and `run`) with the run options,
then the sub-commands that have their own module in ragdash.cli."""

from __future__ import annotations

import argparse
import sys

from ragdash.cli import (
    cache,
    estimate,
    evidence,
    job,
    labels,
    llm,
    metrics,
    reference,
    sweep,
    synth,
)
from ragdash.cli.options import add_run_options, glossary, stage_commands


def build_parser() -> argparse.ArgumentParser:
    """The parser of every sub-command, in the order `ragdash --help` lists them."""
    parser = argparse.ArgumentParser(
        prog="ragdash",
        description="Evaluate RAG retrieval by how much of each relevant part lands in the first "
                    "N tokens of the retrieved context.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in stage_commands().items():
        add_run_options(sub.add_parser(name, help=help_text, description=help_text,
                                       epilog=glossary(),
                                       formatter_class=argparse.RawDescriptionHelpFormatter))
    for module in (llm, estimate, reference, metrics, job, evidence, synth, cache, labels,
                   sweep):
        module.add_parser(sub)
    return parser


DEPRECATED = {"index": "chunk"}
"""Old sub-command names still accepted (hidden from the help), each with a note on stderr."""


def renamed(argv: list[str]) -> list[str]:
    """`argv` with a deprecated sub-command replaced by its new name (and a one-line note)."""
    if argv and argv[0] in DEPRECATED:
        new = DEPRECATED[argv[0]]
        print(f"ragdash: note: `ragdash {argv[0]}` is deprecated; use `ragdash {new}` (the "
              f"stage it runs is called {new})", file=sys.stderr)
        return [new, *argv[1:]]
    return argv
