"""Before any call: what generating a synthetic test set would cost (`ragdash.llm.cost`).

Input tokens are counted on the actual prompts of the sampled items. Output tokens are assumed:
REPLY_TOKENS per question reply plus SPAN_TOKENS per span, and ANSWER_TOKENS per leakage reply
(at most one per item: only kept pairs are asked). Time comes from the latencies measured in
the LLM reply cache for the same model, or for a local model never called yet, from the bundled
demos' calls (`ragdash.llm.speed.call_speed`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragdash.llm.cost import Estimate, estimate_prompts
from ragdash.llm.prompts import generation_messages
from ragdash.llm.settings import LLMSettings
from ragdash.rundir.root import RunsRoot
from ragdash.synth.sample import Item
from ragdash.synth.settings import SynthSettings
from ragdash.synth.synthesize import item_messages

REPLY_TOKENS = 40
SPAN_TOKENS = 45
ANSWER_TOKENS = 40
TYPICAL_QUESTION = "In which year did the company named in the annual report open its first " \
                   "office outside the country?"
"""Stands in for the questions the leakage check will ask (about 20 tokens)."""


def estimate(items: Sequence[Item], settings: SynthSettings, llm: LLMSettings,
             root: RunsRoot) -> dict[str, Estimate]:
    """{'questions': ..., and with the leakage check 'leakage check (at most)': ...}; the
    speed of `llm` as the runs root's reply cache knows it."""
    from ragdash.llm.speed import call_speed, model_name

    model = model_name(llm)
    speed = call_speed(root, model, llm.backend)
    out = {"questions": estimate_prompts(
        [item_messages(i) for i in items], model, tokens_out=REPLY_TOKENS + SPAN_TOKENS *
        settings.hops, speed=speed, backend=llm.backend)}
    if settings.check_leakage:
        out["leakage check (at most)"] = estimate_prompts(
            [generation_messages(TYPICAL_QUESTION)] * len(items), model,
            tokens_out=ANSWER_TOKENS, speed=speed, backend=llm.backend)
    return out


def describe(e: Estimate) -> str:
    """One line: calls, tokens, money and time."""
    money = "price unknown" if e.usd is None else "free" if e.usd == 0 else f"${e.usd:,.2f}"
    time = e.time_text()
    return (f"{e.calls:,} calls to {e.model}, ~{e.tokens_in:,} tokens in, ~{e.tokens_out:,} "
            f"out, {money}, {time}")
