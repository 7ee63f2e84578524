"""What every retriever shares: the chunk corpus, the on-disk index cache, the PyTerrier contract.

A retriever is a `pyterrier.Transformer`: a queries frame (qid, query) in, a results frame
(qid, query, docno, score, rank) out, where docno is the chunk_id. So retrievers compose into
PyTerrier pipelines and `pt.Experiment` evaluates them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pyterrier as pt

RESULT_COLUMNS = ["qid", "query", "docno", "score", "rank"]


def corpus_fingerprint(chunks: pd.DataFrame) -> str:
    """sha256 of the chunk ids and texts, in order: the identity of an indexed corpus."""
    h = hashlib.sha256()
    for cid, text in zip(chunks["chunk_id"], chunks["text"], strict=True):
        h.update(str(cid).encode())
        h.update(b"\x00")
        h.update(text.encode())
        h.update(b"\x01")
    return h.hexdigest()


def index_key(kind: str, fingerprint: str, params: dict) -> str:
    """Directory name of a cached index: kind + hash of corpus and index-time parameters."""
    blob = json.dumps({"corpus": fingerprint, "params": params}, sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


COMPLETE = ".complete"
"""The file a finished build's folder holds (written last, before the rename)."""
OWNER = ".owner"
"""The file in a build's temp folder naming the process that builds there (host, pid and the
pid's start time)."""
STALE_AFTER_S = 120.0
"""A build's temp folder untouched this long whose owner process is gone (killed outright, so
it could not remove it) is removed by the next `cached_build` in its cache folder."""
UNKNOWN_STALE_AFTER_S = 24 * 3600.0
"""The same for a temp folder whose owner cannot be checked from here (built on another host
sharing the folder, or without an owner file)."""
_TEMP = re.compile(r"\.[a-z0-9-]+-[0-9a-f]{16}-[a-z0-9_]{8}")
"""The name `cached_build` gives a temp folder: `.<kind>-<hash>-` and mkdtemp's 8 characters."""


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), None if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]  # field 22; the name may hold spaces


def _owner() -> dict:
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "started": _started(pid)}


def _owner_gone(owner: dict) -> bool | None:
    """Whether the process of `owner` (a temp folder's OWNER record) has ended: None when it
    cannot be told from here (another host)."""
    if owner.get("host") != socket.gethostname() or not isinstance(owner.get("pid"), int):
        return None
    try:
        os.kill(owner["pid"], 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        pass
    started = _started(owner["pid"])
    return started is not None and owner.get("started") not in (None, started)  # pid reused


def remove_stale_builds(cache_dir: Path, now: float | None = None) -> list[Path]:
    """Remove the temp folders of builds in `cache_dir` that will never finish: untouched for
    STALE_AFTER_S and their owner gone (UNKNOWN_STALE_AFTER_S when the owner cannot be
    checked). Returns those removed."""
    now = time.time() if now is None else now
    removed = []
    for tmp in Path(cache_dir).glob(".*-*"):
        if not _TEMP.fullmatch(tmp.name) or not tmp.is_dir() or tmp.is_symlink():
            continue
        try:
            age = now - tmp.stat().st_mtime
        except OSError:  # removed meanwhile
            continue
        try:
            owner = json.loads((tmp / OWNER).read_text())
            gone = _owner_gone(owner) if isinstance(owner, dict) else None
        except (OSError, ValueError):
            gone = None
        after = STALE_AFTER_S if gone else UNKNOWN_STALE_AFTER_S if gone is None else None
        if after is not None and age > after:
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


@contextlib.contextmanager
def held(lock: Path) -> Iterator[None]:
    """An exclusive `flock` on the file `lock`, waited for: for work inside a built folder of
    the cache, which every run and job of its runs root shares."""
    with open(lock, "a") as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def cached_build(cache_dir: Path, key: str, build: Callable[[Path], None]) -> Path:
    """Return `cache_dir/key`, building it first (into a temp dir, then renamed) if absent.
    The temp folders of builds killed before they finished are removed first
    (`remove_stale_builds`). When another process finished the same build meanwhile (two runs
    or jobs sharing the cache), its index is kept, since it may be in use, and this one is
    dropped."""
    final = Path(cache_dir) / key
    remove_stale_builds(final.parent)
    if (final / COMPLETE).exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        (tmp / OWNER).write_text(json.dumps(_owner()))
        build(tmp)
        (tmp / OWNER).unlink()
        (tmp / COMPLETE).write_text("ok")
        if (final / COMPLETE).exists():
            return final
        if final.exists():  # a folder no build completed (an older version's leftover)
            shutil.rmtree(final)
        try:
            os.replace(tmp, final)
        except OSError:  # another process's build landed between the check and the rename
            if not (final / COMPLETE).exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def results_frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """Results frame from (qid, query, docno, score) rows already in rank order per query."""
    df = pd.DataFrame(rows, columns=RESULT_COLUMNS[:4])
    df["rank"] = df.groupby("qid", sort=False).cumcount().astype(int)
    return df


def searched(k: int, chunks: int) -> int:
    """How many results a search of `k` asks its engine for over `chunks` chunks: no more than
    there are (a larger k finds the same chunks, but an engine sizes its buffers by k)."""
    return max(1, min(int(k), int(chunks)))


class Retriever(pt.Transformer):
    """Base class: subclasses implement `search(queries) -> list of ranked (docno, score) lists`."""

    name = "retriever"
    embeds = False  # it embeds the chunks with MiniLM (the first use loads the model)
    finds_nothing_for = "questions its search found no chunk for"  # when it returns nothing

    def __init__(self, k: int):
        if k <= 0:
            raise ValueError(f"{self.name}: k must be positive, got {k}")
        self.k = k

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        raise NotImplementedError

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        missing = {"qid", "query"} - set(inp.columns)
        if missing:
            raise ValueError(f"{self.name}: queries frame lacks column(s) {sorted(missing)}")
        qids = inp["qid"].astype(str).tolist()
        queries = inp["query"].astype(str).tolist()
        hits = self.search(queries)
        rows = [
            (qid, q, docno, float(score))
            for qid, q, ranked in zip(qids, queries, hits, strict=True)
            for docno, score in ranked
        ]
        return results_frame(rows)
