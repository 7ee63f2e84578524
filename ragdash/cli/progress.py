"""Progress bars on the terminal for the stages' progress callbacks (`-q` turns them off); when
stderr is not a terminal (a pipe, a log file, CI), plain lines instead: a stage's progress at
each tenth and at its end, never a bar redrawn with carriage returns."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any


class Bars:
    """tqdm progress bars keyed by stage message prefix; a context manager closing them."""

    def __init__(self, quiet: bool):
        self.quiet, self.bars = quiet, {}
        self.tty = sys.stderr.isatty()
        self.said: dict[str, int] = {}  # plain lines: the last tenth said per stage

    def _line(self, key: str, msg: str, done: int, total: int) -> None:
        tenth = 10 if total <= 0 else min(10, done * 10 // total)
        if self.said.get(key) == tenth:
            return
        self.said[key] = tenth
        print(f"{msg}: {done:,} of {total:,}", file=sys.stderr, flush=True)

    def __call__(self, msg: str, done: int, total: int) -> None:
        if self.quiet:
            return
        key = msg.split(":")[0]
        if not self.tty:
            self._line(key, msg, done, total)
            return
        from tqdm import tqdm

        bar = self.bars.get(key)
        if bar is None or bar.total != total:
            if bar is not None:
                bar.close()
            bar = self.bars[key] = tqdm(total=total, desc=msg, unit="step", leave=False)
        bar.set_description(msg)
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()

    def __enter__(self) -> Bars:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def with_bars(run: Callable[..., int]) -> Callable[[argparse.Namespace], int]:
    """`run(args, progress=...)` with tqdm bars (none with --quiet), closed when it returns."""
    def bars_run(args: argparse.Namespace) -> int:
        with Bars(args.quiet) as bars:
            return run(args, progress=bars)
    return bars_run
