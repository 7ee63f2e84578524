"""Which server paths the dashboard may read.

A dashboard user is anyone who can open its URL, so the dashboard reads only under allowed
roots: the runs root (`RAGDASH_RUNS_ROOT`, default `runs/`), the bundled `data/` folder, the
demo runs (`RAGDASH_DEMO_RUN`) and the folders an administrator names in `RAGDASH_DATA_ROOTS`
(joined by `os.pathsep`; none by default). Paths are compared after resolving symlinks, so a
link inside a root that points outside it is refused. The command line reads whatever its user
can read; only the dashboard goes through here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragdash.constants import BUNDLED_RUNS, PROJECT_ROOT

DATA_ROOTS_ENV = "RAGDASH_DATA_ROOTS"


def runs_root() -> Path:
    return Path(os.environ.get("RAGDASH_RUNS_ROOT") or PROJECT_ROOT / "runs")


def demo_paths() -> list[Path]:
    env = os.environ.get("RAGDASH_DEMO_RUN")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [PROJECT_ROOT / d for d in BUNDLED_RUNS]


def allowed_roots() -> list[Path]:
    """The folders the dashboard may read, resolved."""
    extra = [Path(p).expanduser() for p in os.environ.get(DATA_ROOTS_ENV, "").split(os.pathsep)
             if p.strip()]
    return [p.resolve() for p in (runs_root(), PROJECT_ROOT / "data", *demo_paths(), *extra)]


def inside(path: Path | str, root: Path | str) -> bool:
    """True when `path`, with every symlink resolved, is `root` or lies under it."""
    return Path(path).resolve().is_relative_to(Path(root).resolve())


class OutsideRoots(ValueError):
    """A path the dashboard may not read."""


def readable(path: Path | str) -> Path:
    """`path` resolved, when it lies under an allowed root; raises OutsideRoots otherwise."""
    resolved = Path(path).expanduser().resolve()
    if any(resolved.is_relative_to(r) for r in allowed_roots()):
        return resolved
    raise OutsideRoots(
        f"{path} is outside the folders this dashboard may read (the runs root, the bundled "
        f"data and the folders in {DATA_ROOTS_ENV}, symlinks resolved): upload the file on "
        f"the Data page, or ask whoever runs the dashboard to add its folder to "
        f"{DATA_ROOTS_ENV}")


def refused_inputs(dataset: dict) -> list[str]:
    """Why a run's dataset section may not be read from the dashboard: one message per path
    (`path`, `corpus`) outside the allowed roots."""
    out = []
    for field in ("path", "corpus"):
        if dataset.get(field):
            try:
                readable(dataset[field])
            except OutsideRoots as exc:
                out.append(f"dataset.{field}: {exc}")
    return out
