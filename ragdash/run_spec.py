"""A finished run read through the specification it was made with.

`run_spec(run)` is the one typed view of the config a run keeps: run.json's `config`, migrated
to today's shape (`rundir.manifest.migrated_config`) and validated as a frozen `RunSpec`, keys
the run predates at their defaults (a change of default adds a migration: `SPEC_VERSION`),
tolerant of files that moved since it ran. `problem(run)` says why a run cannot be read, its
run.json or its config. The tables helpers pick a run's rows as its specification says: Score_IR
by matching method (`ir_scores`), and the answers, judgments and answers against the gold answers
one row per (question, system) at the generation budget (`frames.primary`; §2.3 of El Yagouby,
Chevallet & Gaussier 2024). Each is read through the run's reader, so a cached reader and its
memo follow every file read; the run view (`ragdash.view.RunView`) and the labels read them here.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from functools import lru_cache

import pandas as pd

from ragdash.analysis import reference as gold
from ragdash.analysis.frames import primary
from ragdash.config import ConfigError, RunSpec
from ragdash.rundir import MANIFEST, Run
from ragdash.rundir.manifest import ManifestError, migrated_config
from ragdash.rundir.reader import Stamp


@lru_cache(maxsize=256)
def _spec(config_json: str) -> RunSpec:
    """A config validated once: a job rewrites run.json on every progress step with the same
    config (a new stamp for `_SEEN`, not a new specification)."""
    return RunSpec.from_config(json.loads(config_json), saved=True)


_SEEN: OrderedDict[tuple[str, Stamp], RunSpec] = OrderedDict()
"""The specification of each run.json as it was at a stamp (the latest 256): a page asks for
it many times a rerun, and a rewritten run.json (a new file: `rundir.io`) has a new stamp."""
_LOCK = threading.Lock()  # the dashboard's sessions are threads of one server


def run_spec(run: Run) -> RunSpec:
    """The specification `run` was made with (read-only: it is frozen); ManifestError naming
    its run.json and the first invalid key when its config does not read as one."""
    stamp = run.reader.stamp(run.path / MANIFEST)
    key = (str(run.path), stamp)
    with _LOCK:
        if stamp is not None and (seen := _SEEN.get(key)) is not None:
            _SEEN.move_to_end(key)
            return seen
    cfg = migrated_config(run.manifest)
    try:
        spec = _spec(json.dumps(cfg, default=str))  # in its order: `systems` keeps it
    except ConfigError as exc:
        reason = f"cannot be read: config: {exc}"
        raise ManifestError(f"{run.path / MANIFEST} {reason}", f"{MANIFEST} {reason}") from None
    if stamp is not None:
        with _LOCK:
            _SEEN[key] = spec
            if len(_SEEN) > 256:
                _SEEN.popitem(last=False)
    return spec


def problem(run: Run) -> str | None:
    """Why `run` cannot be read (its run.json or its config: file and reason), None when it
    can."""
    try:
        run_spec(run)
    except ManifestError as exc:
        return str(exc)
    return None


def score_methods(run: Run) -> list[str]:
    """The Score_IR matching methods scored: the main one (`scoring.method`), then those of
    `scoring.also` in ir_scores_also's order."""
    also = run.table("ir_scores_also")
    extra = list(dict.fromkeys(also["method"])) if also is not None else []
    return list(dict.fromkeys([run_spec(run).scoring.method, *extra]))


def ir_scores(run: Run, method: str | None = None) -> pd.DataFrame:
    """Score_IR by one matching method: None or `scoring.method` gives ir_scores; another
    method of `scoring.also` its rows of ir_scores_also (without the method column).
    ValueError naming the methods scored otherwise."""
    if method is None or method == run_spec(run).scoring.method:
        return run.read("ir_scores")
    methods = score_methods(run)
    if method not in methods:
        raise ValueError(f"run {run.path} has no Score_IR by '{method}' (scored: "
                         f"{', '.join(methods)}; add it to scoring.also and re-score)")
    also = run.read("ir_scores_also")
    return also[also["method"] == method].drop(columns="method").reset_index(drop=True)


def budgets(run: Run) -> list[int]:
    """The budgets N scored: those of ir_scores, else the specification's."""
    ir = run.table("ir_scores")
    if ir is not None:
        return sorted(int(b) for b in ir["budget"].unique())
    return sorted(run_spec(run).budgets)


def answers(run: Run) -> pd.DataFrame | None:
    """answers.parquet, one row per (qid, system); None without answers."""
    return primary(run.table("answers"), run_spec(run).generation.budget)


def judgments(run: Run) -> pd.DataFrame | None:
    """judgments.parquet, one row per (qid, system) (the main budget, one judge model)."""
    return primary(run.table("judgments"), run_spec(run).generation.budget)


def reference(run: Run) -> pd.DataFrame | None:
    """Every answer against the gold answers (reference.parquet; computed from the answers when
    the run has none, or one older than its answers); None without answers."""
    reader = run.reader  # every file looked at through it, so a memo follows them
    stamp = reader.stamp(run.file("answers"))
    if stamp is None:
        return None
    saved = reader.stamp(run.file("reference"))
    if saved is not None and saved[1] >= stamp[1]:  # Stamp: (inode, mtime_ns, size)
        return run.read("reference")
    return gold.score_answers(run.read("answers"), run.read("examples"))


def main_reference(run: Run) -> pd.DataFrame | None:
    """`reference`, one row per (qid, system) at the generation budget."""
    return primary(reference(run), run_spec(run).generation.budget)
