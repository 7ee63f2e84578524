"""The LLM steps of one answer (`metrics.STEPS`) as one picklable call for the LLM runner
(`ragdash.llm.runner.dispatch_calls`: thread pool or an executor's workers, reply cache,
retries). Each step is one prompt, read defensively (`metrics.parse`); an unreadable reply gets
a correction message (as the judge's do) and, if that keeps failing, the step is recorded with
its error and no value, so every metric that reads it is NaN with that error, never 0."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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


@dataclass
class AnswerTask:
    """The steps `steps` of one answer, in STEPS order (a step whose input failed is skipped)."""

    item: MetricItem
    steps: tuple[str, ...]
    use_schema: bool = True
    max_corrections: int = 1

    def _ask(self, backend: Backend, step: str, prompt: str, schema: dict,
             parse: Callable[[str], Any], form: str, out: TaskOutcome) -> Any:
        """One prompt; the parsed reply, or None with the step's error recorded."""
        o = Exchange()
        value = ask(backend, [{"role": "user", "content": prompt}],
                    schema if self.use_schema else None, parse,
                    lambda problem: P.correction(form, problem), self.max_corrections, o,
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

    def _check(self, backend: Backend, step: str, reference: str, claims: list[str],
               out: TaskOutcome) -> list[bool] | None:
        """Each claim entailed by `reference`? (no call for no claims)"""
        if not claims:
            return []
        n = len(claims)
        labels = self._ask(backend, step, P.check_prompt(self.item.question, reference, claims),
                           P.labels_schema(n, binary=False), lambda t: parse_labels(t, n),
                           _labels_form(n, False), out)
        return None if labels is None else [lab == ENTAILMENT for lab in labels]

    def _binary(self, backend: Backend, step: str, prompt: str, n: int,
                out: TaskOutcome) -> list[bool] | None:
        labels = self._ask(backend, step, prompt, P.labels_schema(n, binary=True),
                           lambda t: parse_labels(t, n), _labels_form(n, True), out)
        return None if labels is None else [lab == ENTAILMENT for lab in labels]

    def __call__(self, backend: Backend) -> TaskOutcome:
        it, out, steps = self.item, TaskOutcome(), set(self.steps)
        answer, chunks = str(it.answer), it.chunks
        v = out.values

        def ask_claims(step: str, text: str) -> list[str] | None:
            return self._ask(backend, step, P.claims_prompt(it.question, text),
                             P.claims_schema(), parse_claims, _CLAIMS_FORM, out)

        if "answer_claims" in steps:
            v["answer_claims"] = ask_claims("answer_claims", answer)
        if "gold_claims" in steps and not out.kind:
            v["gold_claims"] = ask_claims("gold_claims", it.gold)
        mine, gold = v.get("answer_claims"), v.get("gold_claims")
        if "precision_check" in steps and mine is not None and not out.kind:
            v["precision_check"] = self._check(backend, "precision_check", it.gold, mine, out)
        if "recall_check" in steps and gold is not None and not out.kind:
            v["recall_check"] = self._check(backend, "recall_check", answer, gold, out)
        if "questions" in steps and not out.kind:
            v["questions"] = self._ask(backend, "questions", P.questions_prompt(answer),
                                       P.questions_schema(), parse_questions,
                                       'a JSON object {"questions": [...], "noncommittal": 0 '
                                       "or 1}", out)
        if chunks is None:
            return out
        if "chunk_check" in steps and not out.kind and (mine is not None or gold is not None):
            self._chunk_check(backend, list(chunks), mine or [], gold or [], out)
        context = join_chunks(chunks)
        if "nli" in steps and mine is not None and not out.kind:
            v["nli"] = self._binary(backend, "nli", P.nli_prompt(context, mine), len(mine),
                                    out) if mine else []
        if "chunk_useful" in steps and not out.kind:
            useful = [self._ask(backend, "chunk_useful", P.useful_prompt(it.question, it.gold, c),
                                P.verdict_schema(), parse_verdict,
                                'a JSON object {"verdict": 1} or {"verdict": 0}', out)
                      for c in chunks]
            v["chunk_useful"] = None if "chunk_useful" in out.errors else useful
        if "recall_attribution" in steps and not out.kind:
            said = sentences(it.gold)
            v["recall_attribution"] = self._binary(
                backend, "recall_attribution", P.attribution_prompt(it.question, context, said),
                len(said), out) if said else []
        return out

    def _chunk_check(self, backend: Backend, chunks: list[str], mine: list[str],
                     gold: list[str], out: TaskOutcome) -> None:
        """Every claim (the answer's, then the gold answer's) against each chunk: one call per
        chunk (RAGChecker's retrieved2response and retrieved2answer)."""
        rows_mine, rows_gold = [], []
        for chunk in chunks:
            found = self._check(backend, "chunk_check", chunk, [*mine, *gold], out)
            if found is None:
                return
            rows_mine.append(found[: len(mine)])
            rows_gold.append(found[len(mine):])
        out.values["chunk_answer"], out.values["chunk_gold"] = rows_mine, rows_gold


def answer_task(item: MetricItem, steps: tuple[str, ...], settings: LLMSettings,
                max_corrections: int | None = None) -> AnswerTask:
    """The steps of one answer as `settings` ask them: with JSON schemas unless structured
    output is off, and as many correction rounds as retries (else `max_corrections`)."""
    corrections = settings.retries if max_corrections is None else max_corrections
    return AnswerTask(item, steps, settings.structured != "none", max(0, corrections))
