"""The lock of a run directory: one process at a time runs stages in it.

An exclusive `fcntl.flock` on `<run_dir>/.lock`, held for as long as the process works there.
The kernel drops it when the process ends, however it ends (a crash, SIGKILL), so a lock is
never left behind as a pid file would be; the file only names the holder's pid for messages.
A process may take the same lock again (the stage runner inside a dashboard job that already
holds it); another thread of it, or another process, is refused with `RunLocked`.

The dashboard takes the lock before it starts a job process and hands it over: the process
inherits the open file (`pass_fds`) and `adopt`s it, so no other start can slip in between.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LOCK = ".lock"


class RunLocked(RuntimeError):
    """The run directory is in use by another process (or thread)."""

    def __init__(self, run_dir: Path, pid: int | None):
        who = f"process {pid}" if pid else "another process"
        super().__init__(f"run {run_dir} is in use: {who} is running stages in it (a dashboard "
                         "job or a `ragdash` command). Wait for it to finish, or cancel it on "
                         "the dashboard's Build page, then start again.")
        self.run_dir, self.pid = Path(run_dir), pid


@dataclass
class _Held:
    fd: int
    depth: int
    thread: int | None  # the owning thread; None: the whole process (an adopted lock)


_held: dict[str, _Held] = {}
_guard = threading.Lock()


def _key(run_dir: Path | str) -> str:
    return os.path.realpath(run_dir)


def _pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def acquire(run_dir: Path | str, wait: float = 1.0) -> int:
    """Take the lock of `run_dir` (created if missing) and return its file descriptor; retried
    for `wait` seconds (another process may be only peeking, see `holder`), then `RunLocked`."""
    key, me = _key(run_dir), threading.get_ident()
    with _guard:
        held = _held.get(key)
        if held is not None:
            if held.thread not in (None, me):
                raise RunLocked(Path(run_dir), os.getpid())
            held.depth += 1
            return held.fd
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        path = Path(run_dir) / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            return -1  # a read-only run: nothing can be written there to guard (the writes
            # that follow report it, naming their file)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise RunLocked(Path(run_dir), _pid_in(path)) from None
                time.sleep(0.05)
        _write_pid(fd)
        _held[key] = _Held(fd, 1, me)
        return fd


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def release(run_dir: Path | str) -> None:
    """Give back one `acquire`; the last one unlocks."""
    key = _key(run_dir)
    with _guard:
        held = _held.get(key)
        if held is None:
            return
        held.depth -= 1
        if held.depth > 0:
            return
        del _held[key]
        with contextlib.suppress(OSError):
            fcntl.flock(held.fd, fcntl.LOCK_UN)
        os.close(held.fd)


def hand_over(run_dir: Path | str) -> None:
    """Forget a lock this process passed to a child (which inherited the open file): close it
    here without unlocking, so the child keeps it."""
    with _guard:
        held = _held.pop(_key(run_dir), None)
    if held is not None:
        os.close(held.fd)


def adopt(run_dir: Path | str, fd: int) -> None:
    """Hold, for the rest of this process, the lock of `run_dir` that the parent handed over as
    the inherited file descriptor `fd`; ValueError if `fd` is not that lock held."""
    path = Path(run_dir) / LOCK
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        same = False
    if not same:
        raise ValueError(f"file descriptor {fd} is not the lock file {path}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: succeeds at once
    except OSError as exc:
        raise ValueError(f"file descriptor {fd} is not the held lock of {run_dir}") from exc
    _write_pid(fd)
    with _guard:
        _held[_key(run_dir)] = _Held(fd, 1, None)


@contextlib.contextmanager
def locked(run_dir: Path | str) -> Iterator[None]:
    """Hold the lock of `run_dir` for the block (`RunLocked` if another process has it)."""
    acquire(run_dir)
    try:
        yield
    finally:
        release(run_dir)


def holder(run_dir: Path | str) -> int | None:
    """The pid of the process holding the lock of `run_dir` (0 when it cannot be told), None
    when the run is free."""
    key = _key(run_dir)
    with _guard:
        if key in _held:
            return os.getpid()
    path = Path(run_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _pid_in(path) or 0
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
