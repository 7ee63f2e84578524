"""`ragdash sweep`: one run per combination of varied config values (the cartesian product of
every `--vary KEY=V1,V2,…`), each in its own run directory named from its values under one runs
root, where the retrieval indexes and the LLM reply cache are shared (both are keyed by
content). A combination whose stages are all up to date is skipped without touching its run
directory, so a second sweep does no work. The leaderboard of the runs (mean Score_IR at N with
its interval over questions, the paper's §2.2 and Table 3.1) is printed at the end.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragdash.config import ConfigError, RunSpec, expand, load_config, load_spec, load_yaml
from ragdash.rundir import Run
from ragdash.stages import STAGES
from ragdash.stages.base import Progress, no_progress
from ragdash.stages.runner import configured_stages, llm_stages, requires, run_stages, stage_keys

Say = Callable[[str], None]


@dataclass(frozen=True)
class Vary:
    """One `--vary`: a dotted config key and the values it takes."""

    key: str
    values: tuple[Any, ...]


def parse_vary(text: str) -> Vary:
    """`chunker.method=semantic,recursive` -> Vary('chunker.method', ('semantic', 'recursive')).

    The values are read as a YAML flow sequence, so they are typed like YAML scalars (`5` an
    int, `0.5` a float, `null` None, `true` a bool) and a value holding a comma is quoted
    (`"a,b"`) or bracketed (`[100,500]`, a list)."""
    key, sep, rhs = text.partition("=")
    key = key.strip()
    if not sep or not key or not rhs.strip():
        raise ConfigError(f"--vary {text!r}: expected KEY=VALUE1,VALUE2,… (e.g. "
                          "chunker.method=semantic,recursive)")
    if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
        raise ConfigError(f"--vary {text!r}: '{key}' is not a dotted config key (e.g. "
                          "retrievers.params.bm25.k)")
    try:
        values = load_yaml(f"[{rhs}]")
    except yaml.YAMLError as exc:
        raise ConfigError(f"--vary {key}: cannot read the values {rhs!r} ({exc.problem})") \
            from None
    if not values:
        raise ConfigError(f"--vary {key}: no value given")
    if len({repr(v) for v in values}) != len(values):
        raise ConfigError(f"--vary {key}: a value is repeated in {rhs!r}")
    return Vary(key, tuple(values))


def _lookup(data: dict, key: str) -> bool:
    """Whether the dotted `key` is set in the nested dict `data`."""
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def short_key(key: str) -> str:
    """The key as a run name shows it: without `params`, without `retrievers.` before a
    retriever's name, without a trailing `method` (`chunker.method` -> `chunker`,
    `retrievers.params.bm25.k` -> `bm25.k`)."""
    parts = [p for p in key.split(".") if p != "params"]
    if parts[0] == "retrievers" and len(parts) > 2:
        parts = parts[1:]
    if len(parts) > 1 and parts[-1] == "method":
        parts = parts[:-1]
    return ".".join(parts)


def _slug(value: Any) -> str:
    if isinstance(value, list | tuple):
        text = "-".join(_slug(v) for v in value)
    elif isinstance(value, dict):
        text = "-".join(f"{k}-{_slug(v)}" for k, v in value.items())
    elif value is None or isinstance(value, bool):
        text = str(value).lower()
    else:
        text = str(value)
    text = re.sub(r"[^A-Za-z0-9.+]+", "-", text).strip("-.")
    return text[:60] or "empty"


def run_name(values: dict[str, Any]) -> str:
    """A readable, filesystem-safe directory name: `chunker-semantic_bm25.k-5`."""
    return "_".join(f"{short_key(k)}-{_slug(v)}" for k, v in values.items())


@dataclass(frozen=True)
class Planned:
    """One combination: its run directory, the values it varies and its validated config."""

    name: str
    run_dir: Path
    values: dict[str, Any]
    cfg: dict


def plan(config: str | Path | None, overrides: dict, varies: Sequence[Vary],
         runs_root: str | Path | None = None) -> list[Planned]:
    """Every combination's validated config, before anything runs: an unknown key or a bad
    value stops the sweep with the config's own error. `overrides` (the options of `ragdash
    run`) apply to every run; a key both varied and set by an option is refused."""
    if not varies:
        raise ConfigError("give at least one --vary KEY=VALUE1,VALUE2 (e.g. --vary "
                          "chunker.method=semantic,recursive)")
    keys = [v.key for v in varies]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"--vary: a key is varied twice ({', '.join(keys)})")
    for k in keys:
        if k in ("runs_root", "name") or _lookup(expand(overrides), k):
            raise ConfigError(f"--vary {k}: this key is set by another option of the sweep "
                              "(vary it or set it, not both)")
    base = load_spec(config, overrides)
    root = Path(runs_root) if runs_root else Path(base.runs_root) / f"{base.name}-sweep"
    out: list[Planned] = []
    for combo in itertools.product(*(v.values for v in varies)):
        values = dict(zip(keys, combo, strict=True))
        name = run_name(values)
        described = ", ".join(f"{k}={v}" for k, v in values.items())
        o = {**overrides, "runs_root": str(root), "name": name,
             "description": f"sweep {root.name}: {described}", **values}
        try:
            cfg = load_config(config, o)
        except ConfigError as exc:
            raise ConfigError(f"sweep combination {described}: {exc}") from None
        out.append(Planned(name, root / name, values, cfg))
    names = [p.name for p in out]
    for i, p in enumerate(out):
        if names.count(p.name) > 1:  # two values with the same slug: tell them apart
            name = f"{p.name}~{hashlib.sha1(repr(p.values).encode()).hexdigest()[:6]}"
            out[i] = Planned(name, root / name, p.values, {**p.cfg, "name": name})
    return out


def same_runs(planned: Sequence[Planned]) -> list[list[str]]:
    """Groups of combinations whose stages all have the same keys: a varied value that changes
    nothing (e.g. a parameter of a retriever the runs do not use)."""
    groups: dict[tuple, list[str]] = {}
    for p in planned:
        keys = stage_keys(p.cfg)
        groups.setdefault(tuple(keys[s] for s in configured_stages(p.cfg)), []).append(p.name)
    return [g for g in groups.values() if len(g) > 1]


def pending(p: Planned, stages: Sequence[str] | None = None) -> list[str]:
    """The stages `run_stages` would perform for this combination (none when up to date):
    those not done with the current key, with failed LLM calls to retry, or after one of
    those."""
    run, keys, out = Run(p.run_dir), stage_keys(p.cfg), []
    for name in stages or configured_stages(p.cfg):
        stage = STAGES[name]
        done = run.stage_done(name, keys[name])
        failed = stage.failed_calls(run) if stage.failed_calls and done else 0
        if not done or failed or set(requires(name)) & set(out):
            out.append(name)
    return out


REUSABLE = ("chunk", "retrieve", "score")
"""Stages whose whole output is their files (`Stage.writes`, no manifest field): a combination
takes them from an earlier one of the sweep whose stage has the same key (the same inputs and
settings) instead of computing them again."""


def _reuse(run: Run, name: str, key: str, donors: Sequence[Run]) -> Run | None:
    """Copy stage `name`'s files from the first donor that finished it with `key`; the donor,
    or None when there is none."""
    from ragdash.rundir import atomic_path

    donor = next((d for d in donors if d.path != run.path and d.stage_done(name, key)), None)
    if donor is None:
        return None
    for f in STAGES[name].writes:
        if donor.has(f):
            with atomic_path(run.file(f)) as tmp:
                shutil.copyfile(donor.file(f), tmp)
        else:
            run.file(f).unlink(missing_ok=True)  # e.g. MLQ's queries, absent without MLQ
    run.set_stage(name, **{**donor.stage(name), "reused_from": str(donor.path)})
    return donor


def _advance(p: Planned, stages: Sequence[str], donors: Sequence[Run], progress: Progress,
             say: Say) -> Run:
    """Bring one combination up to date stage by stage, as `run_stages` would (a stage after
    one that ran again runs again), taking a reusable stage's files from a donor with the same
    key."""
    keys, run, ran = stage_keys(p.cfg), Run(p.run_dir), set()
    todo = pending(p, stages)
    for name in stages:
        upstream_ran = bool(set(requires(name)) & ran)
        if name not in todo and not upstream_ran:
            continue
        if name in REUSABLE and run.exists() and (donor := _reuse(run, name, keys[name], donors)):
            say(f"    {name}: same inputs as {donor.path.name}, its files reused")
            continue
        run = run_stages(p.cfg, p.run_dir, [name], progress=progress,
                         force=upstream_ran and run.stage_done(name, keys[name]))
        ran.add(name)
    return run


def run_sweep(planned: Sequence[Planned], force: bool = False,
              progress: Progress = no_progress, dry_run: bool = False,
              announce: Callable[[dict, Sequence[str]], None] | None = None,
              command: str = "", say: Say = print) -> list[Run]:
    """Run every combination in turn; one that is up to date is skipped untouched, a stage with
    the same key as an earlier combination's takes its files (`REUSABLE`). With `dry_run`, only
    the stages before the LLM ones run and the LLM stages are estimated."""
    runs: list[Run] = []
    made, total = 0, len(planned)
    for i, p in enumerate(planned, 1):
        stages = configured_stages(p.cfg)
        if dry_run:
            stages = tuple(s for s in stages if s not in llm_stages())
        todo = list(stages) if force else pending(p, stages)
        head = f"[{i}/{total}] {p.name}"
        if not todo:
            say(f"{head}: up to date, skipped")
            runs.append(Run(p.run_dir))
            if dry_run:
                _estimate(p, say)
            continue
        say(f"{head}: running {', '.join(todo)}")
        if announce is not None:
            announce(p.cfg, todo)
        start = time.perf_counter()
        if force:
            run = run_stages(p.cfg, p.run_dir, stages, force=True, progress=progress)
        else:
            run = _advance(p, stages, runs, progress, say)
        run.update(sweep={"root": str(p.run_dir.parent), "values": p.values},
                   **({"command": command} if command else {}))
        say(f"{head}: done in {time.perf_counter() - start:.1f} s")
        runs.append(run)
        made += 1
        if dry_run:
            _estimate(p, say)
    say(f"Sweep: {total} run(s), {made} made, {total - made} up to date (skipped).")
    return runs


def _estimate(p: Planned, say: Say) -> None:
    from ragdash.planning import dry_run

    for stage, e in dry_run(Run(p.run_dir), RunSpec.from_config(p.cfg)).items():
        say(f"    {stage:>10}: {e}")


def print_leaderboard(runs: Sequence[Run], budget: int | None = None, say: Say = print) -> None:
    """The leaderboard of the runs (one per dataset, should the sweep vary the dataset), its
    verdict and each run's best retriever."""
    from ragdash.analysis import frames
    from ragdash.analysis.system_means import format_board
    from ragdash.view import RunsView
    from ragdash.view import leaderboard as lb

    scored = {str(r.path): r for r in runs if r.has("ir_scores")}
    for group in lb.group_by_dataset(scored).values():
        try:
            comp = lb.compare_runs(group)
        except lb.NotComparable as exc:
            say(f"\nNo leaderboard: {exc}")
            continue
        n = budget if budget in comp.budgets else frames.default_budget(comp.budgets)
        if budget is not None and budget != n:
            say(f"note: N = {budget} is not a budget every run scored; ranking at N = {n}")
        board = lb.leaderboard(comp, n)
        say("\n" + lb.format_board(comp, board, n))
        say("\n" + lb.verdict(comp, board, n)["text"])
        best = lb.best_per_run(board, comp)
        if len(best) > 1:
            say("Each run with its best retriever: " + "; ".join(
                f"{r['name']} {r['score']:.3f} ({r['retriever']})"
                for r in best.to_dict("records")))
        signals = RunsView(group).signal_board(n)
        if len(signals.signals) > 1:  # answers to judge them by: every signal per system
            say("\n" + format_board(signals, name=comp.name))


def main(args: Any, overrides: dict, progress: Progress = no_progress,
         announce: Callable[[dict, Sequence[str]], None] | None = None) -> int:
    """`ragdash sweep` once the CLI has parsed its options (`overrides`: those of `ragdash
    run`, applied to every combination)."""
    if getattr(args, "run_dir", None):
        raise ConfigError("ragdash sweep makes one run directory per combination under "
                          "--runs-root; --run-dir does not apply")
    varies = [parse_vary(v) for v in args.vary or []]
    planned = plan(args.config, overrides, varies, args.runs_root)
    print(f"Sweep: {len(planned)} run(s) under {planned[0].run_dir.parent} "
          f"({' x '.join(f'{len(v.values)} {v.key}' for v in varies)}):")
    for p in planned:
        print(f"  {p.name}")
    for group in same_runs(planned):
        print(f"warning: {', '.join(group)} would be the same run (a varied value changes "
              "nothing they compute)")
    runs = run_sweep(planned, force=args.force, progress=progress, dry_run=args.dry_run,
                     announce=announce, command=" ".join(["ragdash", *getattr(args, "argv", [])]))
    if not args.dry_run:
        print_leaderboard(runs, args.leaderboard_budget)
    return 0
