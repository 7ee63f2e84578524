"""What a stage is: its name, what it reads, its fingerprint, `run(ctx)` returning counts, and
for a stage that calls an LLM, which one (`llm(spec)`) and its calls as data (`plan(ctx)`).

A stage's key hashes the keys of the stages it reads (`needs`) and the config settings it uses
(`settings`); a stage whose key is unchanged and whose status is `done` is skipped. The dry run,
the endpoints printed before a run and every launcher's estimate are loops over the stages'
`llm` and `plan` (`ragdash.planning`), so adding an LLM stage touches its module and the
registry only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragdash.config import RunSpec
from ragdash.executors.base import Executor, LocalExecutor
from ragdash.rundir import Run

if TYPE_CHECKING:
    from ragdash.llm.cost import Estimate
    from ragdash.llm.plan import Priced
    from ragdash.llm.settings import LLMSettings


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
class PlanContext:
    """What a stage's `plan` reads: the run (its files so far), the typed specification,
    whether retrieval has run (`retrieved=False`: a plan made before it, with stand-in
    contexts of the full budget), the estimates of the stages planned before it by stage name
    (the judge is priced on the run's answers when generation sends nothing new), and a memo
    the plans of one dry run share."""

    run: Run
    spec: RunSpec
    retrieved: bool = True
    before: dict[str, Estimate] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)
    up_to_date: Callable[[str], bool] = lambda name: False
    """Whether a stage is up to date on the run (ingest's plan, which runs the evidence finder,
    has nothing to send once ingest is); the dry run's works the stage keys out on first ask."""


class NotPriced(ValueError):
    """A stage's plan cannot be made on this run yet; the message says why (e.g. retrieval not
    run)."""


def needs_retrieval(ctx: PlanContext) -> None:
    """NotPriced unless the run has its retrieved chunks (what eRAG, stress and the metrics
    read)."""
    if not ctx.run.has("retrieved"):
        raise NotPriced("retrieval not run")


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline.

    `needs`: the stages whose outputs it reads (their keys enter its key); `after`: stages that
    must be up to date first without being inputs (generation follows scoring so that a run with
    answers always has its scores). `settings(spec)` returns the specification's values the
    key hashes, as the plain JSON they had when the stage got them (a setting added later is
    left out at its default, so the runs made before it keep their keys).
    `switch`: the section whose `enabled` says whether `ragdash run` performs it; `section`:
    the section of its own settings (a launcher sets its `enabled` and `limit` there).
    `llm(spec, api_key=None)`: the LLM it calls under this spec, None when it calls none
    (retrieve calls one for mlq's sub-questions only); `part`: what its calls are called in an
    estimate and in the endpoint line printed before a run (default: its name).
    `plan(ctx)`: its calls as data (`ragdash.llm.plan.CallPlan`, or the metrics' steps), what a
    dry run prices; None when it would send nothing here (mlq after retrieval); `NotPriced`
    when it cannot be planned yet. Every stage with an `llm` has a `plan`
    (tests/test_stage_plan.py).
    `step`: the progress step whose items are the calls its plan prices, and `work`: what a
    job's time left calls those calls (`ragdash.jobs`: the estimate weighs that step's rate,
    and names the stages it counts ahead).
    `llm_stage`: it calls an LLM whenever it runs (a dry run stops before it and prices it
    instead); a stage whose `llm(spec)` is set otherwise (retrieve with mlq) is stopped before
    only when it is not up to date.
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
    section: str = ""
    llm: Callable[..., LLMSettings | None] | None = None  # (spec, api_key=None)
    plan: Callable[[PlanContext], Priced | None] | None = None
    part: str = ""
    step: str = ""
    work: str = ""
    llm_stage: bool = False  # it calls an LLM whenever it runs (a dry run stops before it)
    on_run_dir: bool = False  # `ragdash <name> --run-dir R` redoes it on R alone

    def __post_init__(self) -> None:
        if self.llm is not None and self.plan is None:
            raise TypeError(f"stage {self.name} calls an LLM (llm) but has no plan: the dry run "
                            "and every estimate price a stage by its plan")
        if self.llm_stage and self.llm is None:
            raise TypeError(f"stage {self.name} is an LLM stage but names no llm")

    def enabled(self, spec: RunSpec) -> bool:
        return not self.switch or bool(getattr(spec, self.switch).enabled)

    def uses_llm(self, spec: RunSpec) -> LLMSettings | None:
        """The LLM it calls under `spec` (None: none)."""
        return self.llm(spec) if self.llm is not None else None

    @property
    def priced_as(self) -> str:
        """What its calls are called in an estimate and an endpoint line."""
        return self.part or self.name

    @property
    def cli(self) -> str:
        """The `ragdash` subcommand that runs it (and what it needs)."""
        return self.command or self.name
