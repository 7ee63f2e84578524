"""How a run's files are read, and results of reading them kept while those files are unchanged.

A `Reader` answers four questions about a file: its `stamp` (None when missing), its table,
its JSON, and, for run.json, its checked manifest (`manifest.read_manifest`, the one reader of
run.json). `Run` asks every one of them through its reader, so a program can swap the plain one
for a cached one (the dashboard keys its cache on the file's path and stamp) without any
reader of a run knowing.

`Memo` keeps the result of a function of runs with the stamp of every file the function looked
at (read, or found missing), recorded while it ran, and gives it back while every one of those
stamps is unchanged: no list of dependencies to keep by hand, and no stale answer.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pandas as pd

from ragdash.rundir.manifest import MAX_RUN_JSON_BYTES, ManifestError, load_json, read_manifest

if TYPE_CHECKING:
    from ragdash.rundir.files import RunFile

Stamp = tuple[int, int, int]
"""(inode, modification time in ns, size) of a file: an atomic rewrite (a new file renamed over
the old) always changes it."""

T = TypeVar("T")


def stamp(path: Path) -> Stamp | None:
    """The file's `Stamp`, None when it does not exist (or is not a file)."""
    try:
        s = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (s.st_ino, s.st_mtime_ns, s.st_size) if os.path.isfile(path) else None


class Reader:
    """Reads every file on every call."""

    def stamp(self, path: Path) -> Stamp | None:
        return stamp(path)

    def table(self, path: Path, spec: RunFile) -> pd.DataFrame:
        """The table at `path`, upgraded to its declaration's current columns."""
        return spec.read(path)

    def json(self, path: Path) -> dict:
        """A run's JSON file other than run.json (`load_json`, at most MAX_RUN_JSON_BYTES);
        ManifestError naming the file and the reason when it cannot be read."""
        return load_json(path, MAX_RUN_JSON_BYTES)

    def manifest(self, path: Path) -> dict:
        """The run.json at `path`, checked (`read_manifest`); ManifestError says why not."""
        return read_manifest(path)


PLAIN = Reader()


def table_at(path: str, stamp_: Stamp | None, key: str) -> pd.DataFrame:
    """The run table `key` at `path`, as it is when it has stamp `stamp_` (a cache key)."""
    from ragdash.rundir.files import FILES

    return FILES[key].read(Path(path))


def json_at(path: str, stamp_: Stamp | None) -> dict:
    """The JSON file at `path`, as it is when it has stamp `stamp_` (a cache key): bounded and
    refused with its reason as `Reader.json` does."""
    return PLAIN.json(Path(path))


def manifest_at(path: str, stamp_: Stamp | None) -> dict | ManifestError:
    """The run.json at `path` (`read_manifest`) as it is when it has stamp `stamp_` (a cache
    key), or the ManifestError saying why it cannot be read: kept like an answer, so that a bad
    run.json is read once, not on every look."""
    try:
        return read_manifest(Path(path))
    except ManifestError as exc:
        return exc


class CachedReader(Reader):
    """Reads through functions like `table_at` and `json_at` that a cache wraps (e.g.
    Streamlit's `st.cache_data`): keyed on the file's path and stamp, what they give back is
    the file as it is now. A file that links outside its folder (its run) counts as missing,
    never read: it could name any file on the machine."""

    def __init__(self, table: Callable[[str, Stamp | None, str], pd.DataFrame],
                 json_: Callable[[str, Stamp | None], dict],
                 manifest: Callable[[str, Stamp | None], dict | ManifestError] = manifest_at):
        self._table, self._json, self._manifest = table, json_, manifest

    def stamp(self, path: Path) -> Stamp | None:
        path = Path(path)
        inside = path.resolve().is_relative_to(path.parent.resolve())
        return stamp(path) if inside else None

    def _stamp_of(self, path: Path) -> Stamp:
        s = self.stamp(path)
        if s is None:
            raise FileNotFoundError(f"{path} does not exist (or links outside its folder)")
        return s

    def table(self, path: Path, spec: RunFile) -> pd.DataFrame:
        return self._table(str(path), self._stamp_of(path), spec.key)

    def json(self, path: Path) -> dict:
        return self._json(str(path), self._stamp_of(path))

    def manifest(self, path: Path) -> dict:
        got = self._manifest(str(path), self._stamp_of(path))
        if isinstance(got, ManifestError):
            raise ManifestError(str(got))
        return got


class Recorder(Reader):
    """A reader that notes the stamp of every file it is asked about (first answer kept), and
    reads through `inner`."""

    def __init__(self, inner: Reader):
        self.inner = inner
        self.seen: dict[Path, Stamp | None] = {}

    def stamp(self, path: Path) -> Stamp | None:
        s = self.inner.stamp(path)
        self.seen.setdefault(Path(path), s)
        return s

    def table(self, path: Path, spec: RunFile) -> pd.DataFrame:
        self.stamp(path)
        return self.inner.table(path, spec)

    def json(self, path: Path) -> dict:
        self.stamp(path)
        return self.inner.json(path)

    def manifest(self, path: Path) -> dict:
        self.stamp(path)
        return self.inner.manifest(path)


class Memo:
    """Results of functions of runs, each kept with the stamps of the files it looked at.

    `get(key, compute)` calls `compute(reader)` (which must read every run file through
    `reader`) unless a result kept for `key` was computed from files whose stamps are all
    unchanged. A `get` inside another's `compute` hands its files on to the outer one, so the
    outer result also follows the files the inner one read. Results are kept pickled (each
    caller gets its own copy), at most `max_entries`, least recently used dropped first.
    `busy(about)` is entered around a computation that says what it does (e.g. a spinner).
    """

    def __init__(self, reader: Reader = PLAIN, max_entries: int = 256,
                 busy: Callable[[str], AbstractContextManager] | None = None):
        self.reader = reader
        self.max_entries = max_entries
        self.busy = busy
        self._kept: OrderedDict[Hashable, tuple[dict[Path, Stamp | None], bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()

    def _outer(self) -> list[Recorder]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def _hand_on(self, seen: dict[Path, Stamp | None]) -> None:
        stack = self._outer()
        if stack:
            for path, s in seen.items():
                stack[-1].seen.setdefault(path, s)

    def get(self, key: Hashable, compute: Callable[[Reader], T], about: str | None = None) -> T:
        """`compute(reader)`'s result, kept until a file it looked at changes; `about` says
        what the computation does."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
        if kept is not None and all(self.reader.stamp(p) == s for p, s in kept[0].items()):
            self._hand_on(kept[0])
            return self._loads(kept[1])
        recorder = Recorder(self.reader)
        stack = self._outer()
        stack.append(recorder)
        try:
            with (self.busy(about) if self.busy is not None and about
                  else contextlib.nullcontext()):
                value = compute(recorder)
        finally:
            stack.pop()
        with self._lock:
            self._kept[key] = (dict(recorder.seen), self._dumps(value))
            self._kept.move_to_end(key)
            while len(self._kept) > self.max_entries:
                self._kept.popitem(last=False)
        self._hand_on(recorder.seen)
        return value

    def _dumps(self, value: object) -> bytes:
        """`value` pickled, any reader in it (a run's) by reference: `_loads` puts this memo's
        reader in its place."""
        out = io.BytesIO()
        pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
        pickler.persistent_id = lambda obj: "reader" if isinstance(obj, Reader) else None
        pickler.dump(value)
        return out.getvalue()

    def _loads(self, data: bytes) -> object:
        unpickler = pickle.Unpickler(io.BytesIO(data))
        unpickler.persistent_load = lambda pid: self.reader
        return unpickler.load()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
