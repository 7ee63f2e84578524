"""The `ragdash` argument parser: a sub-command per stage (and `run`) with the run options,
then the sub-commands that have their own module in ragdash.cli; each sets `args.run`."""

from __future__ import annotations

import argparse
import sys

from ragdash.cli import (
    cache,
    counterfactual,
    erag,
    estimate,
    evidence,
    job,
    labels,
    llm,
    metrics,
    on_run,
    reference,
    run_stages,
    stress,
    sweep,
    synth,
)
from ragdash.cli.options import add_run_options, glossary, stage_commands
from ragdash.cli.progress import with_bars
from ragdash.stages import REGISTRY

COMMANDS = (llm, estimate, reference, metrics, erag, stress, job, evidence, synth, cache,
            labels, sweep, counterfactual)
"""The sub-commands with their own module (`add_parser` registers it, `run` runs it), in the
order `ragdash --help` lists them after the stage commands."""
WITH_BARS = (evidence, synth, metrics, erag, stress, counterfactual)
"""Those whose `run` takes progress bars."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every sub-command, in the order `ragdash --help` lists them."""
    parser = argparse.ArgumentParser(
        prog="ragdash",
        description="Evaluate RAG retrieval by how much of each relevant part lands in the first "
                    "N tokens of the retrieved context.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in stage_commands().items():
        stage = sub.add_parser(name, help=help_text, description=help_text, epilog=glossary(),
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        add_run_options(stage)
        stage.set_defaults(run=run_stages.run)
    for module in COMMANDS:
        module.add_parser(sub).set_defaults(
            run=with_bars(module.run) if module in WITH_BARS else module.run)
    own = {module.__name__.rpartition(".")[2] for module in COMMANDS}
    for stage in REGISTRY:  # a stage on an existing run without its own module: made here
        if stage.on_run_dir and stage.cli not in own:
            on_run.add_parser(sub, stage).set_defaults(run=with_bars(on_run.run))
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
