"""What LLM calls would cost before any is made: a stage's calls as data (`CallPlan`), the ones
the reply cache already answers left out, the rest priced with the model's measured speed
(`ragdash.llm.speed`) and `ragdash.llm.cost`. Every LLM stage's `plan` returns one
(`ragdash.stages.base.Stage.plan`); the dry run is a loop over them (`ragdash.planning`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ragdash.rundir.root import RunsRoot

if TYPE_CHECKING:
    from ragdash.llm.cost import Estimate
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend, Messages
    from ragdash.llm.wrappers import CacheOnly


@contextlib.contextmanager
def cache_only(settings: LLMSettings, root: RunsRoot) -> Iterator[CacheOnly | None]:
    """For a block, the backend of `settings` answering only from the reply cache of `root`
    (`CacheOnly`: no request); None when the runs root has no cache yet."""
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.speed import model_name
    from ragdash.llm.wrappers import CacheOnly

    if not root.llm_cache.exists():
        yield None
        return
    with LLMCache(root.llm_cache) as cache:
        yield CacheOnly(settings, model_name(settings), cache)


def cache_answers(calls: Iterable[Callable[[Backend], Any]], settings: LLMSettings,
                  root: RunsRoot) -> list[bool]:
    """Per call, whether the reply cache of `root` answers it whole, so that a run with
    `settings` would not send it: each call is asked of the cache alone (`cache_only`), every
    question it asks (correction rounds, a second question) included."""
    with cache_only(settings, root) as replies:
        return [replies is not None and c(replies).error is None for c in calls]


def not_cached(calls: Sequence[Any], settings: LLMSettings, root: RunsRoot
               ) -> tuple[list[Any], int]:
    """The calls a run with `settings` would send (those the reply cache of `root` does not
    answer whole, `cache_answers`), and how many it answers."""
    done = cache_answers(calls, settings, root)
    return [c for c, d in zip(calls, done, strict=True) if not d], sum(done)


def price(calls: Iterable[Any], settings: LLMSettings, root: RunsRoot,
          tokens_out: float) -> Estimate:
    """`estimate_prompts` of the messages `calls` send first, with the model of `settings` at
    its measured speed (`call_speed`) and `tokens_out` reply tokens each."""
    from ragdash.llm.cost import estimate_prompts
    from ragdash.llm.speed import call_speed, model_name

    model = model_name(settings)
    return estimate_prompts([c.messages for c in calls], model, tokens_out=tokens_out,
                            speed=call_speed(root, model, settings.backend),
                            backend=settings.backend)


def answered_note(part: str, cached: int) -> str:
    """The dry run's note on the calls of `part` the reply cache answers."""
    return f"{part}: {cached:,} more calls answered by the reply cache (not counted)"


class Priced(Protocol):
    """A stage's plan: what its calls would cost with an LLM, and how many of them the reply
    cache under a runs root answers (left out of the estimate)."""

    notes: tuple[str, ...]

    def price(self, llm: LLMSettings, root: RunsRoot) -> tuple[Estimate, int]: ...


@dataclass(frozen=True)
class CallPlan:
    """The calls one stage would send, as data (each with the `messages` it sends first, called
    with a backend as a run calls it: `ragdash.llm.runner.ChatCall`, the judge's calls), and
    the reply tokens assumed per call. `cached=False`: stand-in calls a cache cannot answer
    (contexts or answers not made yet), priced whole."""

    calls: Sequence[Any]
    tokens_out: float
    cached: bool = True
    notes: tuple[str, ...] = ()

    def price(self, llm: LLMSettings, root: RunsRoot) -> tuple[Estimate, int]:
        """The estimate of the calls a run with `llm` would send, and how many the reply cache
        of `root` answers."""
        asked, done = not_cached(self.calls, llm, root) if self.cached else (self.calls, 0)
        return price(asked, llm, root, self.tokens_out), done


class Recording:
    """A backend that sends nothing: each chat is kept as the call it would have been
    (`calls`) and answered with an error of kind `planned`, which the caller records as a
    failed call. It lets a step that decides its calls as it goes (the evidence finder) be
    planned by running it."""

    name = "planned"

    def __init__(self, model: str):
        self.model = model
        self.calls: list[Any] = []
        self._lock = threading.Lock()

    def call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return dict(params)

    def chat(self, messages: Messages, *, json_schema: dict | None = None,
             **params: Any) -> Any:
        from ragdash.llm.runner import chat_call
        from ragdash.llm.types import LLMError

        chat = {**({"json_schema": json_schema} if json_schema is not None else {}), **params}
        with self._lock:  # run_calls calls from its threads
            self.calls.append(chat_call(messages, **chat))
        raise LLMError("planned, not sent", kind="planned")

