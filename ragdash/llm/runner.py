"""Runs LLM calls on a thread pool with progress, stopping early on failures that would repeat;
`dispatch_calls` spreads them over an executor's workers (Ray) with the same guarantees."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragdash.llm.types import Backend, LLMError, LLMResult, Messages

if TYPE_CHECKING:
    import pandas as pd

    from ragdash.executors import Executor
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.settings import LLMSettings

FATAL_KINDS = frozenset({"connection", "config", "auth"})
"""Failures that would repeat for every call: the run stops instead of recording each."""

Progress = Callable[[int, int], None]


@dataclass
class CallOutcome:
    """What one call produced: a result or an error message (with the error kind)."""

    result: LLMResult | None
    error: str | None
    kind: str | None = None


@dataclass(frozen=True)
class ChatCall:
    """One chat request as data: its `messages` (what a dry run prices: `ragdash.planning`) and
    its chat options. Called with a backend (by `run_calls`), it sends them and gives the
    outcome; a failed request becomes the outcome's error and kind instead of raising."""

    messages: Messages
    chat: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, backend: Backend) -> CallOutcome:
        try:
            return CallOutcome(backend.chat(self.messages, **self.chat), None)
        except LLMError as exc:
            return CallOutcome(None, str(exc), exc.kind)


def chat_call(messages: Messages, **chat: Any) -> ChatCall:
    """A call for `run_calls`: `backend.chat(messages, **chat)` as an outcome."""
    return ChatCall(messages, chat)


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


def dispatch_calls(backend: Backend, calls: Sequence[Callable[[Backend], Any]],
                   settings: LLMSettings, progress: Progress | None = None, *,
                   executor: Executor | None = None, cache: LLMCache | None = None) -> list[Any]:
    """`run_calls` on `backend` here, or, with an executor that runs elsewhere (Ray), in
    batches on its workers: each batch opens its own backend from `settings` on the same reply
    cache file and runs `settings.concurrency` calls at a time with `run_calls`, so retries,
    caching and error records are the same. Outcomes in call order. The API key given for this
    run is not shipped: workers read it from their environment (`settings.api_key_env`). A
    fatal failure in any batch raises its `LLMError` once the batches in flight are done."""
    if executor is None or executor.in_process or not calls:
        return run_calls(backend, calls, settings.concurrency or 1, progress)
    import pandas as pd

    from ragdash.executors import batch_size

    # a local llama.cpp server starts in every batch that misses the cache: one per worker
    local_server = settings.backend == "local" and not settings.base_url
    size = batch_size(executor, len(calls), most=len(calls), per_worker=1 if local_server else 4)
    out = executor.map_batches(
        pd.DataFrame({"call": list(calls)}), CallBatch, batch_size=size,
        args=(dataclasses.replace(settings, api_key=None),
              str(cache.path.resolve()) if cache is not None else None),
        progress=(lambda _m, d, t: progress(d, t)) if progress else None, label="LLM calls")
    fatal = out[out["fatal"].notna()]
    if len(fatal):
        raise LLMError(str(fatal["fatal"].iloc[0]), kind=fatal["kind"].iloc[0])
    return out["outcome"].tolist()


class CallBatch:
    """A batch of LLM calls (column `call`) on one worker: `run_calls` on a backend opened for
    the batch on the reply cache at `cache_path`; a fatal failure comes back as a value."""

    def __init__(self, settings: LLMSettings, cache_path: str | None):
        self.settings, self.cache_path = settings, cache_path

    def __call__(self, batch: pd.DataFrame, progress: Any = None) -> pd.DataFrame:
        import pandas as pd

        from ragdash.llm.cache import open_cache
        from ragdash.llm.factory import open_backend

        store = open_cache(self.cache_path)
        try:
            with open_backend(self.settings, cache=store) as be:
                outcomes = run_calls(be, batch["call"].tolist(), self.settings.concurrency or 1)
            return pd.DataFrame({"outcome": outcomes, "fatal": None, "kind": None})
        except LLMError as exc:
            return pd.DataFrame({"outcome": [None] * len(batch), "fatal": str(exc),
                                 "kind": exc.kind})
        finally:
            if store is not None:
                store.close()
