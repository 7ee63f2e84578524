"""Generating a synthetic test set: sample chunks (`sample`), ask the LLM on each for a
question, its answer and the verbatim span that answers it (`ragdash.llm.prompts`, read by
`reply`), keep the pairs whose span occurs verbatim in the document and holds the answer
(`verify`) and that repeat no kept question (`dedup`), and optionally ask each kept question
without the document, rejecting it when the reply holds the answer (leakage).

Every call runs through `run_calls` on one backend with the retries and the reply cache of
answer generation (`ragdash.llm.wrappers`): a finished call is committed at once, so a run that
was interrupted, run again with the same settings, asks only what it had not finished. A failed
call rejects its pair ("llm_error"); failures that would repeat for every call (no server, a
refused key) stop the run with an `LLMError`.

The leakage check asks the paper's LLM-only prompt (`generation_messages(question)`); the reply
matches when it holds the normalised answer (`ragdash.evidence.normalize.contains_answer`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragdash.data.schema import Document
from ragdash.evidence.normalize import contains_answer
from ragdash.llm.prompts import (
    generation_messages,
    synth_messages,
    synth_prompt_version,
    synth_schema,
)
from ragdash.synth.dedup import near_duplicates
from ragdash.synth.records import Attempt, SynthResult
from ragdash.synth.reply import parse_reply
from ragdash.synth.sample import Item, sample
from ragdash.synth.settings import SynthSettings, check
from ragdash.synth.verify import Verifier

if TYPE_CHECKING:
    from pathlib import Path

    from ragdash.evidence.rank import Embed
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import Backend

Progress = Callable[[str, int, int], None]
ASKING = "synth: asking the LLM for questions"
CHECKING = "synth: checking spans and duplicates"
LEAKAGE = "synth: asking the kept questions without the documents"


def item_messages(item: Item) -> list[dict[str, str]]:
    """The prompt of one item: its chunk(s) with their documents' titles."""
    return synth_messages([(c.title or c.doc_id, c.text) for c in item.chunks])


def _ask(backend: Backend, attempts: list[Attempt], items: Sequence[Item], hops: int,
         concurrency: int, say: Progress) -> None:
    from ragdash.llm.runner import chat_call, run_calls

    schema = synth_schema(hops)
    calls = [chat_call(item_messages(i), json_schema=schema) for i in items]
    outcomes = run_calls(backend, calls, concurrency, lambda d, t: say(ASKING, d, t))
    for a, o in zip(attempts, outcomes, strict=True):
        if o.result is None:
            a.reject("llm_error", o.error or "")
        else:
            a.raw = o.result.text
            a.reply = parse_reply(a.raw, hops)


def _dedup(attempts: list[Attempt], threshold: float, embed: Embed | None) -> None:
    kept = [a for a in attempts if a.kept]
    for a, dup in zip(kept, near_duplicates([a.reply.question for a in kept if a.reply],
                                            threshold, embed), strict=True):
        if dup is not None:
            a.reject("duplicate", f"of {kept[dup[0]].qid} (cosine {dup[1]:.2f})")


def _leakage(backend: Backend, attempts: list[Attempt], concurrency: int,
             say: Progress) -> None:
    from ragdash.llm.runner import chat_call, run_calls

    kept = [a for a in attempts if a.kept and a.reply]
    calls = [chat_call(generation_messages(a.reply.question)) for a in kept if a.reply]
    outcomes = run_calls(backend, calls, concurrency, lambda d, t: say(LEAKAGE, d, t))
    for a, o in zip(kept, outcomes, strict=True):
        assert a.reply is not None
        if o.result is None:
            a.reject("llm_error", f"the leakage check's call: {o.error}")
        elif contains_answer(o.result.text, a.reply.answer):
            a.reject("leaked", f"without the document it replied {o.result.text.strip()[:200]!r}")


def synthesize(documents: Sequence[Document], settings: SynthSettings, llm: LLMSettings, *,
               items: Sequence[Item] | None = None, cache: LLMCache | str | Path | None = None,
               backend: Backend | None = None, embed: Embed | None = None,
               progress: Progress | None = None) -> SynthResult:
    """A synthetic test set from `documents` (module docstring). `items`: the sample, when
    already drawn (`sample`); `cache`: the LLM reply cache; `backend` replaces the one built
    from `llm`; `embed` replaces MiniLM for the duplicate check."""
    from ragdash.llm.cache import open_cache
    from ragdash.llm.factory import open_backend

    settings = check(settings)
    say = progress or (lambda message, done, total: None)
    items = list(items) if items is not None else sample(documents, settings)
    attempts = [Attempt(i.qid, i.chunks) for i in items]
    concurrency = llm.concurrency or 1
    store = open_cache(cache)
    try:
        with (contextlib.nullcontext(backend) if backend is not None
              else open_backend(llm, cache=store)) as be:
            _ask(be, attempts, items, settings.hops, concurrency, say)
            say(CHECKING, 0, len(attempts))
            verifier = Verifier(documents)
            for a in attempts:
                if a.reason is None:
                    verifier.check(a)
            _dedup(attempts, settings.dedup_threshold, embed)
            say(CHECKING, len(attempts), len(attempts))
            if settings.check_leakage:
                _leakage(be, attempts, concurrency, say)
            model = be.model
    finally:
        if store is not None and store is not cache:
            store.close()
    return SynthResult(attempts, settings, model, synth_prompt_version(), len(documents))
