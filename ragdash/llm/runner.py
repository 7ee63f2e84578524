"""Runs LLM calls on a thread pool with progress, stopping early on failures that would repeat."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ragdash.llm.types import Backend, LLMError, LLMResult

FATAL_KINDS = frozenset({"connection", "config", "auth"})
"""Failures that would repeat for every call: the run stops instead of recording each."""

Progress = Callable[[int, int], None]


@dataclass
class CallOutcome:
    """What one call produced: a result or an error message (with the error kind)."""

    result: LLMResult | None
    error: str | None
    kind: str | None = None


def run_calls(backend: Backend, calls: Sequence[Callable[[Backend], Any]], concurrency: int,
              progress: Progress | None = None) -> list[Any]:
    """Runs `call(backend)` for each call on a thread pool; outcomes in call order.

    A call returns an outcome with `.kind` and `.error` (None when it succeeded) and never
    raises for one failed request.

    Stops submitting and raises the first fatal `LLMError` (see FATAL_KINDS); pending calls
    are cancelled, calls in flight are awaited (their results are cached).
    """
    total = len(calls)
    out: list[Any] = [None] * total
    done = 0
    if progress:
        progress(0, total)
    pending: dict[Future, int] = {}
    it = iter(enumerate(calls))
    fatal: Any = None
    with ThreadPoolExecutor(max_workers=max(1, concurrency),
                            thread_name_prefix="ragdash-llm") as pool:
        try:
            while True:
                while fatal is None and len(pending) < 2 * concurrency:
                    nxt = next(it, None)
                    if nxt is None:
                        break
                    pending[pool.submit(nxt[1], backend)] = nxt[0]
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = pending.pop(fut)
                    out[i] = outcome = fut.result()
                    done += 1
                    if progress:
                        progress(done, total)
                    if outcome.kind in FATAL_KINDS and fatal is None:
                        fatal = outcome
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    if fatal is not None:
        raise LLMError(f"stopped after {done} of {total} calls: {fatal.error}", kind=fatal.kind)
    return out
