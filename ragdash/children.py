"""Child processes that end with the process that started them.

A job killed outright (`kill -9`, the OOM killer) runs no cleanup, so a child it started (the
PISA indexer, the local LLM server) would run on, holding CPU and a temp folder. On Linux the
child asks the kernel for a signal when its parent dies (`prctl(PR_SET_PDEATHSIG)`), set
between fork and exec, so no moment is left uncovered.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A `preexec_fn` for `subprocess`: the child gets `sig` when this process (the thread
    that starts it) ends, however it ends, and exits at once if that happened before it could
    ask; None off Linux (no such call)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    parent = os.getpid()

    def arm() -> None:  # pragma: no cover - runs in the child, between fork and exec
        prctl(PR_SET_PDEATHSIG, int(sig))
        if os.getppid() != parent:  # the parent died before the call
            os._exit(1)

    return arm
