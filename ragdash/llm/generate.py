"""Answer generation: one call per (question, system, budget), in parallel, cached, resumable.

A failed call is recorded in the `error` column (answer null) and never raised, except for
failures that would hit every call (no server, bad key, missing model): those stop the run with
an `LLMError` after the finished calls are cached.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from ragdash.llm.cache import LLMCache
from ragdash.llm.factory import calls_session
from ragdash.llm.prompts import generation_messages
from ragdash.llm.runner import ChatCall, Progress, chat_call, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend, LLMError, LLMResult, Messages

if TYPE_CHECKING:
    from ragdash.executors import Executor

ANSWER_COLUMNS = ["qid", "system", "budget", "model", "prompt", "answer", "latency_s",
                  "tokens_in", "tokens_out", "error"]


class GenerationRequest(NamedTuple):
    qid: str
    system: str  # ragdash.constants.LLM_ONLY or a retriever name
    budget: int | None
    question: str
    context: str | None  # None: LLM-only prompt


def as_request(item: GenerationRequest | Sequence[Any] | Mapping[str, Any]) -> GenerationRequest:
    if isinstance(item, GenerationRequest):
        return item
    if isinstance(item, Mapping):
        return GenerationRequest(**{f: item.get(f) for f in GenerationRequest._fields})
    return GenerationRequest(*item)


def _not_empty(result: LLMResult) -> None:
    if not result.text.strip():
        raise LLMError("empty answer", kind="invalid_reply", retryable=True)


def generation_call(messages: Messages) -> ChatCall:
    """One generation call: an empty reply is an error, asked again and never cached."""
    return chat_call(messages, validate=_not_empty)


class GenerationPlan(NamedTuple):
    """The calls of a generation: one per distinct prompt, question by question (every system
    of the first questions first: the rate the ETA measures is the whole stage's mix, not the
    fast LLM-only calls first, and a stopped run holds whole questions), and per request the
    index of the call that answers it. What `generate` sends and a dry run prices."""

    requests: list[GenerationRequest]
    calls: list[ChatCall]
    slots: list[int]

    def per_request(self) -> list[ChatCall]:
        """One call per request (stand-in contexts, all alike, must not collapse into one)."""
        return [self.calls[i] for i in self.slots]


def generation_plan(requests: Iterable[GenerationRequest | Sequence[Any] | Mapping[str, Any]],
                    *, reference_prompts: bool = False, prompt: str = "paper"
                    ) -> GenerationPlan:
    """The calls of `requests` (`GenerationPlan`); identical prompts (e.g. two retrievers giving
    the same context) are one call."""
    reqs = [as_request(r) for r in requests]
    messages = [generation_messages(r.question, r.context, reference=reference_prompts,
                                    prompt=prompt) for r in reqs]
    keys = [json.dumps(m, sort_keys=True) for m in messages]
    rank = {q: n for n, q in enumerate(dict.fromkeys(str(r.qid) for r in reqs))}
    first: dict[str, int] = {}
    for i in sorted(range(len(reqs)), key=lambda i: (rank[str(reqs[i].qid)], i)):
        first.setdefault(keys[i], i)
    slot = {k: j for j, k in enumerate(first)}
    return GenerationPlan(reqs, [generation_call(messages[i]) for i in first.values()],
                          [slot[k] for k in keys])


def generate(requests: Iterable[GenerationRequest | Sequence[Any] | Mapping[str, Any]],
             settings: LLMSettings, *, cache: LLMCache | str | Path | None = None,
             progress: Progress | None = None, reference_prompts: bool = False,
             prompt: str = "paper", backend: Backend | None = None,
             executor: Executor | None = None) -> pd.DataFrame:
    """Answers for (qid, system, budget, question, context-or-None) requests.

    Columns: qid, system, budget, model, prompt, answer, latency_s, tokens_in, tokens_out, error;
    one row per request, in request order. `prompt` names the generation prompt
    (`GENERATION_PROMPTS`). Identical prompts are sent once. `progress(done, total)` is
    called as calls finish (total = distinct prompts). `backend`
    replaces the one built from `settings` (already wrapped with retries and cache).
    `executor`: where the calls run (`dispatch_calls`; default here, also when `backend` is
    given).
    """
    plan = generation_plan(requests, reference_prompts=reference_prompts, prompt=prompt)
    with calls_session(settings, cache, backend) as (be, store):
        done = dispatch_calls(be, plan.calls, settings, progress, cache=store,
                              executor=None if backend is not None else executor)
        outcomes = [done[i] for i in plan.slots]
        model = be.model
    rows = []
    for req, o in zip(plan.requests, outcomes, strict=True):
        r = o.result
        rows.append({"qid": str(req.qid), "system": req.system, "budget": req.budget,
                     "model": r.model if r else model, "prompt": prompt,
                     "answer": r.text.strip() if r else None,
                     "latency_s": r.latency_s if r else None,
                     "tokens_in": r.tokens_in if r else None,
                     "tokens_out": r.tokens_out if r else None, "error": o.error})
    return answers_frame(rows)


def answers_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=ANSWER_COLUMNS)
    for col in ("budget", "tokens_in", "tokens_out"):
        df[col] = df[col].astype("Int64")
    df["latency_s"] = df["latency_s"].astype("float64")
    for col in ("qid", "system", "model", "prompt", "answer", "error"):
        df[col] = df[col].astype("object").where(df[col].notna(), None)
    return df
