"""Progress bars on the terminal for the stages' progress callbacks (`-q` turns them off)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


class Bars:
    """tqdm progress bars keyed by stage message prefix; a context manager closing them."""

    def __init__(self, quiet: bool):
        self.quiet, self.bars = quiet, {}

    def __call__(self, msg: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        key = msg.split(":")[0]
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
