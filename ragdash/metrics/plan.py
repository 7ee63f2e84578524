"""What the metrics would cost, before any call: the prompts the steps would send, priced with
`ragdash.llm.cost`. Claims the reply cache already holds are used as they are; claims not yet
known are stood in for by the sentences of the answer and of the gold answer. Prompts the cache
answers are counted apart (a re-run does not send them, `cached_replies`). A lower bound:
correction rounds after unreadable replies are not counted."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdash.llm.cost import Estimate, count_tokens
from ragdash.llm.cost import estimate as cost_estimate
from ragdash.llm.settings import LLMSettings
from ragdash.llm.speed import Speed
from ragdash.llm.wrappers import CacheOnly
from ragdash.metrics import prompts as P
from ragdash.metrics import resolve, steps_for
from ragdash.metrics.calls import MetricItem, Reply, answer_steps, answer_task
from ragdash.metrics.parse import ENTAILMENT, sentences
from ragdash.rundir.root import RunsRoot

TOKENS_PER_CLAIM = 20
"""Tokens assumed per claim written in a reply, and per question generated."""
TOKENS_PER_VERDICT = 6

Claims = tuple[list[str] | None, list[str] | None]
"""An answer's claims and its gold answer's, each None while not known."""
KnownClaims = Callable[[MetricItem], Claims]


@dataclass
class _PlanAsker:
    """`Asker` of a plan: records each prompt with the reply tokens assumed for it, and stands
    in for the reply: the claims known from the reply cache, else the sentences of the text
    (a claim per sentence); every check entailed (its value is never read)."""

    known: Claims
    planned: list[tuple[str, str, int]]
    stopped: bool = False

    def __call__(self, step: str, prompt: str, reply: Reply) -> Any:
        if reply.kind == "claims":
            given = self.known[0 if step == "answer_claims" else 1]
            value: Any = given if given is not None else sentences(reply.text) or [reply.text]
            tokens_out = TOKENS_PER_CLAIM * len(value) + 10
        elif reply.kind in ("labels", "binary"):
            value, tokens_out = [ENTAILMENT] * reply.n, TOKENS_PER_VERDICT * reply.n + 10
        elif reply.kind == "questions":
            value, tokens_out = ([], False), TOKENS_PER_CLAIM * P.QUESTIONS + 10
        else:
            value, tokens_out = True, TOKENS_PER_VERDICT
        self.planned.append((step, prompt, tokens_out))
        return value


def planned_steps(items: Iterable[MetricItem], use: Iterable[str] | str | None = None,
                  claims: KnownClaims | None = None) -> list[tuple[str, str, int]]:
    """(step, prompt, reply tokens assumed) of every prompt the metrics `use` select would
    send, repeats included (`planned_prompts` counts each prompt once): the steps a run walks
    (`ragdash.metrics.calls.answer_steps`), with stand-in replies. `claims`: the claims
    already known per item (from the reply cache); the checks of known claims are the exact
    prompts a run sends, and a known empty list sends none."""
    steps = frozenset(steps_for(resolve(use)))
    planned: list[tuple[str, str, int]] = []
    for it in items:
        if it.error is not None or not (it.answer or "").strip():
            continue
        known = claims(it) if claims is not None else (None, None)
        answer_steps(it, steps, _PlanAsker(known, planned))
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

    def chosen(self, use: Iterable[str] | str | None) -> ChosenSteps:
        """The prompts of the metrics `use` selects, to price with an LLM."""
        return ChosenSteps(self, use if use is None or isinstance(use, str) else tuple(use))

    def estimate(self, use: Iterable[str] | str | None, model: str, *,
                 speed: Speed | None = None, backend: str | None = None) -> Estimate:
        """`ragdash.llm.cost.estimate` of the metrics `use` selects (calls at mean sizes)."""
        calls, t_in, t_out = self.totals(use)
        return cost_estimate(calls, t_in / calls if calls else 0.0,
                             t_out / calls if calls else 0.0, model, speed=speed,
                             backend=backend)


@dataclass(frozen=True)
class ChosenSteps:
    """The prompts of a `StepPlan` that the metrics `use` selects: what the metrics stage's
    plan prices (`ragdash.stages.metrics.plan`, and the metric chooser as boxes are ticked)."""

    steps: StepPlan
    use: tuple[str, ...] | str | None
    notes: tuple[str, ...] = ()

    def price(self, llm: LLMSettings, root: RunsRoot) -> tuple[Estimate, int]:
        """The estimate with the model of `llm` at its measured speed, and the calls the reply
        cache answers (left out of it)."""
        from ragdash.llm.speed import call_speed, model_name

        model = model_name(llm)
        return (self.steps.estimate(self.use, model, backend=llm.backend,
                                    speed=call_speed(root, model, llm.backend)),
                self.steps.answered(self.use))


def planned_with(items: Sequence[MetricItem], replies: CacheOnly | None = None,
                 settings: LLMSettings | None = None) -> StepPlan:
    """The `StepPlan` of `items` with what the reply cache already holds (`replies`, asked as
    a run with `settings` would ask: `cached_replies`), in one step; without `replies`, every
    prompt is to send."""
    if replies is None or settings is None:
        return step_plan(items)
    claims, answered = cached_replies(items, replies, settings)
    return step_plan(items, claims=claims, answered=answered)


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
