"""What the metrics would cost, before any call: the prompts the steps would send (claims not
yet known are stood in for by the sentences of the answer and of the gold answer), priced with
`ragdash.llm.cost`. A lower bound: correction rounds after unreadable replies are not counted."""

from __future__ import annotations

from collections.abc import Iterable

from ragdash.budget import join_chunks
from ragdash.llm.cost import Estimate, estimate_prompts
from ragdash.llm.speed import Speed
from ragdash.metrics import prompts as P
from ragdash.metrics import resolve, steps_for
from ragdash.metrics.calls import MetricItem
from ragdash.metrics.parse import sentences

TOKENS_PER_CLAIM = 20
"""Tokens assumed per claim written in a reply, and per question generated."""
TOKENS_PER_VERDICT = 6


def planned_prompts(items: Iterable[MetricItem], use: Iterable[str] | str | None = None
                    ) -> tuple[list[str], list[int]]:
    """The prompt of every call the metrics `use` selects would make, and the reply tokens
    assumed for each. A prompt is counted once: the reply cache answers its repeats (a gold
    answer's claims, a chunk that several systems retrieved judged useful for one question)."""
    steps = set(steps_for(resolve(use)))
    prompts: list[str] = []
    outs: list[int] = []
    asked: set[str] = set()

    def add(prompt: str, tokens_out: int) -> None:
        if prompt not in asked:
            asked.add(prompt)
            prompts.append(prompt)
            outs.append(tokens_out)

    for it in items:
        if it.error is not None or not (it.answer or "").strip():
            continue
        answer = str(it.answer)
        mine = sentences(answer) or [answer]
        gold = sentences(it.gold) or [it.gold]
        if "answer_claims" in steps:
            add(P.claims_prompt(it.question, answer), TOKENS_PER_CLAIM * len(mine) + 10)
        if "gold_claims" in steps:
            add(P.claims_prompt(it.question, it.gold), TOKENS_PER_CLAIM * len(gold) + 10)
        if "precision_check" in steps:
            add(P.check_prompt(it.gold, mine), TOKENS_PER_VERDICT * len(mine) + 10)
        if "recall_check" in steps:
            add(P.check_prompt(answer, gold), TOKENS_PER_VERDICT * len(gold) + 10)
        if "questions" in steps:
            add(P.questions_prompt(answer), TOKENS_PER_CLAIM * P.QUESTIONS + 10)
        if it.chunks is None:
            continue
        context = join_chunks(it.chunks)
        for chunk in it.chunks:
            if "chunk_check" in steps:
                add(P.check_prompt(chunk, [*mine, *gold]),
                    TOKENS_PER_VERDICT * (len(mine) + len(gold)) + 10)
            if "chunk_useful" in steps:
                add(P.useful_prompt(it.question, it.gold, chunk), TOKENS_PER_VERDICT)
        if "nli" in steps:
            add(P.nli_prompt(context, mine), TOKENS_PER_VERDICT * len(mine) + 10)
        if "recall_attribution" in steps:
            add(P.attribution_prompt(it.question, context, gold),
                TOKENS_PER_VERDICT * len(gold) + 10)
    return prompts, outs


def estimate(items: Iterable[MetricItem], model: str, *, use: Iterable[str] | str | None = None,
             speed: Speed | None = None, backend: str | None = None,
             tokenizer: str = "cl100k") -> Estimate:
    """Calls, tokens, money and (given the model's `speed`) time of the metrics."""
    prompts, outs = planned_prompts(items, use)
    mean_out = sum(outs) / len(outs) if outs else 0.0
    return estimate_prompts([[{"role": "user", "content": p}] for p in prompts], model,
                            tokens_out=mean_out, speed=speed, tokenizer=tokenizer,
                            backend=backend)
