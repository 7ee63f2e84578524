"""What the metrics would cost, before any call: the prompts the steps would send, priced with
`ragdash.llm.cost`. Claims the reply cache already holds are used as they are; claims not yet
known are stood in for by the sentences of the answer and of the gold answer. Prompts the cache
answers are counted apart (a re-run does not send them, `cached_replies`). A lower bound:
correction rounds after unreadable replies are not counted."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from ragdash.budget import join_chunks
from ragdash.llm.cost import Estimate, count_tokens
from ragdash.llm.cost import estimate as cost_estimate
from ragdash.llm.settings import LLMSettings
from ragdash.llm.speed import Speed
from ragdash.llm.wrappers import CacheOnly
from ragdash.metrics import prompts as P
from ragdash.metrics import resolve, steps_for
from ragdash.metrics.calls import MetricItem, answer_task
from ragdash.metrics.parse import sentences

TOKENS_PER_CLAIM = 20
"""Tokens assumed per claim written in a reply, and per question generated."""
TOKENS_PER_VERDICT = 6

Claims = tuple[list[str] | None, list[str] | None]
"""An answer's claims and its gold answer's, each None while not known."""
KnownClaims = Callable[[MetricItem], Claims]


def planned_steps(items: Iterable[MetricItem], use: Iterable[str] | str | None = None,
                  claims: KnownClaims | None = None) -> list[tuple[str, str, int]]:
    """(step, prompt, reply tokens assumed) of every prompt the metrics `use` select would
    send, repeats included (`planned_prompts` counts each prompt once). `claims`: the claims
    already known per item (from the reply cache); the checks of known claims are the exact
    prompts a run sends, and a known empty list sends none (as `AnswerTask` does)."""
    steps = set(steps_for(resolve(use)))
    planned: list[tuple[str, str, int]] = []

    def add(step: str, prompt: str, tokens_out: int) -> None:
        if step in steps:
            planned.append((step, prompt, tokens_out))

    for it in items:
        if it.error is not None or not (it.answer or "").strip():
            continue
        answer = str(it.answer)
        said = sentences(it.gold)
        known_mine, known_gold = claims(it) if claims is not None else (None, None)
        mine = known_mine if known_mine is not None else sentences(answer) or [answer]
        gold = known_gold if known_gold is not None else said or [it.gold]
        add("answer_claims", P.claims_prompt(it.question, answer),
            TOKENS_PER_CLAIM * len(mine) + 10)
        add("gold_claims", P.claims_prompt(it.question, it.gold),
            TOKENS_PER_CLAIM * len(gold) + 10)
        if mine:
            add("precision_check", P.check_prompt(it.question, it.gold, mine),
                TOKENS_PER_VERDICT * len(mine) + 10)
        if gold:
            add("recall_check", P.check_prompt(it.question, answer, gold),
                TOKENS_PER_VERDICT * len(gold) + 10)
        add("questions", P.questions_prompt(answer), TOKENS_PER_CLAIM * P.QUESTIONS + 10)
        if it.chunks is None:
            continue
        context = join_chunks(it.chunks)
        for chunk in it.chunks:
            if mine or gold:
                add("chunk_check", P.check_prompt(it.question, chunk, [*mine, *gold]),
                    TOKENS_PER_VERDICT * (len(mine) + len(gold)) + 10)
            add("chunk_useful", P.useful_prompt(it.question, it.gold, chunk), TOKENS_PER_VERDICT)
        if mine:
            add("nli", P.nli_prompt(context, mine), TOKENS_PER_VERDICT * len(mine) + 10)
        if said:
            add("recall_attribution", P.attribution_prompt(it.question, context, said),
                TOKENS_PER_VERDICT * len(said) + 10)
    return planned


def cached_replies(items: Iterable[MetricItem], replies: CacheOnly, settings: LLMSettings
                   ) -> tuple[KnownClaims, set[str]]:
    """What the reply cache already holds for every metric's steps of `items`: the claims it
    knows per item, and the prompts it answers. `replies` answers only from the cache; each
    answer's steps run as a run with `settings` would
    ask them, correction rounds included, so the checks of cached claims are found too."""
    steps = steps_for(resolve(None))
    known: dict[MetricItem, Claims] = {}
    for it in items:
        if it in known or it.error is not None or not (it.answer or "").strip():
            continue
        v = answer_task(it, steps, settings)(replies).values
        known[it] = (v.get("answer_claims"), v.get("gold_claims"))
    return (lambda it: known.get(it, (None, None))), set(replies.answered)


def planned_prompts(items: Iterable[MetricItem], use: Iterable[str] | str | None = None
                    ) -> tuple[list[str], list[int]]:
    """The prompt of every call the metrics `use` selects would make, and the reply tokens
    assumed for each. A prompt is counted once: the reply cache answers its repeats (a gold
    answer's claims, a chunk that several systems retrieved judged useful for one question)."""
    prompts: list[str] = []
    outs: list[int] = []
    asked: set[str] = set()
    for _, prompt, out in planned_steps(items, use):
        if prompt not in asked:
            asked.add(prompt)
            prompts.append(prompt)
            outs.append(out)
    return prompts, outs


@dataclass(frozen=True)
class StepPlan:
    """Every distinct prompt of every metric's steps: the steps that would send it, its tokens
    (counted as `count_tokens` counts a chat message) and the reply tokens assumed; priced for
    any choice of metrics without counting tokens again (the dashboard re-prices it as boxes
    are ticked). A prompt is counted once when a chosen step sends it (the reply cache);
    `cached` holds the steps of each prompt the cache already answers, counted apart."""

    prompts: tuple[tuple[frozenset[str], int, int], ...]
    cached: tuple[frozenset[str], ...] = ()

    def totals(self, use: Iterable[str] | str | None) -> tuple[int, int, int]:
        """Calls, tokens in and tokens out of the prompts the metrics `use` select send."""
        steps = set(steps_for(resolve(use)))
        calls = t_in = t_out = 0
        for by, tokens_in, tokens_out in self.prompts:
            if by & steps:
                calls, t_in, t_out = calls + 1, t_in + tokens_in, t_out + tokens_out
        return calls, t_in, t_out

    def answered(self, use: Iterable[str] | str | None) -> int:
        """Calls of the metrics `use` selects that the reply cache answers (not in `totals`)."""
        steps = set(steps_for(resolve(use)))
        return sum(bool(by & steps) for by in self.cached)

    def estimate(self, use: Iterable[str] | str | None, model: str, *,
                 speed: Speed | None = None, backend: str | None = None) -> Estimate:
        """`ragdash.llm.cost.estimate` of the metrics `use` selects (calls at mean sizes)."""
        calls, t_in, t_out = self.totals(use)
        return cost_estimate(calls, t_in / calls if calls else 0.0,
                             t_out / calls if calls else 0.0, model, speed=speed,
                             backend=backend)


def step_plan(items: Iterable[MetricItem], tokenizer: str = "cl100k", *,
              claims: KnownClaims | None = None, answered: Collection[str] = ()) -> StepPlan:
    """The `StepPlan` of every metric's steps for `items`, with the claims already known and
    the prompts the reply cache answers (`cached_replies`) apart."""
    found: dict[str, tuple[set[str], int, int]] = {}
    cached: dict[str, set[str]] = {}
    for step, prompt, out in planned_steps(items, None, claims):
        if prompt in answered:
            cached.setdefault(prompt, set()).add(step)
        elif prompt in found:
            found[prompt][0].add(step)
        else:
            found[prompt] = ({step}, count_tokens([{"role": "user", "content": prompt}],
                                                  tokenizer), out)
    return StepPlan(tuple((frozenset(by), t_in, t_out) for by, t_in, t_out in found.values()),
                    tuple(frozenset(by) for by in cached.values()))


def estimate(items: Iterable[MetricItem], model: str, *, use: Iterable[str] | str | None = None,
             speed: Speed | None = None, backend: str | None = None,
             tokenizer: str = "cl100k") -> Estimate:
    """Calls, tokens, money and (given the model's `speed`) time of the metrics."""
    return step_plan(items, tokenizer).estimate(use, model, speed=speed, backend=backend)
