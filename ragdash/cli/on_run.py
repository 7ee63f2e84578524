"""`ragdash <stage> --run-dir R [--limit N] [--set KEY=VALUE] [--dry-run]` for a stage that works
on an existing run (`Stage.on_run_dir`) and has no module of its own here: made from the
registry, so a new LLM stage has its command, its dry run (its plan) and its endpoint line
without a line in ragdash.cli. The stages with their own report (metrics, erag, stress,
reference) keep their modules."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.metrics import print_estimate
from ragdash.cli.options import add_llm_stage_options, stage_spec
from ragdash.stages import Stage
from ragdash.stages.base import Progress, no_progress


def add_parser(sub: Any, stage: Stage) -> argparse.ArgumentParser:
    """Register `stage`'s command on the `ragdash` subparsers."""
    p = sub.add_parser(stage.cli, help=stage.about,
                       description=f"{stage.about[:1].upper()}{stage.about[1:]}, on an "
                                   "existing run, with the config saved there (its "
                                   f"`{stage.section}` section, then these options).")
    p.add_argument("--run-dir", required=True, help="the run")
    p.add_argument("--limit", type=int, help="only the first N questions")
    add_llm_stage_options(p, f"{stage.section}.limit=10")
    p.set_defaults(stage=stage.name)
    return p


def run(args: argparse.Namespace, progress: Progress = no_progress) -> int:
    """Run (or, with --dry-run, price) the stage on `--run-dir` and print its counts."""
    from ragdash.rundir import Run
    from ragdash.stages import STAGES
    from ragdash.stages.runner import run_on

    stage = STAGES[args.stage]
    spec = stage_spec(args, stage.section, ("limit",))
    if args.dry_run:
        from ragdash.planning import stage_estimate

        print_estimate(f"Stage {stage.name}", *stage_estimate(Run(args.run_dir), spec,
                                                              stage.name))
        return 0
    print_endpoints(spec, (stage.name,))
    done, counts = run_on(args.run_dir, stage.name, progress, spec=spec)
    print(f"{stage.name}: {json.dumps(counts, default=str)}; written to "
          + ", ".join(str(done.file(f)) for f in stage.writes))
    return 0
