"""SIGTERM stops a command as Ctrl-C does: the running stage is recorded as interrupted and
finished work is kept."""

from __future__ import annotations

import signal
import threading
from typing import Any


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def sigterm_interrupts() -> Any:
    """Make SIGTERM raise KeyboardInterrupt; returns the handler it replaced (None off the
    main thread, where signals cannot be handled), for `restore`."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


def restore(previous: Any) -> None:
    """Put back the SIGTERM handler `sigterm_interrupts` replaced."""
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
