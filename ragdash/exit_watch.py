"""A watcher for a process that may be ended without a word: Ray ends its driver outright
(exit status 1, no Python exception) when the node or object store it runs on dies, so neither
the stage record nor the command's error line would be written.

`watched(run_dir)` starts `python -m ragdash.exit_watch <run_dir> <pid>` beside the block: a
small process that waits until this one says it is done. If this one ends first, the watcher
marks every stage still recorded as running in the run's manifest as failed and prints the
command's error line (`ragdash: error: <stage>: ...`) on the stderr they share (at once: it
has loaded what it writes with while it waited).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

DONE = b"."
ABRUPT = ("the ragdash process (pid {pid}) ended abruptly during this stage, without an error "
          "of its own: it was killed, or Ray ended it because the node or object store it ran "
          "on died (see Ray's logs, /tmp/ray/session_latest/logs); run again to resume")


@contextlib.contextmanager
def watched(run_dir: Path) -> Iterator[None]:
    """Run the block with a watcher that reports it if this process ends abruptly."""
    proc = subprocess.Popen([sys.executable, "-m", "ragdash.exit_watch", str(run_dir),
                             str(os.getpid())], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.write(DONE)
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)  # else reaped by the next Popen: no need to hold this up


def _parent_ended(parent: int) -> bool:
    """Wait for a word from `parent` on stdin: False once it says it is done, True when it
    ended without saying so (stdin closed, or this process was handed to another parent)."""
    while True:
        ready, _, _ = select.select([0], [], [], 1.0)
        if ready:
            data = os.read(0, 16)
            if data.startswith(DONE):
                return False
            if not data:
                return True
        elif os.getppid() != parent:
            return True


def report(run_dir: Path, pid: int) -> list[str]:
    """Mark the stages still running in `run_dir` as failed, print the error line of each;
    returns their names."""
    from ragdash.rundir import Run  # loaded by main before the wait

    run = Run(run_dir)
    message = ABRUPT.format(pid=pid)
    names = [n for n, s in run.stages().items() if s.status == "running"]
    for name in names:
        run.set_stage(name, status="failed", error=message)
        print(f"ragdash: error: {name}: {message}", file=sys.stderr, flush=True)
    return names


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the watched process's to handle
    run_dir, parent = Path(argv[0]), int(argv[1])
    import ragdash.rundir  # noqa: F401 (now, so that a report is written at once)

    if _parent_ended(parent):
        report(run_dir, parent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
