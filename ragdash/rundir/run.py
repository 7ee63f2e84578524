"""A run directory on disk: its manifest, its files (declared in `files.FILES`), its stages.

Every file is written atomically. `run.json` holds the manifest: id, creation time, full
config, input hashes, package versions, per-stage status, counts and timings.
"""

from __future__ import annotations

import contextlib
import errno
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pandas as pd

from ragdash.redact import redact
from ragdash.rundir.calibration import Calibration
from ragdash.rundir.files import FILES, MANIFEST, RunFile
from ragdash.rundir.io import write_json, write_table
from ragdash.rundir.manifest import ManifestError, RunFileError
from ragdash.rundir.reader import PLAIN, Reader
from ragdash.rundir.records import StageRecord

PACKAGES = ("ragdash", "numpy", "pandas", "torch", "sentence-transformers", "faiss-cpu",
            "pyterrier", "pyterrier-pisa", "langchain-core", "langchain-community", "tokenizers",
            "numba", "streamlit", "openai", "ollama", "llama-cpp-python")


MANIFEST_LOCK = threading.RLock()
"""Held while the manifest is read, changed and written back, so that two threads of one process
(a stage's progress and its record) do not lose each other's change; other processes stay out
through the run's lock (`rundir.lock`)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


_OWN_MESSAGES = (ValueError, RuntimeError, OSError)
"""Errors whose message says what went wrong by itself (ragdash raises these with located
messages); any other type is named before its message."""


def error_text(exc: BaseException) -> str:
    """One line saying what went wrong in a stage: the message of ragdash's own errors, the
    type and message of any other (a library's, a Ray worker's), the file of an OSError (and
    what to do when the disk is full); redacted (no API key), at most 500 characters."""
    if isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif isinstance(exc, SystemExit):
        text = f"a library tried to end the process (SystemExit {exc.code!r})"
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror or exc}"
        if exc.errno == errno.ENOSPC:
            text += " (the disk is full: free some space and run again; finished stages are kept)"
    else:
        message = " ".join(str(exc).split())
        named = isinstance(exc, _OWN_MESSAGES) and message
        text = message if named else f"{type(exc).__name__}: {message}".rstrip(": ")
    text = redact(text)
    return text if len(text) <= 500 else text[:499] + "…"


class StageFailed(RuntimeError):
    """A stage that raised: the message is `<stage>: <what went wrong>` (`error_text`); the
    original exception is the `__cause__`."""

    def __init__(self, stage: str, exc: BaseException):
        super().__init__(f"{stage}: {error_text(exc)}")
        self.stage = stage


class StageInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, where the CLI turns it into one) during a stage, named by `stage`."""

    def __init__(self, stage: str):
        super().__init__(f"interrupted during stage {stage}")
        self.stage = stage


def spec(key: str) -> RunFile:
    """The declaration of a run file; KeyError naming the known keys otherwise."""
    try:
        return FILES[key]
    except KeyError:
        raise KeyError(f"no run file '{key}' (known: {', '.join(FILES)})") from None


class Run:
    """A run directory on disk; every file is looked at through `reader` (`rundir.reader`:
    the plain one reads on every call, the dashboard's keeps what it read)."""

    def __init__(self, path: Path | str, reader: Reader = PLAIN):
        self.path = Path(path)
        self.reader = reader

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    @property
    def id(self) -> str:
        return self.manifest.get("id", self.path.name)

    @property
    def manifest(self) -> dict:
        """run.json, checked (`manifest.read_manifest`; {} before it exists); ManifestError
        naming the file and the reason when it cannot be read."""
        f = self.path / MANIFEST
        return self.reader.manifest(f) if self.reader.stamp(f) is not None else {}

    def exists(self) -> bool:
        return self.reader.stamp(self.path / MANIFEST) is not None

    def problem(self) -> str | None:
        """Why the run's run.json cannot be read (file and reason), None when it can."""
        try:
            _ = self.manifest
        except ManifestError as exc:
            return str(exc)
        return None

    def create(self, config: dict, spec_version: int | None = None) -> Run:
        """Write a fresh manifest (keeping stage records of an existing one), after removing
        the temp files an interrupted atomic write left behind. `spec_version`: the shape of
        `config` (`ragdash.config.SPEC_VERSION`), kept beside it."""
        with MANIFEST_LOCK:
            return self._create(config, spec_version)

    def _create(self, config: dict, spec_version: int | None) -> Run:
        self.path.mkdir(parents=True, exist_ok=True)
        for tmp in self.path.glob(".*.*"):
            if tmp.is_file() and (self.path / tmp.name[1:].rsplit(".", 1)[0]).suffix:
                tmp.unlink(missing_ok=True)
        old = self.manifest
        stages = {name: {**s, "status": "interrupted"} if s.get("status") == "running" else s
                  for name, s in old.get("stages", {}).items()}  # a killed or failed writer's
        write_json(self.path / MANIFEST, {
            "id": old.get("id", self.path.name),
            "created": old.get("created", now()),
            "updated": now(),
            "config": config,
            **({"spec_version": spec_version} if spec_version is not None else {}),
            "versions": package_versions(),
            "stages": stages,
            **{k: v for k, v in old.items()
               if k not in ("id", "created", "updated", "config", "spec_version", "versions",
                            "stages")},
        })
        return self

    def update(self, **fields) -> None:
        with MANIFEST_LOCK:
            m = self.manifest
            m.update(fields, updated=now())
            write_json(self.path / MANIFEST, m)

    # --- files --------------------------------------------------------------------------------

    def file(self, key: str) -> Path:
        return self.path / spec(key).filename

    def has(self, key: str) -> bool:
        return self.reader.stamp(self.file(key)) is not None

    def read(self, key: str) -> pd.DataFrame:
        f = self.file(key)
        if not self.has(key):
            raise FileNotFoundError(f"run {self.path} has no {f.name} (stage "
                                    f"{spec(key).stage} not run yet?)")
        return self.reader.table(f, spec(key))

    def write(self, key: str, df: pd.DataFrame) -> Path:
        """Write a table atomically, after checking it has the columns its declaration names."""
        s = spec(key)
        if not s.is_table:
            raise ValueError(f"{s.filename} is JSON: use write_json")
        missing = [c for c in s.columns if c not in df.columns]
        if missing:
            raise ValueError(f"{s.filename} must have column(s) {', '.join(missing)} "
                             f"(got {', '.join(map(str, df.columns))})")
        f = self.file(key)
        write_table(f, df)
        return f

    def read_json(self, key: str) -> dict | None:
        return self.reader.json(self.file(key)) if self.has(key) else None

    def write_json(self, key: str, data: dict) -> Path:
        f = self.file(key)
        write_json(f, data)
        return f

    # --- typed accessors ------------------------------------------------------------------------

    def calibration(self) -> Calibration | None:
        """calibration.json as its typed record (thresholds, fits, evidence, shares, and the
        calibrate stage's sections), None before calibrate."""
        spec = FILES["calibration"]
        try:
            data = self.read_json("calibration")
        except RunFileError as exc:
            raise spec.unreadable(self.file("calibration"), str(exc).split(": ", 1)[-1]) \
                from exc
        if data is None:
            return None
        try:
            return Calibration.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise spec.unreadable(self.file("calibration"), "not a calibration written by "
                                  f"`ragdash calibrate`: {type(exc).__name__}: {exc}") from exc

    def table(self, key: str) -> pd.DataFrame | None:
        """A table, or None when its stage has not run."""
        return self.read(key) if self.has(key) else None

    # --- stages -------------------------------------------------------------------------------

    def stage(self, name: str) -> dict:
        """A stage's record as run.json keeps it ({} before it ran), for writing back."""
        return self.manifest.get("stages", {}).get(name, {})

    def stages(self, names: Iterable[str] | None = None) -> dict[str, StageRecord]:
        """The stages' records, typed: those run.json has in its order, or `names` in their
        order (a stage with no record is "waiting")."""
        recorded = self.manifest.get("stages") or {}
        return {n: StageRecord.from_dict(n, recorded.get(n))
                for n in (recorded if names is None else names)}

    def stage_done(self, name: str, key: str) -> bool:
        s = self.stage(name)
        return s.get("status") == "done" and s.get("key") == key

    def set_stage(self, name: str, **fields) -> None:
        with MANIFEST_LOCK:
            m = self.manifest
            stages = m.setdefault("stages", {})
            stages[name] = {**stages.get(name, {}), **fields}
            m["updated"] = now()
            write_json(self.path / MANIFEST, m)

    @contextlib.contextmanager
    def running(self, name: str, key: str) -> Iterator[dict]:
        """Record a stage as running, then done (with timing and the yielded counts), failed or
        interrupted. Whatever the stage raises comes out as `StageFailed` (its message names
        the stage; the error is its cause), or `StageInterrupted` for a KeyboardInterrupt."""
        start = time.perf_counter()
        self.set_stage(name, status="running", key=key, started=now(), error=None)
        counts: dict = {}
        try:
            yield counts
        except GeneratorExit:
            raise
        except BaseException as exc:
            stopped = isinstance(exc, KeyboardInterrupt)
            with contextlib.suppress(OSError):  # a full disk must not hide the stage's error
                self.set_stage(name, status="interrupted" if stopped else "failed",
                               error=error_text(exc), counts=counts,
                               seconds=round(time.perf_counter() - start, 2))
            if isinstance(exc, StageFailed | StageInterrupted):
                raise
            raise (StageInterrupted(name) if stopped else StageFailed(name, exc)) from exc
        self.set_stage(name, status="done", finished=now(), counts=counts,
                       seconds=round(time.perf_counter() - start, 2))


def list_runs(root: Path | str) -> list[Run]:
    """Runs under a root (any sub-directory with a run.json), newest first; those whose
    run.json cannot be read (`Run.problem`) last."""
    root = Path(root)
    if not root.is_dir():
        return []
    runs = [Run(p.parent) for p in root.glob(f"*/{MANIFEST}")]
    return sorted(runs, key=_updated, reverse=True)


def _updated(run: Run) -> str:
    """When the run was last updated ("" when its run.json cannot be read)."""
    try:
        return run.manifest.get("updated", "")
    except ManifestError:
        return ""
