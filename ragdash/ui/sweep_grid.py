"""The Build page's sweep: several values of one or two settings give one run per combination
(`ragdash.sweep`, as `ragdash sweep --vary`), run in turn by one job process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ragdash import jobs
from ragdash.config import expand
from ragdash.sweep import Planned, parse_vary, pending
from ragdash.sweep import plan as plan_sweep
from ragdash.ui import paths


def _without(overrides: dict, key: str) -> dict:
    """Dotted `overrides` without `key` and the keys under it (a varied key is set by the
    sweep, not the form)."""
    return {k: v for k, v in overrides.items() if k != key and not k.startswith(f"{key}.")}


def plan(overrides: dict, vary_texts: Sequence[str], root: Path) -> list[Planned]:
    """The combinations of the varied settings (`KEY=V1,V2` texts) over the form's settings,
    as runs under `root`; ConfigError names a bad key or value, `paths.OutsideRoots` a value
    or a run that names a path outside the dashboard's allowed roots (checked before any
    value is read)."""
    varies = [parse_vary(t) for t in vary_texts]
    _check_paths([expand({v.key: value}) for v in varies for value in v.values])
    base = {k: v for k, v in overrides.items() if k not in ("name", "runs_root")}
    for v in varies:
        base = _without(base, v.key)
        if v.key == "chunker.method":  # the form's parameters belong to its own method
            base = _without(base, "chunker.params")
    planned = plan_sweep(None, base, varies, runs_root=root)
    _check_paths([p.cfg for p in planned])
    return planned


def _check_paths(configs: Sequence[dict]) -> None:
    """`paths.OutsideRoots` with every refusal of `configs` (`paths.refused_config`)."""
    refused = list(dict.fromkeys(m for c in configs for m in paths.refused_config(c)))
    if refused:
        raise paths.OutsideRoots("; ".join(refused))


def table(planned: Sequence[Planned]) -> pd.DataFrame:
    """One row per planned run: its name, the values it takes and what is left to do."""
    return pd.DataFrame([{"run": p.name, **{k: str(v) for k, v in p.values.items()},
                          "to do": ", ".join(pending(p)) or "nothing (up to date)"}
                         for p in planned])


def start(planned: Sequence[Planned], root: Path, api_key: str | None = None) -> jobs.Status:
    """Run the sweep as a job process that reports in `root/sweep.json` (`RunLocked` when
    `root` is already being swept; `paths.OutsideRoots` when one names a path outside the
    allowed roots). `api_key`, typed by the user, reaches the process in its environment
    only."""
    _check_paths([p.cfg for p in planned])
    return jobs.spawn(root, "sweep", planned=planned, api_key=api_key)
