"""Embeddings on disk: each (model, precision, text) is embedded once, then read back.

`CachedEmbeddings` (what `ragdash.embeddings.get_embedder` returns) wraps the model: it computes
at the precision in effect and reads and fills the store in effect.

One SQLite file per runs root (WAL, busy timeout), shared by threads and processes. A row is
keyed by sha256(model id, precision, text) and holds the vector as little-endian float32 bytes,
exactly the vector the model returned (MiniLM computes in float32), so a cached run gives the
same chunks and rankings as the run that filled the cache.

A file that is not a database, or a damaged one, is moved aside (`.corrupt`) and recreated with
a warning; if that fails too, caching is switched off for the process. Embedding never fails
because of the cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

from ragdash.constants import EMBEDDING_CACHE

log = logging.getLogger("ragdash")

DTYPE = np.dtype("<f4")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY,
    model TEXT NOT NULL,
    precision TEXT NOT NULL,
    vec BLOB NOT NULL
)
"""  # a rowid table: a 1.5 KB vector stays in its page (WITHOUT ROWID spills it: 3x the size)


class Settings(Protocol):
    """What `CachedEmbeddings` reads on every call (`ragdash.embeddings.EmbeddingSettings`)."""

    precision: str
    cache_dir: Path | None


_BATCH = 500  # keys per SELECT ... IN (...) (SQLite allows 32,766 parameters)
_BROKEN = {getattr(sqlite3, "SQLITE_CORRUPT", 11), getattr(sqlite3, "SQLITE_NOTADB", 26)}


def text_key(model_id: str, precision: str, text: str) -> bytes:
    """The row key: sha256 of the model id, the precision and the text (32 bytes)."""
    h = hashlib.sha256(f"{model_id}\x00{precision}\x00".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.digest()


def is_corrupt(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file is damaged or not a database (not merely busy)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BROKEN  # the primary code of an extended one
    msg = str(exc).lower()
    return "not a database" in msg or "malformed" in msg


class EmbeddingStore:
    """A thread-safe SQLite table of float32 vectors; usable from several processes at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.disabled = False
        self._warned: set[str] = set()
        with self._lock:
            self._guard(lambda: None, None)

    # --- public -----------------------------------------------------------------------------

    def get(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The stored vectors of those keys that are present (float32, read-only arrays)."""
        keys = list(dict.fromkeys(keys))
        with self._lock:
            return self._guard(lambda: self._select(keys), {})

    def put(self, rows: Sequence[tuple[bytes, str, str, np.ndarray]]) -> None:
        """Store (key, model id, precision, vector) rows in one transaction; existing keys kept."""
        if not rows:
            return
        data = [(k, m, p, np.ascontiguousarray(v, dtype=DTYPE).tobytes()) for k, m, p, v in rows]
        with self._lock:
            self._guard(lambda: self._insert(data), None)

    def __len__(self) -> int:
        with self._lock:
            return self._guard(
                lambda: self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0], 0)

    def stats(self) -> list[tuple[str, str, int, int]]:
        """(model id, precision, vectors, bytes of vectors and keys) per model and precision."""
        with self._lock:
            return self._guard(lambda: self._conn.execute(
                "SELECT model, precision, COUNT(*), SUM(LENGTH(vec) + LENGTH(key)) FROM vectors "
                "GROUP BY model, precision ORDER BY model, precision").fetchall(), [])

    def prune(self, max_bytes: int) -> int:
        """Delete the vectors stored first until the rest take at most `max_bytes` (vectors and
        keys), then give the space back to the disk; the number deleted."""
        with self._lock:
            return self._guard(lambda: self._prune(max(int(max_bytes), 0)), 0)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # --- internals (called with the lock held) ------------------------------------------------

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False,
                               isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            conn.execute("SELECT key FROM vectors LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def _select(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for i in range(0, len(keys), _BATCH):
            part = keys[i: i + _BATCH]
            rows = self._conn.execute(
                f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})",
                part).fetchall()
            found.update((k, np.frombuffer(v, dtype=DTYPE)) for k, v in rows)
        return found

    def _insert(self, data: list[tuple[bytes, str, str, bytes]]) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", data)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _prune(self, max_bytes: int) -> int:
        conn = self._conn
        cut = conn.execute(
            "SELECT rowid FROM (SELECT rowid, SUM(LENGTH(vec) + LENGTH(key)) OVER "
            "(ORDER BY rowid DESC) AS kept FROM vectors) WHERE kept > ? ORDER BY rowid DESC "
            "LIMIT 1", (max_bytes,)).fetchone()
        if cut is None:
            return 0
        deleted = conn.execute("DELETE FROM vectors WHERE rowid <= ?", cut).rowcount
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    def _guard(self, op, fallback):
        """Run `op` (connecting first if needed). A damaged file is recreated and `op` retried
        once; other SQLite errors (a lock held past the timeout, a read-only disk) are logged
        once each and give `fallback`; a failed recreation switches the cache off."""
        if self.disabled:
            return fallback
        try:
            return self._attempt(op)
        except sqlite3.Error as exc:
            if not is_corrupt(exc):
                if str(exc) not in self._warned:
                    self._warned.add(str(exc))
                    log.warning("embedding cache %s: %s; embeddings not cached meanwhile",
                                self.path, exc)
                return fallback
            try:
                self._recreate(exc)
                return self._attempt(op)
            except (sqlite3.Error, OSError) as again:
                self._disable(again)
        except OSError as exc:
            self._disable(exc)
        return fallback

    def _attempt(self, op):
        if self._conn is None:
            self._connect()
        return op()

    def _recreate(self, exc: Exception) -> None:
        log.warning("embedding cache %s is damaged (%s): moved aside to %s.corrupt and "
                    "recreated; embeddings are computed again", self.path, exc, self.path.name)
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        with contextlib.suppress(FileNotFoundError):  # another process moved it first
            os.replace(self.path, self.path.with_name(self.path.name + ".corrupt"))
        for side in ("-wal", "-shm"):
            Path(f"{self.path}{side}").unlink(missing_ok=True)
        self._connect()

    def _disable(self, exc: Exception) -> None:
        log.warning("embedding cache %s cannot be used (%s): embeddings are not cached in "
                    "this process", self.path, exc)
        self.disabled = True
        if self._conn is not None:
            self._conn.close()
            self._conn = None


_STORES: dict[Path, EmbeddingStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(cache_dir: str | Path) -> EmbeddingStore:
    """The process's one store for the embedding cache of the runs root `cache_dir` (opened on
    first use)."""
    path = (Path(cache_dir) / EMBEDDING_CACHE).resolve()
    with _STORES_LOCK:
        store = _STORES.get(path)
        if store is None:
            store = _STORES[path] = EmbeddingStore(path)
        return store


def forget_stores() -> None:
    """Close every open store (tests; a cache file removed while the process runs)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()


class CachedEmbeddings(Embeddings):
    """A LangChain `Embeddings` computing with `backend` at the precision `settings()` names,
    reading and filling the store in its cache_dir (None: no cache). Vectors come back exactly
    as the model computed them. `settings` is called on every embed, so one shared instance
    follows whatever settings are in effect (see `ragdash.embeddings.embedding_settings`).

    `backend` may be a function that builds the model: it is called on the first text the
    cache lacks, so a process whose texts are all cached never imports or loads the model
    (sentence-transformers' import and MiniLM's load take about 20 s on a 2-core CPU)."""

    def __init__(self, backend: Embeddings | Callable[[], Embeddings], model: str,
                 settings: Callable[[], Settings]):
        self._backend = backend
        self.model = model
        self.settings = settings
        self._lock = threading.Lock()  # one model call at a time (the tokenizer is not shared-safe)

    @property
    def backend(self) -> Embeddings:
        """The model, built on first use when given as a function."""
        if not hasattr(self._backend, "embed_documents"):
            self._backend = self._backend()
        return self._backend  # type: ignore[return-value]

    @backend.setter
    def backend(self, model: Embeddings) -> None:
        self._backend = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        s = self.settings()
        if s.cache_dir is None:
            return self.compute(texts, s.precision).tolist()
        store = open_store(s.cache_dir)
        keys = [text_key(self.model, s.precision, t) for t in texts]
        found = store.get(keys)
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if todo:
            vectors = self.compute(todo, s.precision)
            new = {text_key(self.model, s.precision, t): v
                   for t, v in zip(todo, vectors, strict=True)}
            store.put([(k, self.model, s.precision, v) for k, v in new.items()])
            found.update(new)
        return np.stack([found[k] for k in keys]).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def compute(self, texts: list[str], precision: str) -> np.ndarray:
        """The model's float32 vectors of `texts` at `precision` (no cache)."""
        with self._lock, autocast(precision):
            vectors = np.asarray(self.backend.embed_documents(texts), dtype=np.float32)
        if vectors.shape[0] != len(texts):
            raise ValueError(f"embedding model gave {vectors.shape[0]} vectors for "
                             f"{len(texts)} texts")
        return vectors


def autocast(precision: str) -> contextlib.AbstractContextManager:
    """fp32: the model's own arithmetic; bf16: `torch.autocast` to bfloat16 on the CPU."""
    if precision == "fp32":
        return contextlib.nullcontext()
    if precision != "bf16":
        raise ValueError(f"precision must be fp32 or bf16, not {precision!r}")
    import torch

    if not bf16_native():
        _warn_slow_bf16()
    return torch.autocast("cpu", dtype=torch.bfloat16)


@functools.cache
def bf16_native() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX-512 BF16 or AMX), as oneDNN reports it.
    Without it, bf16 autocast emulates the arithmetic: MiniLM measured 5-7x slower than fp32
    on an AVX2-only CPU (`benchmarks/bench_index.py` prints which this CPU is)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # no oneDNN in this torch build: no fast path
        return False


@functools.cache
def _warn_slow_bf16() -> None:
    log.warning("embeddings.precision is bf16 but this CPU has no bfloat16 instructions "
                "(AVX-512 BF16 or AMX): embedding runs several times slower than fp32 here; "
                "set embeddings.precision: fp32")
