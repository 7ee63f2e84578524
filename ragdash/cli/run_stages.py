"""`ragdash run` and the stage commands (`ragdash score`, ...): load the spec from the config
and the options, run the stages (or, with --dry-run, only those that call no LLM, then price
the rest) and print the summary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragdash.cli.endpoints import print_endpoints
from ragdash.cli.options import on_saved, overrides_from, stage_commands
from ragdash.cli.progress import Bars
from ragdash.cli.summary import print_summary
from ragdash.terminal import safe

if TYPE_CHECKING:
    from ragdash.config import RunSpec


def run(args: argparse.Namespace) -> int:
    """Run the stages `args.command` asks for (every configured stage for `run`)."""
    from ragdash.config import load_spec
    from ragdash.stages.runner import configured_stages, run_stages

    spec = load_spec(args.config, on_saved(args, overrides_from(args)))
    run_dir = Path(args.run_dir) if args.run_dir else Path(spec.runs_root) / spec.name
    stages = stage_commands()[args.command][0] or configured_stages(spec)
    if spec.systems and "retrieve" in stages:  # a bad file stops here, before any stage
        from ragdash.systems import read_all

        read_all(spec)
    if args.dry_run:
        return dry_run(spec, run_dir, stages, args.force, args.quiet)
    with Bars(args.quiet) as bars:
        print_endpoints(spec, stages)
        done = run_stages(spec, run_dir, stages, force=args.force, progress=bars)
    done.update(command=" ".join(["ragdash", *args.argv]))
    if "calibrate" in stages:
        from ragdash.labels import refresh

        refresh(done)  # labels added since calibrate last ran
    for issue in done.manifest.get("issues", {}).get("first", [])[:10]:
        print(f"warning: {safe(issue)}", file=sys.stderr)
    for name, stage in done.stages().items():
        for warning in stage.warnings:
            print(f"warning: stage {name}: {safe(warning['message'])}", file=sys.stderr)
    print_summary(done)
    return 0


def dry_run(spec: RunSpec, run_dir: Path, stages: Sequence[str], force: bool,
            quiet: bool) -> int:
    """Run the stages of `stages` that call no LLM, then print what the LLM stages would
    cost (calls, tokens, price, time)."""
    from ragdash.planning import dry_run as estimate
    from ragdash.stages.runner import dry_run_stages, run_stages

    todo = dry_run_stages(spec, run_dir, stages, force)
    with Bars(quiet) as bars:
        run = run_stages(spec, run_dir, todo, force=force, progress=bars)
    est = estimate(run, spec, retrieved="retrieve" in todo or "retrieve" not in stages,
                   stages=stages)
    print("Dry run, no LLM call made. The LLM stages would cost:")
    for stage, e in est.items():
        print(f"  {stage:>10}: {e}")
    print("(time is shown when a rate was measured in the LLM cache; prices: ragdash.llm.cost, "
          "override with RAGDASH_PRICES=prices.yaml)")
    return 0
