"""Persistent cache of LLM replies (SQLite, WAL), keyed by everything that shapes a reply.

Every finished call is committed at once, so an interrupted run keeps what it finished and a
re-run of the same calls makes no request. Keys and values hold no secrets: the key is a hash of
(backend, model, messages, parameters incl. the JSON schema); the value is the reply text,
token counts and latency.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ragdash.llm.types import LLMResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    latency_s REAL,
    created REAL NOT NULL
)
"""


def cache_key(backend: str, model: str, messages: list[dict[str, Any]],
              params: dict[str, Any] | None = None, json_schema: dict | None = None) -> str:
    """sha256 of a canonical JSON of the call."""
    blob = json.dumps({"backend": backend, "model": model, "messages": messages,
                       "params": params or {}, "json_schema": json_schema},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMCache:
    """Thread-safe SQLite reply cache; usable from several threads and processes at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False,
                                     isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> LLMResult | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT text, tokens_in, tokens_out, latency_s, model FROM replies WHERE key = ?",
                (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return LLMResult(text=row[0], tokens_in=row[1], tokens_out=row[2], latency_s=row[3],
                         model=row[4], cached=True)

    def put(self, key: str, backend: str, result: LLMResult) -> None:
        """Store and commit one reply (autocommit: durable as soon as this returns)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, backend, result.model, result.text, result.tokens_in, result.tokens_out,
                 result.latency_s, time.time()))

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_cache(cache: LLMCache | str | Path | None) -> LLMCache | None:
    """An `LLMCache` from a cache, a path, or None (no caching)."""
    if cache is None or isinstance(cache, LLMCache):
        return cache
    return LLMCache(cache)
