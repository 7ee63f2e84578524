"""The run directory: the interface between the pipeline and the dashboard (DESIGN §3).

Every file is written atomically (temp file + rename). `run.json` holds the manifest: id,
creation time, full config, input hashes, package versions, per-stage status, counts, timings.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pandas as pd

MANIFEST = "run.json"
FILES = {
    "examples": "examples.parquet",
    "documents": "documents.parquet",
    "chunks": "chunks.parquet",
    "retrieved": "retrieved.parquet",
    "queries": "queries.parquet",
    "ir_scores": "ir_scores.parquet",
    "answers": "answers.parquet",
    "judgments": "judgments.parquet",
}
PACKAGES = ("ragdash", "numpy", "pandas", "torch", "sentence-transformers", "faiss-cpu",
            "pyterrier", "pyterrier-pisa", "langchain-core", "langchain-community", "tokenizers",
            "numba", "streamlit", "openai", "ollama", "llama-cpp-python")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it over `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600 files; run files are meant to be shared
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: Path, data: dict) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_table(path: Path, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        if path.suffix == ".csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False)


class Run:
    """A run directory on disk."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    @property
    def id(self) -> str:
        return self.manifest.get("id", self.path.name)

    @property
    def manifest(self) -> dict:
        f = self.path / MANIFEST
        return json.loads(f.read_text()) if f.exists() else {}

    def exists(self) -> bool:
        return (self.path / MANIFEST).exists()

    def create(self, config: dict) -> Run:
        """Write a fresh manifest (keeping stage records of an existing one), after removing
        the temp files an interrupted atomic write left behind."""
        self.path.mkdir(parents=True, exist_ok=True)
        for tmp in self.path.glob(".*.*"):
            if tmp.is_file() and (self.path / tmp.name[1:].rsplit(".", 1)[0]).suffix:
                tmp.unlink(missing_ok=True)
        old = self.manifest
        write_json(self.path / MANIFEST, {
            "id": old.get("id", self.path.name),
            "created": old.get("created", now()),
            "updated": now(),
            "config": config,
            "versions": package_versions(),
            "stages": old.get("stages", {}),
            **{k: v for k, v in old.items()
               if k not in ("id", "created", "updated", "config", "versions", "stages")},
        })
        return self

    def update(self, **fields) -> None:
        m = self.manifest
        m.update(fields, updated=now())
        write_json(self.path / MANIFEST, m)

    def file(self, name: str) -> Path:
        return self.path / FILES.get(name, name)

    def has(self, name: str) -> bool:
        return self.file(name).exists()

    def read(self, name: str) -> pd.DataFrame:
        f = self.file(name)
        if not f.exists():
            raise FileNotFoundError(f"run {self.path} has no {f.name} (stage not run yet?)")
        return pd.read_csv(f) if f.suffix == ".csv" else pd.read_parquet(f)

    def write(self, name: str, df: pd.DataFrame) -> Path:
        f = self.file(name)
        write_table(f, df)
        return f

    # --- stages -------------------------------------------------------------------------------

    def stage(self, name: str) -> dict:
        return self.manifest.get("stages", {}).get(name, {})

    def stage_done(self, name: str, key: str) -> bool:
        s = self.stage(name)
        return s.get("status") == "done" and s.get("key") == key

    def set_stage(self, name: str, **fields) -> None:
        m = self.manifest
        stages = m.setdefault("stages", {})
        stages[name] = {**stages.get(name, {}), **fields}
        m["updated"] = now()
        write_json(self.path / MANIFEST, m)

    @contextlib.contextmanager
    def running(self, name: str, key: str) -> Iterator[dict]:
        """Record a stage as running, then done (with timing and the yielded counts) or failed."""
        start = time.perf_counter()
        self.set_stage(name, status="running", key=key, started=now(), error=None)
        counts: dict = {}
        try:
            yield counts
        except BaseException as exc:
            self.set_stage(name, status="failed", error=f"{type(exc).__name__}: {exc}"[:500],
                           seconds=round(time.perf_counter() - start, 2), counts=counts)
            raise
        self.set_stage(name, status="done", finished=now(), counts=counts,
                       seconds=round(time.perf_counter() - start, 2))


def list_runs(root: Path | str) -> list[Run]:
    """Runs under a root (any sub-directory with a run.json), newest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    runs = [Run(p.parent) for p in root.glob(f"*/{MANIFEST}")]
    return sorted(runs, key=lambda r: r.manifest.get("updated", ""), reverse=True)
