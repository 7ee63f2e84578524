"""Renaming and deleting run directories, with the checks a shared dashboard needs: a run name
is a plain folder name, only a run directory under the runs root is touched, nothing is
overwritten, a run that a process is working in (its lock held) is left alone."""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from ragdash.rundir.lock import RunLocked, locked
from ragdash.rundir.run import Run

RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""A run name: letters, digits, '.', '_' and '-', 64 at most, not starting with '.' or '-'."""


def check_name(name: str) -> str:
    if not RUN_NAME.match(name or ""):
        raise ValueError(f"'{name}' is not a valid run name: use letters, digits, '.', '_' and "
                         "'-' (64 at most, starting with a letter or digit)")
    return name


def _inside(run: Run, root: Path) -> None:
    path, root = run.path.resolve(), Path(root).resolve()
    if path.parent != root or not run.exists():
        raise ValueError(f"{run.path} is not a run directory under {root}")


@contextlib.contextmanager
def _idle(run: Run) -> Iterator[None]:
    """Hold the run's lock for the block; ValueError if a job or command is running in it."""
    try:
        with locked(run.path):
            yield
    except RunLocked as exc:
        raise ValueError(str(exc)) from None


def rename_run(run: Run, new_name: str, root: Path) -> Run:
    """Move a run to `root/new_name` and record the new id in its manifest (a run whose
    run.json cannot be read is refused before anything moves: ManifestError)."""
    _inside(run, root)
    _ = run.manifest
    target = Path(root) / check_name(new_name)
    if target.exists():
        raise ValueError(f"a run or file named '{new_name}' already exists under {root}")
    with _idle(run):
        run.path.rename(target)
    moved = Run(target)
    moved.update(id=new_name)
    return moved


def delete_run(run: Run, root: Path) -> None:
    """Remove a run directory and everything in it."""
    _inside(run, root)
    with _idle(run):
        shutil.rmtree(run.path)
