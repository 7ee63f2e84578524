"""The LLM steps of one answer (`metrics.STEPS`) as one picklable call for the LLM runner
(`ragdash.llm.runner.dispatch_calls`: thread pool or an executor's workers, reply cache,
retries). Each step is one prompt, read defensively (`metrics.parse`); an unreadable reply gets
a correction message (as the judge's do) and, if that keeps failing, the step is recorded with
its error and no value, so every metric that reads it is NaN with that error, never 0."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from ragdash.budget import join_chunks
from ragdash.llm.ask import Exchange, ask
from ragdash.llm.runner import FATAL_KINDS
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend
from ragdash.metrics import prompts as P
from ragdash.metrics.parse import (
    ENTAILMENT,
    parse_claims,
    parse_labels,
    parse_questions,
    parse_verdict,
    sentences,
)


class MetricItem(NamedTuple):
    """One answer to measure: its question, gold answer, the answer, and the chunks of the
    context C_N it was generated from (None: an LLM-only answer), each flagged when it holds a
    gold relevant part."""

    qid: str
    system: str
    budget: int | None
    question: str
    gold: str
    answer: str | None
    chunks: tuple[str, ...] | None = None
    parts_relevant: tuple[bool, ...] | None = None
    error: str | None = None  # the generation error, if any


@dataclass
class TaskOutcome:
    """What the steps of one answer produced: parsed values, errors and raw replies by step,
    and the calls' cost, in all and by step (`cost`: step -> [calls, tokens in, tokens out]).
    `error`/`kind` are set only for a failure that would repeat for every
    call (no server, bad key), which stops the run."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    model: str | None = None
    error: str | None = None
    kind: str | None = None
    cost: dict[str, list[int]] = field(default_factory=dict)


_CLAIMS_FORM = 'a JSON object {"claims": ["...", ...]}'


def _labels_form(n: int, binary: bool) -> str:
    values = "values 1 or 0" if binary else '"entailment", "neutral" or "contradiction"'
    return f'a JSON object {{"verdicts": [...]}} holding exactly {n} {values}'


@dataclass(frozen=True)
class Reply:
    """What a step's prompt asks for: `claims` (of `text`), `labels` (an NLI label per claim),
    `binary` (1 or 0 per sentence or claim), `questions` or a `verdict`; `n` labels."""

    kind: str
    n: int = 0
    text: str = ""

    def reading(self) -> tuple[dict, Callable[[str], Any], str]:
        """The JSON schema a run asks with, how it reads the reply, and the form a correction
        message names."""
        n = self.n
        return {"claims": (P.claims_schema(), parse_claims, _CLAIMS_FORM),
                "labels": (P.labels_schema(n, binary=False), lambda t: parse_labels(t, n),
                           _labels_form(n, False)),
                "binary": (P.labels_schema(n, binary=True), lambda t: parse_labels(t, n),
                           _labels_form(n, True)),
                "questions": (P.questions_schema(), parse_questions,
                              'a JSON object {"questions": [...], "noncommittal": 0 or 1}'),
                "verdict": (P.verdict_schema(), parse_verdict,
                            'a JSON object {"verdict": 1} or {"verdict": 0}')}[self.kind]


class Asker(Protocol):
    """Puts one step's prompt: a run asks the LLM (`AnswerTask`), a plan records the prompt and
    stands in for the reply (`ragdash.metrics.plan.planned_steps`). Returns the parsed reply,
    None when the step failed; `stopped` once a failure would repeat for every call."""

    stopped: bool

    def __call__(self, step: str, prompt: str, reply: Reply) -> Any: ...


def answer_steps(it: MetricItem, steps: tuple[str, ...] | frozenset[str], ask: Asker
                 ) -> dict[str, Any]:
    """The LLM steps `steps` of one answer, in STEPS order: the one declaration of the prompt
    each step sends and what it reads, which the run and the dry run both walk. A step whose
    input failed (None) is skipped; a check of no claims sends nothing (an empty list)."""
    v: dict[str, Any] = {}
    answer, chunks = str(it.answer), it.chunks

    def go(step: str) -> bool:
        return step in steps and not ask.stopped

    def entailed(step: str, prompt: str, reply: Reply) -> list[bool] | None:
        labels = ask(step, prompt, reply)
        return None if labels is None else [lab == ENTAILMENT for lab in labels]

    def check(step: str, reference: str, claims: list[str]) -> list[bool] | None:
        """Each claim entailed by `reference`? (no call for no claims)"""
        return entailed(step, P.check_prompt(it.question, reference, claims),
                        Reply("labels", len(claims))) if claims else []

    if "answer_claims" in steps:
        v["answer_claims"] = ask("answer_claims", P.claims_prompt(it.question, answer),
                                 Reply("claims", text=answer))
    if go("gold_claims"):
        v["gold_claims"] = ask("gold_claims", P.claims_prompt(it.question, it.gold),
                               Reply("claims", text=it.gold))
    mine, gold = v.get("answer_claims"), v.get("gold_claims")
    if go("precision_check") and mine is not None:
        v["precision_check"] = check("precision_check", it.gold, mine)
    if go("recall_check") and gold is not None:
        v["recall_check"] = check("recall_check", answer, gold)
    if go("questions"):
        v["questions"] = ask("questions", P.questions_prompt(answer), Reply("questions"))
    if chunks is None:
        return v
    if go("chunk_check") and (mine is not None or gold is not None):
        # every claim (the answer's, then the gold answer's) against each chunk: one call per
        # chunk (RAGChecker's retrieved2response and retrieved2answer)
        rows_mine, rows_gold = [], []
        for chunk in chunks:
            found = check("chunk_check", chunk, [*(mine or []), *(gold or [])])
            if found is None:
                break
            rows_mine.append(found[: len(mine or [])])
            rows_gold.append(found[len(mine or []):])
        else:
            v["chunk_answer"], v["chunk_gold"] = rows_mine, rows_gold
    context = join_chunks(chunks)
    if go("nli") and mine is not None:
        v["nli"] = entailed("nli", P.nli_prompt(context, mine), Reply("binary", len(mine))) \
            if mine else []
    if go("chunk_useful"):
        useful = [ask("chunk_useful", P.useful_prompt(it.question, it.gold, c), Reply("verdict"))
                  for c in chunks]
        v["chunk_useful"] = None if any(u is None for u in useful) else useful
    if go("recall_attribution"):
        said = sentences(it.gold)
        v["recall_attribution"] = entailed(
            "recall_attribution", P.attribution_prompt(it.question, context, said),
            Reply("binary", len(said))) if said else []
    return v


@dataclass
class AnswerTask:
    """The steps `steps` of one answer (`answer_steps`), each asked of the LLM with a JSON
    schema and correction rounds for an unreadable reply."""

    item: MetricItem
    steps: tuple[str, ...]
    use_schema: bool = True
    max_corrections: int = 1

    def __call__(self, backend: Backend) -> TaskOutcome:
        out = TaskOutcome()
        out.values.update(answer_steps(self.item, self.steps, _RunAsker(self, backend, out)))
        return out


@dataclass
class _RunAsker:
    """`Asker` of a run: the step's prompt to the LLM, the reply read with the step's schema."""

    task: AnswerTask
    backend: Backend
    out: TaskOutcome

    @property
    def stopped(self) -> bool:
        return bool(self.out.kind)

    def __call__(self, step: str, prompt: str, reply: Reply) -> Any:
        """One prompt; the parsed reply, or None with the step's error recorded."""
        schema, parse, form = reply.reading()
        out, o = self.out, Exchange()
        value = ask(self.backend, [{"role": "user", "content": prompt}],
                    schema if self.task.use_schema else None, parse,
                    lambda problem: P.correction(form, problem), self.task.max_corrections, o,
                    what=f"{step} reply")
        out.calls += o.attempts
        out.tokens_in += o.tokens_in
        out.tokens_out += o.tokens_out
        out.latency_s += o.latency_s
        spent = out.cost.setdefault(step, [0, 0, 0])
        spent[0] += o.attempts
        spent[1] += o.tokens_in
        spent[2] += o.tokens_out
        out.model = o.model or out.model
        out.raw.setdefault(step, []).append(o.raw)
        if o.error is not None:
            out.errors[step] = o.error
            if o.kind in FATAL_KINDS:
                out.error, out.kind = o.error, o.kind
            return None
        return value


def answer_task(item: MetricItem, steps: tuple[str, ...], settings: LLMSettings,
                max_corrections: int | None = None) -> AnswerTask:
    """The steps of one answer as `settings` ask them: with JSON schemas unless structured
    output is off, and as many correction rounds as retries (else `max_corrections`)."""
    corrections = settings.retries if max_corrections is None else max_corrections
    return AnswerTask(item, steps, settings.structured != "none", max(0, corrections))
