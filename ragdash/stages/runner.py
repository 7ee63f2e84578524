"""Runs stages over a run directory in the order of what they need; the CLI, the dry run and
the dashboard's jobs all call `run_stages`.

A stage whose key is unchanged and whose status is `done` is skipped unless forced, or unless
some of its LLM calls ended in errors last time (they are retried; finished calls come from the
LLM cache). A stage that runs makes every stage after it that depends on it run too.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragdash import embeddings
from ragdash.config import SPEC_VERSION, ConfigError, RunSpec, fingerprint, saved_spec
from ragdash.executors import Executor, make_executor
from ragdash.exit_watch import watched
from ragdash.rundir import FILES, MANIFEST, Run
from ragdash.rundir.lock import locked
from ragdash.stages import REGISTRY, STAGES
from ragdash.stages.base import Progress, StageContext, no_progress

log = logging.getLogger("ragdash")


def requires(name: str) -> list[str]:
    """Every stage that must be up to date before `name` (transitively), in registry order."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        for up in (*STAGES[todo[-1]].needs, *STAGES[todo.pop()].after):
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return [s.name for s in REGISTRY if s.name in seen]


def chain(name: str) -> tuple[str, ...]:
    """`name` and everything it requires: what `ragdash <its command>` runs."""
    return (*requires(name), name)


def stage_keys(spec: RunSpec | Mapping[str, Any]) -> dict[str, str]:
    """The key of every stage: the keys of the stages it reads, then its own settings."""
    spec = typed(spec)[0]
    keys: dict[str, str] = {}
    for s in REGISTRY:
        keys[s.name] = fingerprint(*(keys[n] for n in s.needs), *s.settings(spec))
    return keys


def configured_stages(spec: RunSpec | Mapping[str, Any]) -> tuple[str, ...]:
    """The stages `ragdash run` performs: retrieval always, LLM stages when enabled."""
    spec = typed(spec)[0]
    return tuple(s.name for s in REGISTRY if s.enabled(spec))


def llm_stages() -> tuple[str, ...]:
    """The stages that call an LLM on the answers or read what one wrote (a dry run stops
    before them)."""
    return tuple(s.name for s in REGISTRY
                 if s.llm_stage or any(STAGES[up].llm_stage for up in requires(s.name)))


def dry_run_stages(spec: RunSpec | Mapping[str, Any], run_dir: str | Path, stages: Iterable[str],
                   force: bool = False) -> tuple[str, ...]:
    """The stages a dry run performs, of `stages`: none that calls an LLM (`llm_stages`, and a
    stage whose `llm(spec)` is set under this spec, as retrieve with mlq, unless it and what it
    requires are up to date and not forced) and none after one."""
    spec = typed(spec)[0]
    keys = stage_keys(spec)
    run = Run(run_dir)
    stop = set(llm_stages())
    for s in REGISTRY:
        if s.name in stop or s.uses_llm(spec) is None:
            continue
        if force or not all(run.stage_done(n, keys[n]) for n in chain(s.name)):
            stop |= {s.name, *(t.name for t in REGISTRY if s.name in requires(t.name))}
    return tuple(s for s in stages if s not in stop)


def typed(cfg: RunSpec | Mapping[str, Any]) -> tuple[RunSpec, dict]:
    """The specification and the plain config of either: the stages and their keys read the
    specification; the manifest keeps the plain config as given."""
    if isinstance(cfg, RunSpec):
        return cfg, cfg.to_config()
    return RunSpec.from_config(cfg), dict(cfg)


def run_stages(cfg: RunSpec | dict, run_dir: str | Path, stages: Iterable[str] | None = None,
               force: bool = False, progress: Progress = no_progress,
               api_key: str | None = None, executor: Executor | None = None) -> Run:
    """Run the given stages (default: every configured one) in registry order, skipping finished
    ones whose inputs are unchanged. `cfg`: the run's specification or its plain config.
    `api_key`: for OpenAI-compatible backends, kept in memory only (else the backend reads its
    environment variable). `executor`: where the stages' batch work runs (default: the config's
    `executor` section, closed at the end). The run's lock is held throughout: `RunLocked` if
    another process is running stages there."""
    spec, cfg = typed(cfg)
    wanted = set(configured_stages(spec) if stages is None else stages)
    unknown = wanted - set(STAGES)
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(sorted(unknown))} "
                         f"(stages: {', '.join(STAGES)})")
    with locked(run_dir):  # RunLocked when another process runs stages there
        return _locked_run(spec, cfg, Run(run_dir), wanted, force, progress, api_key, executor)


def _locked_run(spec: RunSpec, cfg: dict, run: Run, wanted: set[str], force: bool,
                progress: Progress, api_key: str | None, executor: Executor | None) -> Run:
    """`run_stages` once the run's lock is held."""
    run.create(cfg, SPEC_VERSION)
    keys = stage_keys(spec)
    own = executor is None
    executor = make_executor(spec.executor) if executor is None else executor
    # a library that ends the process outright (Ray, when its node dies) is reported anyway
    watch = contextlib.nullcontext() if executor.in_process else watched(run.path)
    try:
        with embeddings.configured(spec.runs_root, spec.embeddings.precision,
                                   spec.embeddings.cache), watch:  # for every stage
            _run(spec, run, wanted, keys, force, progress, api_key, executor)
    except BaseException:
        if own:  # the stage's error is the one to report, not a failure to close after it
            _close_quietly(executor)
        raise
    if own:
        executor.close()
    return run


def _close_quietly(executor: Executor) -> None:
    """Close an executor after a failure, logging (not raising) an error in closing (e.g. Ray
    after its node died)."""
    try:
        executor.close()
    except Exception as exc:  # noqa: BLE001 (any library error; the failure is reported)
        log.warning("closing the %s executor after the failure also failed: %s",
                    executor.name, exc)


def run_on(run_dir: str | Path, name: str, progress: Progress = no_progress,
           spec: RunSpec | None = None) -> tuple[Run, dict]:
    """Redo one stage (`Stage.on_run_dir`) on an existing run, with the config saved there (or
    `spec`, e.g. that config with the stage's own options), from the files the stages before it
    wrote, whatever their keys; it is recorded with the key that config gives it. Returns the
    run and the stage's counts."""
    run = Run(run_dir)
    if not run.exists():
        raise FileNotFoundError(f"{run.path} is not a run directory (no {MANIFEST}): give "
                                "--run-dir a run made by `ragdash run`")
    stage = STAGES[name]
    for up in stage.needs:
        for f in STAGES[up].writes:
            if not run.has(f) and not FILES[f].conditional:
                raise FileNotFoundError(f"run {run.path} has no {run.file(f).name}, which stage "
                                        f"{name} reads: run `ragdash {STAGES[up].cli}` first")
    try:
        spec = saved_spec(run.manifest) if spec is None else spec
        key = stage_keys(spec)[name]
    except ConfigError:  # a config older than the specification: such a stage reads the run's
        spec, key = RunSpec(), ""  # files, not its settings; recorded, `ragdash run` redoes it
    with locked(run.path), run.running(name, key) as counts:
        counts.update(stage.run(StageContext(run, spec, key, progress)))
    return run, counts


def _run(spec: RunSpec, run: Run, wanted: set[str], keys: dict[str, str], force: bool,
         progress: Progress, api_key: str | None, executor: Executor) -> None:
    """The stage loop of `run_stages`."""
    ran: set[str] = set()
    for stage in REGISTRY:
        name = stage.name
        if name not in wanted:
            continue
        ups = requires(name)
        for up in ups:
            if up not in wanted and not run.stage_done(up, keys[up]):
                raise RuntimeError(f"stage {name} needs stage {up} to be up to date in "
                                   f"{run.path}: run `ragdash {STAGES[up].cli}` (or `ragdash "
                                   "run`) first")
        done = run.stage_done(name, keys[name])
        failed = stage.failed_calls(run) if stage.failed_calls and done else 0
        if not force and done and not failed and not ran & set(ups):
            log.info("stage %s: up to date, skipped (use --force to redo)", name)
            progress(f"{name}: up to date", 1, 1)
            continue
        if failed and not force and not ran & set(ups):
            log.warning("stage %s: %d call(s) ended in errors last time; retrying them "
                        "(finished calls come from the LLM cache)", name, failed)
        if not ran and not executor.in_process:
            executor.workers()  # connect first: an unreachable cluster stops before any work
        ran.add(name)
        with run.running(name, keys[name]) as counts:
            counts.update(stage.run(StageContext(run, spec, keys[name], progress, api_key,
                                                 executor)))
