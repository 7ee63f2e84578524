"""Sub-questions for multi-query retrieval (MLQ, the paper's §3.1) through the LLM layer: one call
per distinct question, cached in the reply cache, retried, on the thread pool or an executor's
workers, as generation is. The replies are parsed by the retriever (`ragdash.retrieval.multiquery`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragdash.llm.cache import LLMCache
from ragdash.llm.factory import calls_session
from ragdash.llm.prompts import decompose_messages
from ragdash.llm.runner import ChatCall, Progress, chat_call, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend, LLMError

if TYPE_CHECKING:
    from ragdash.executors import Executor


def decompose_calls(questions: Sequence[str], *, mode: str = "default", max_queries: int = 5
                    ) -> tuple[list[str], list[ChatCall]]:
    """The distinct questions and the call that asks each one's sub-questions: what `decompose`
    sends and what a dry run prices (`ragdash.planning`)."""
    distinct = list(dict.fromkeys(questions))
    return distinct, [chat_call(decompose_messages(q, mode=mode, max_queries=max_queries))
                      for q in distinct]


def decompose(questions: Sequence[str], settings: LLMSettings, *, mode: str = "default",
              max_queries: int = 5, cache: LLMCache | str | Path | None = None,
              backend: Backend | None = None, progress: Progress | None = None,
              executor: Executor | None = None) -> list[str]:
    """The LLM's reply to the sub-question prompt (`prompts.decompose_messages`) of each
    question, in question order; a question asked twice is sent once.

    MLQ cannot retrieve for a question without its sub-questions, so a call that still fails
    after the retries raises `LLMError` (naming how many failed) once the others are done; the
    finished ones are cached, and a re-run asks only the failed ones. `backend` replaces the
    one opened from `settings` (already wrapped with retries and cache)."""
    distinct, calls = decompose_calls(questions, mode=mode, max_queries=max_queries)
    with calls_session(settings, cache, backend) as (be, store):
        outcomes = dispatch_calls(be, calls, settings, progress, cache=store,
                                  executor=None if backend is not None else executor)
    failed = [o for o in outcomes if o.result is None]
    if failed:
        raise LLMError(f"mlq: the sub-questions of {len(failed)} of {len(distinct)} questions "
                       f"could not be generated: {failed[0].error}", kind=failed[0].kind or "error")
    replies = {q: o.result.text for q, o in zip(distinct, outcomes, strict=True)}
    return [replies[q] for q in questions]
