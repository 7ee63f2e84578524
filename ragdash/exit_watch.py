"""A watcher for a process that may be ended without a word: Ray ends its driver outright
(exit status 1, no Python exception) when the node or object store it runs on dies, so neither
the stage record nor the command's error line would be written.

`watched(run_dir)` starts `python -m ragdash.exit_watch <run_dir> <pid>` beside the block: a
small process that waits until this one says it is done. If this one ends first, the watcher
marks every stage still recorded as running in the run's manifest as failed and prints the
command's error line (`ragdash: error: <stage>: ...`) on the stderr they share (at once: it
has loaded what it writes with while it waited).

A stage can also fail with an error of its own just before the process is ended outright (a
killed raylet: the stage records `LocalRayletDiedError`, then Ray ends the driver before the
command prints its line). So a block that ends with a stage's failure tells its watcher the
stage, and the watcher stays until the failure is said (`reported`, called by the command
after its error line, or the interpreter's normal exit): if the process ends before that, the
watcher prints the stage's recorded error as the command's line.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

DONE = b"."
FAILED = b"F"
"""`F<stage>\n`: the block ended with the failure of <stage>, not yet reported."""
ABRUPT_WHY = ("killed, or ended by Ray because the node or object store it ran on died: see "
              "Ray's logs, /tmp/ray/session_latest/logs; run again to resume")
ABRUPT = ("the ragdash process (pid {pid}) ended abruptly during this stage, without an error "
          "of its own: it was killed, or Ray ended it because the node or object store it ran "
          "on died (see Ray's logs, /tmp/ray/session_latest/logs); run again to resume")


_pending: list[subprocess.Popen] = []
"""Watchers of blocks that ended with a stage's failure the process has not reported yet."""


@contextlib.contextmanager
def watched(run_dir: Path) -> Iterator[None]:
    """Run the block with a watcher that reports it if this process ends abruptly, in the
    block or after a stage's failure in it, before the failure is `reported`."""
    proc = subprocess.Popen([sys.executable, "-m", "ragdash.exit_watch", str(run_dir),
                             str(os.getpid())], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
    except BaseException as exc:
        stage = getattr(exc, "stage", None)
        if isinstance(stage, str) and not isinstance(exc, KeyboardInterrupt) \
                and _tell(proc, FAILED + stage.encode(errors="replace") + b"\n"):
            _pending.append(proc)
        else:
            _finish(proc)
        raise
    _finish(proc, wait=True)


def reported() -> None:
    """The failures of the watched blocks are said: their watchers stop watching (at the
    latest at a normal exit, which has said them, or could have)."""
    while _pending:
        _finish(_pending.pop())


atexit.register(reported)


def _tell(proc: subprocess.Popen, data: bytes) -> bool:
    """Write `data` to the watcher; False if it cannot be reached."""
    try:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.flush()
    except OSError:
        return False
    return True


def _finish(proc: subprocess.Popen, wait: bool = False) -> None:
    """Tell the watcher this process is done; `wait` a moment for it to go (else it is reaped
    by the next Popen: no need to hold the process up)."""
    with contextlib.suppress(OSError):
        assert proc.stdin is not None
        proc.stdin.write(DONE)
        proc.stdin.close()
    if wait:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)


def _parent_ended(parent: int, failed: list[str]) -> bool:
    """Wait for a word from `parent` on stdin: False once it says it is done, True when it
    ended without saying so (stdin closed, or this process was handed to another parent).
    The stages it says failed are added to `failed`."""
    buffer = b""
    while True:
        ready, _, _ = select.select([0], [], [], 1.0)
        if ready:
            data = os.read(0, 4096)
            if not data:
                return True
            buffer += data
            while buffer:
                if buffer.startswith(DONE):
                    return False
                line, sep, rest = buffer.partition(b"\n")
                if not sep:
                    break
                if line.startswith(FAILED):
                    failed.append(line[len(FAILED):].decode(errors="replace"))
                buffer = rest
        elif os.getppid() != parent:
            return True


def report(run_dir: Path, pid: int, failed: tuple[str, ...] = ()) -> list[str]:
    """Mark the stages still running in `run_dir` as failed and print the error line of each,
    and the line of each stage of `failed` (with its recorded error); returns their names."""
    from ragdash.rundir import Run  # loaded by main before the wait
    from ragdash.terminal import safe

    run = Run(run_dir)
    message = ABRUPT.format(pid=pid)
    stages = run.stages()
    names = [n for n, s in stages.items() if s.status == "running"]
    for name in names:
        run.set_stage(name, status="failed", error=message)
        print(f"ragdash: error: {name}: {message}", file=sys.stderr, flush=True)
    for name in dict.fromkeys(failed):
        if name in names:
            continue
        record = stages.get(name)
        error = record.error if record is not None and record.status == "failed" and \
            record.error else "failed (see the run's manifest)"
        print(f"ragdash: error: {name}: {safe(error)}; the process then ended abruptly "
              f"(pid {pid}, {ABRUPT_WHY})", file=sys.stderr, flush=True)
        names.append(name)
    return names


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the watched process's to handle
    run_dir, parent = Path(argv[0]), int(argv[1])
    import ragdash.rundir  # noqa: F401 (now, so that a report is written at once)
    import ragdash.terminal  # noqa: F401

    failed: list[str] = []
    if _parent_ended(parent, failed):
        report(run_dir, parent, tuple(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
