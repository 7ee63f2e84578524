"""The Build page's sweep: several values of one or two settings give one run per combination
(`ragdash.sweep`, as `ragdash sweep --vary`), run in turn in a background job."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ragdash.sweep import Planned, parse_vary, pending, run_sweep
from ragdash.sweep import plan as plan_sweep
from ragdash.ui import jobs


def _without(overrides: dict, key: str) -> dict:
    """Dotted `overrides` without `key` and the keys under it (a varied key is set by the
    sweep, not the form)."""
    return {k: v for k, v in overrides.items() if k != key and not k.startswith(f"{key}.")}


def plan(overrides: dict, vary_texts: Sequence[str], root: Path) -> list[Planned]:
    """The combinations of the varied settings (`KEY=V1,V2` texts) over the form's settings,
    as runs under `root`; ConfigError names a bad key or value."""
    varies = [parse_vary(t) for t in vary_texts]
    base = {k: v for k, v in overrides.items() if k not in ("name", "runs_root")}
    for v in varies:
        base = _without(base, v.key)
        if v.key == "chunker.method":  # the form's parameters belong to its own method
            base = _without(base, "chunker.params")
    return plan_sweep(None, base, varies, runs_root=root)


def table(planned: Sequence[Planned]) -> pd.DataFrame:
    """One row per planned run: its name, the values it takes and what is left to do."""
    return pd.DataFrame([{"run": p.name, **{k: str(v) for k, v in p.values.items()},
                          "to do": ", ".join(pending(p)) or "nothing (up to date)"}
                         for p in planned])


def start(planned: Sequence[Planned], root: Path) -> jobs.Job:
    """Run the sweep in a background job registered under `root` (a reload reconnects)."""
    job = jobs.Job(root, (), runs=tuple(p.run_dir for p in planned))
    jobs.background(job, lambda: run_sweep(planned, progress=job.progress,
                                           say=job.log.append), f"ragdash-sweep-{root.name}")
    jobs.jobs()[str(root)] = job
    return job
