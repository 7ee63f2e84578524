"""The runs root: the folder runs are made under (config `runs_root`), and the places its runs
share, named here once. Folders and files starting with "_" are never runs."""

from __future__ import annotations

import os
from pathlib import Path

from ragdash.constants import DATASETS, EMBEDDING_CACHE, INDEX_CACHE, LLM_CACHE, UPLOADS
from ragdash.rundir.files import MANIFEST
from ragdash.rundir.reader import PLAIN, Reader
from ragdash.rundir.run import Run, list_runs

__all__ = ["DATASETS", "EMBEDDING_CACHE", "INDEX_CACHE", "LLM_CACHE", "UPLOADS", "RunsRoot"]


class RunsRoot:
    """A runs root and its shared places."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunsRoot({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunsRoot) and self.path == other.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def llm_cache(self) -> Path:
        """The LLM reply cache (SQLite): every generation, judge and synthesis call."""
        return self.path / LLM_CACHE

    @property
    def index_cache(self) -> Path:
        """The folder of built retrieval indexes (BM25, FAISS), keyed by chunks and params: in
        the runs root, or under the folder `RAGDASH_INDEX_CACHE_DIR` names."""
        return _shared(INDEX_CACHE_DIR_ENV, self.path) / INDEX_CACHE

    @property
    def embedding_cache(self) -> Path:
        """The embedding cache (SQLite), a speed-up only (`ragdash cache` trims it): in the runs
        root, or in the folder `RAGDASH_EMBED_CACHE_DIR` names (`embedding_cache_dir`)."""
        return embedding_cache_dir(self.path) / EMBEDDING_CACHE

    @property
    def uploads(self) -> Path:
        """Files uploaded on the dashboard's Data page, as `<sha256>/<name>`."""
        return self.path / UPLOADS

    @property
    def datasets(self) -> Path:
        """Datasets made here: reviewed evidence and synthesized questions (JSONL)."""
        return self.path / DATASETS

    def run(self, name: str, reader: Reader = PLAIN) -> Run:
        return Run(self.path / name, reader)

    def runs(self, reader: Reader = PLAIN) -> list[Run]:
        """The runs under the root (newest first), then those one folder deeper (a sweep's,
        made by `ragdash sweep --runs-root <root>/<name>`); a run (or sweep folder) that is a
        symlink out of the root is left out."""
        runs = list_runs(self.path)
        if self.path.is_dir():
            for sub in sorted(self.path.iterdir()):
                if sub.is_dir() and not sub.name.startswith(("_", ".")) and \
                        not (sub / MANIFEST).exists():
                    runs += list_runs(sub)
        root = self.path.resolve()
        return [Run(r.path, reader) for r in runs
                if (r.path / MANIFEST).resolve().is_relative_to(root)]


EMBED_CACHE_DIR_ENV = "RAGDASH_EMBED_CACHE_DIR"
"""Names one folder for the embedding cache of every runs root: vectors depend on the text, the
model and the precision alone, so runs roots (and test sessions) can share them."""
INDEX_CACHE_DIR_ENV = "RAGDASH_INDEX_CACHE_DIR"
"""Names one folder for the index cache of every runs root: an index depends on the chunks'
texts and its parameters alone (`retrieval.base.index_key`), so runs roots can share them."""


def _shared(env: str, runs_root: str | Path) -> Path:
    """The folder `env` names, else the runs root itself."""
    shared = os.environ.get(env, "").strip()
    return Path(shared) if shared else Path(runs_root)


def embedding_cache_dir(runs_root: str | Path) -> Path:
    """Where the embedding cache of `runs_root` lives: the folder `RAGDASH_EMBED_CACHE_DIR`
    names, else the runs root itself."""
    return _shared(EMBED_CACHE_DIR_ENV, runs_root)
