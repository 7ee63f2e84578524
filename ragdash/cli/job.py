"""`ragdash job`: run the job the dashboard queued in a run directory (ragdash.jobs spawns
`python -m ragdash.cli job`; progress goes to the run's run.json)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `job` on the `ragdash` subparsers."""
    job = sub.add_parser("job", help="run the job the dashboard queued in a run directory "
                         "(started by the dashboard; progress in its run.json)",
                         description="Run the stages (or the sweep) that the job record of "
                                     "--run-dir asks for, reporting progress there. The "
                                     "dashboard starts it; an LLM API key comes only in the "
                                     "RAGDASH_JOB_API_KEY environment variable.")
    job.add_argument("--run-dir", required=True, help="run directory (or sweep root)")
    job.add_argument("--lock-fd", type=int, help="the run's lock, handed over by the dashboard")
    return job


def run(args: argparse.Namespace) -> int:
    """Run the queued job at the dashboard's nice level."""
    from ragdash.jobs import NICE, run_job

    return run_job(args.run_dir, args.lock_fd, nice=NICE)
