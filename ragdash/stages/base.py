"""What a stage is: its name, what it reads, its fingerprint, and `run(ctx)` returning counts.

A stage's key hashes the keys of the stages it reads (`needs`) and the config settings it uses
(`settings`); a stage whose key is unchanged and whose status is `done` is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ragdash.config import RunSpec
from ragdash.executors.base import Executor, LocalExecutor
from ragdash.rundir import Run


class Progress(Protocol):
    """One progress protocol for every stage: (message, done, total)."""

    def __call__(self, message: str, done: int, total: int, /) -> None: ...


def no_progress(message: str, done: int, total: int, /) -> None:
    """The progress callback that reports nothing."""


@dataclass(frozen=True)
class StageContext:
    """What a stage runs with: the run directory, the typed run specification (`run` reads its
    fields; the key is hashed from its plain dump, `Stage.settings`), its key, progress, and
    an API key given for this run only (never written: not in the config, the environment or
    the manifest), and the executor that runs its per-batch work (`ragdash.executors`)."""

    run: Run
    spec: RunSpec
    key: str
    progress: Progress = no_progress
    api_key: str | None = field(default=None, repr=False)
    executor: Executor = field(default_factory=LocalExecutor)


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline.

    `needs`: the stages whose outputs it reads (their keys enter its key); `after`: stages that
    must be up to date first without being inputs (generation follows scoring so that a run with
    answers always has its scores). `settings(spec)` returns the specification's values the
    key hashes, as the plain JSON they had when the stage got them (a setting added later is
    left out at its default, so the runs made before it keep their keys).
    `switch`: the section whose `enabled` says whether `ragdash run` performs it.
    `llm`: whether it calls an LLM on the answers (a dry run estimates it instead).
    `calls_llm(spec)`: whether a stage that is not an LLM stage calls one under this spec
    (retrieve, for mlq's sub-questions): a dry run stops before it unless it is up to date.
    `on_run_dir`: its `ragdash` sub-command works on an existing run (`--run-dir`, with the
    config saved there) instead of running its chain from a config (`runner.run_on`); it reads
    the run's files only (a saved config too old to validate gives it the default spec).
    `failed_calls(run)`: LLM calls of its last run that ended in errors (a re-run retries them).
    """

    name: str
    about: str
    needs: tuple[str, ...]
    settings: Callable[[RunSpec], tuple]
    run: Callable[[StageContext], dict]
    command: str = ""
    after: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    switch: str = ""  # the config section whose `enabled` turns it on (always on if none)
    failed_calls: Callable[[Run], int] | None = None
    llm: bool = False  # it calls an LLM on the answers (a dry run stops before it)
    calls_llm: Callable[[RunSpec], bool] | None = None  # it calls one under this spec
    on_run_dir: bool = False  # `ragdash <name> --run-dir R` redoes it on R alone

    def enabled(self, spec: RunSpec) -> bool:
        return not self.switch or bool(getattr(spec, self.switch).enabled)

    @property
    def cli(self) -> str:
        """The `ragdash` subcommand that runs it (and what it needs)."""
        return self.command or self.name
