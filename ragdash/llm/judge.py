"""LLM-as-judge on the paper's categorical 1–5 scale (El Yagouby, Chevallet & Gaussier 2024, §2.3).

By default all candidate answers of a question are judged in one call, in an order shuffled
with a per-question seeded RNG (recorded in `position`); `shuffle=False` keeps the given order,
`mode="single"` makes one call per answer, and `mode="stepwise"` asks the rubric as two short
questions per answer (a verdict against the true answer, then, for a partially correct answer,
whether it states wrong details), which small local judges answer far better than the 1–5
rubric (Qwen2.5 0.5B and 1.5B give every answer the same score, or score by position). The
1.5B still calls refusals "incorrect" rather than "no answer" (large judges: untested here).

Replies are read as JSON (`{"scores": [...]}`, with the schema sent as structured output where
the backend takes it) or, failing that, as the integers found in the text (stepwise: the one
option named). A reply with the wrong count or a value outside 1–5 gets a
correction message; if that keeps failing the candidates are recorded with an error and no score.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from ragdash.constants import PAPER_SYSTEMS
from ragdash.data.reading import loads
from ragdash.llm.ask import Exchange, UnreadableReply, ask
from ragdash.llm.cache import LLMCache
from ragdash.llm.factory import calls_session
from ragdash.llm.prompts import (
    DETAIL_SCORES,
    VERDICT_SCORES,
    VERDICTS,
    choice_correction,
    choice_schema,
    correction_message,
    details_prompt,
    judge_messages,
    judge_schema,
    verdict_prompt,
)
from ragdash.llm.refusal import REASON, RefusalRule
from ragdash.llm.runner import Progress, dispatch_calls
from ragdash.llm.settings import JUDGE_MODES, LLMSettings
from ragdash.llm.types import Backend

if TYPE_CHECKING:
    from ragdash.executors import Executor

JUDGMENT_COLUMNS = ["qid", "system", "budget", "judge_model", "score", "raw", "error", "position",
                    "call_id", "tokens_in", "tokens_out", "latency_s", "rule"]
NO_ANSWER = "no answer"


class Candidate(NamedTuple):
    system: str
    answer: str | None
    budget: int | None = None
    error: str | None = None  # the generation error, if any


class JudgeItem(NamedTuple):
    qid: str
    question: str
    true_answer: str
    references: Sequence[str]
    candidates: Sequence[Candidate]


class ScoreParseError(UnreadableReply):
    """A judge reply that does not hold exactly the expected scores."""


# --- parsing ----------------------------------------------------------------------------------

_JSON = re.compile(r"\{.*\}|\[.*\]", re.S)
_NOISE = [re.compile(p, re.I | re.M) for p in (
    r"candidate(?:'s)?\s*(?:answer)?\s*#?\s*\d+",  # "candidate answer 3"
    r"\banswer\s*#?\s*\d+",
    r"^\s*\d+\s*[.)]\s",  # list markers "1. " / "2) "
    r"(?:out of|/)\s*5\b",  # "4 out of 5", "4/5"
    r"\bscores?\s*(?:of|from)?\s*1\s*(?:-|–|to)\s*5\b",  # "scores 1-5"
)]
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _check(values: list[Any], n: int) -> list[int]:
    if len(values) != n:
        raise ScoreParseError(f"expected {n} score{'s' if n != 1 else ''}, found {len(values)}")
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ScoreParseError(f"'{v}' is not a score") from None
        if isinstance(v, bool) or f != int(f) or not 1 <= f <= 5:
            raise ScoreParseError(f"score {v} is outside the integers 1–5")
        out.append(int(f))
    return out


def _json_in(text: str) -> Any:
    """The first JSON object or list in a reply, or None; ScoreParseError when it is nested too
    deeply to parse (that reply's error, not the stage's)."""
    m = _JSON.search(text)
    if m:
        try:
            return loads(m.group(0))
        except json.JSONDecodeError:
            return None
        except ValueError as exc:  # nested too deeply
            raise ScoreParseError(f"the reply's JSON is {exc}") from None
    return None


def parse_scores(text: str, n: int) -> list[int]:
    """Exactly `n` integer scores in 1–5 from a judge reply, or ScoreParseError.

    Reads `{"scores": [...]}` or a JSON list when present, else the numbers in the text after
    dropping candidate labels, list markers and "out of 5".
    """
    data = _json_in(text)
    if isinstance(data, dict) and isinstance(data.get("scores"), list):
        return _check(data["scores"], n)
    if isinstance(data, list):
        return _check(data, n)
    cleaned = text
    for pattern in _NOISE:
        cleaned = pattern.sub(" ", cleaned)
    numbers = _NUMBER.findall(cleaned)
    if not numbers:
        raise ScoreParseError("no scores found in the reply")
    return _check(numbers, n)


def parse_choice(text: str, key: str, options: Sequence[str]) -> str:
    """The one option a reply names: `{key: option}` JSON, else the only option in the text
    (longest options first, so "incorrect" and "partially correct" are not read as "correct");
    ScoreParseError when it names none or several."""
    data = _json_in(text)
    if isinstance(data, dict) and isinstance(data.get(key), str):
        value = data[key].strip().lower()
        if value in options:
            return value
        raise ScoreParseError(f"'{data[key]}' is not one of {', '.join(options)}")
    rest, named = text.lower(), set()
    for option in sorted(options, key=len, reverse=True):
        pattern = re.compile(rf"\b{re.escape(option)}\b")
        if pattern.search(rest):
            named.add(option)
            rest = pattern.sub(" ", rest)
    if len(named) != 1:
        raise ScoreParseError(f"expected one of {', '.join(options)}, found "
                              f"{', '.join(sorted(named)) if named else 'none'}")
    return named.pop()


# --- calls ------------------------------------------------------------------------------------


@dataclass
class JudgeOutcome(Exchange):
    """The scores of one judge call (None with `error` set), with what the call cost."""

    scores: list[int] | None = None


@dataclass
class _Call:
    """The paper's rubric: the scores of all `shown` candidates from one prompt."""

    call_id: str
    item: JudgeItem
    shown: list[Candidate]  # in prompt order
    messages: list[dict[str, str]]
    json_output: bool
    use_schema: bool
    max_corrections: int

    def __call__(self, backend: Backend) -> JudgeOutcome:
        n = len(self.shown)
        out = JudgeOutcome()
        out.scores = ask(backend, self.messages, judge_schema(n) if self.use_schema else None,
                         lambda text: parse_scores(text, n),
                         lambda problem: correction_message(n, problem,
                                                            json_output=self.json_output),
                         self.max_corrections, out, what="judge reply")
        return out


@dataclass
class _StepwiseCall:
    """The rubric as two short questions about one candidate (see the module docstring).
    `raw` keeps the verdicts as JSON."""

    call_id: str
    item: JudgeItem
    shown: list[Candidate]  # the one candidate
    use_schema: bool
    max_corrections: int

    @property
    def messages(self) -> list[dict[str, str]]:
        """The first question: the verdict (a second follows for a partly correct answer)."""
        item = self.item
        return [{"role": "user", "content": verdict_prompt(item.question, item.true_answer,
                                                           str(self.shown[0].answer))}]

    def _choice(self, backend: Backend, prompt: str, key: str, options: Sequence[str],
                out: JudgeOutcome) -> str | None:
        return ask(backend, [{"role": "user", "content": prompt}],
                   choice_schema(key, options) if self.use_schema else None,
                   lambda text: parse_choice(text, key, options),
                   lambda problem: choice_correction(key, options, problem),
                   self.max_corrections, out, what="judge reply")

    def __call__(self, backend: Backend) -> JudgeOutcome:
        item, answer = self.item, str(self.shown[0].answer)
        out = JudgeOutcome()
        verdict = self._choice(backend, self.messages[0]["content"], "verdict", list(VERDICTS),
                               out)
        if verdict is None:
            return out
        steps = {"verdict": verdict}
        if verdict in VERDICT_SCORES:
            score = VERDICT_SCORES[verdict]
        else:
            detail = self._choice(backend, details_prompt(item.question, item.true_answer,
                                                          list(item.references), answer),
                                  "wrong_details", list(DETAIL_SCORES), out)
            if detail is None:
                return out
            steps["wrong_details"] = detail
            score = DETAIL_SCORES[detail]
        out.scores, out.raw = [score], json.dumps(steps)
        return out


def _order(item: JudgeItem, answered: list[Candidate], shuffle: bool, seed: int) -> list:
    order = list(answered)
    if shuffle:
        random.Random(f"{seed}:{item.qid}").shuffle(order)
    return order


def _row(item: JudgeItem, c: Candidate, **values: Any) -> dict[str, Any]:
    base = {"qid": str(item.qid), "system": c.system, "budget": c.budget, "judge_model": None,
            "score": None, "raw": None, "error": None, "position": None, "call_id": None,
            "tokens_in": None, "tokens_out": None, "latency_s": None, "rule": None}
    base.update(values)
    return base


def judge(items: Iterable[JudgeItem], settings: LLMSettings, *,
          cache: LLMCache | str | Path | None = None, mode: str = "grouped",
          shuffle: bool = True, seed: int = 0, progress: Progress | None = None,
          reference_prompts: bool = False, max_corrections: int | None = None,
          refusal: RefusalRule | None = None, backend: Backend | None = None,
          executor: Executor | None = None) -> pd.DataFrame:
    """Judge every candidate of every item; one row per candidate (JUDGMENT_COLUMNS).

    `mode`: "grouped" (one call per question, the paper's design), "single" (one call per
    answer) or "stepwise" (one or two short questions per answer). Candidates without an
    answer get error "no answer" and are not shown to the judge. With `refusal`, answers the
    rule matches get score 1 (raw "refusal (rule)", `rule` the pattern) without an LLM call.
    `position` is the 1-based place of the candidate in its prompt. Token counts and latency are
    those of the whole call (all correction rounds), repeated on each row of the call: sum them
    once per `call_id`. `executor`: where the calls run (`dispatch_calls`; default here, also
    when `backend` is given).
    """
    items = list(items)
    rows, calls = judge_calls(items, settings, mode=mode, shuffle=shuffle, seed=seed,
                              reference_prompts=reference_prompts,
                              max_corrections=max_corrections, refusal=refusal)
    with calls_session(settings, cache, backend) as (be, store):
        outcomes = dispatch_calls(be, calls, settings, progress, cache=store,
                                  executor=None if backend is not None else executor) \
            if calls else []
        judge_model = be.model
    for call, o in zip(calls, outcomes, strict=True):
        for pos, c in enumerate(call.shown, 1):
            rows.append(_row(
                call.item, c, judge_model=o.model or judge_model,
                score=o.scores[pos - 1] if o.scores else None, raw=o.raw, error=o.error,
                position=pos, call_id=call.call_id, tokens_in=o.tokens_in,
                tokens_out=o.tokens_out, latency_s=o.latency_s))
    return judgments_frame(rows, [str(i.qid) for i in items], judge_model=judge_model)


def judge_calls(items: Iterable[JudgeItem], settings: LLMSettings, *, mode: str = "grouped",
                shuffle: bool = True, seed: int = 0, reference_prompts: bool = False,
                max_corrections: int | None = None, refusal: RefusalRule | None = None
                ) -> tuple[list[dict[str, Any]], list[_Call | _StepwiseCall]]:
    """What `judge` decides before any call: the rows of candidates scored without one (no
    answer, the refusal rule) and the calls to make (each a callable of a backend, its
    `messages` the first question it asks)."""
    if mode not in JUDGE_MODES:
        raise ValueError(f"judge mode must be one of {', '.join(JUDGE_MODES)}, not '{mode}'")
    corrections = max(0, settings.retries if max_corrections is None else max_corrections)
    use_schema = settings.structured != "none"
    json_output = not reference_prompts
    rows: list[dict[str, Any]] = []
    calls: list[_Call | _StepwiseCall] = []
    for item in items:
        answered = []
        for c in item.candidates:
            if c.error is not None or c.answer is None or not str(c.answer).strip():
                rows.append(_row(item, c, error=NO_ANSWER))
            elif refusal is not None and (pattern := refusal.match(str(c.answer))):
                rows.append(_row(item, c, score=1, raw=REASON,
                                 rule=pattern))
            else:
                answered.append(c)
        shown = _order(item, answered, shuffle and mode == "grouped", seed)
        groups = [shown] if mode == "grouped" else [[c] for c in shown]
        for group in groups:
            if not group:
                continue
            call_id = str(item.qid) if mode == "grouped" else f"{item.qid}/{group[0].system}" + (
                f"/{group[0].budget}" if group[0].budget is not None else "")
            if mode == "stepwise":
                calls.append(_StepwiseCall(call_id, item, group, use_schema, corrections))
                continue
            messages = judge_messages(item.question, item.true_answer, list(item.references),
                                      [str(c.answer) for c in group],
                                      reference=reference_prompts, json_output=json_output)
            calls.append(_Call(call_id, item, group, messages, json_output, use_schema,
                               corrections))
    return rows, calls


def judgments_frame(rows: list[dict[str, Any]], qid_order: Sequence[str] | None = None,
                    judge_model: str | None = None) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    if qid_order is not None and len(df):
        rank = {q: i for i, q in enumerate(dict.fromkeys(qid_order))}
        df["_q"] = df["qid"].map(rank)
        df = df.sort_values(["_q", "position"], kind="stable", na_position="last")
        df = df.drop(columns="_q").reset_index(drop=True)
    if judge_model is not None:
        df["judge_model"] = df["judge_model"].fillna(judge_model)
    for col in ("budget", "score", "position", "tokens_in", "tokens_out"):
        df[col] = df[col].astype("Int64")
    df["latency_s"] = df["latency_s"].astype("float64")
    for col in ("judge_model", "raw", "error", "call_id", "rule"):
        df[col] = df[col].astype("object").where(df[col].notna(), None)
    return df


# --- from run tables --------------------------------------------------------------------------


def _system_rank(system: str) -> tuple[int, str]:
    return (PAPER_SYSTEMS.index(system), "") if system in PAPER_SYSTEMS else (
        len(PAPER_SYSTEMS), system)


def items_from_frames(answers: pd.DataFrame, examples: pd.DataFrame, *,
                      budget: int | None = None) -> list[JudgeItem]:
    """Judge items from `answers.parquet` and `examples.parquet` frames.

    Candidates are in the paper's order (llm_only, bm25, sim, mmr, reo, mlq, then others by
    name, then budget). With `budget`, only answers at that budget (and LLM-only) are judged.
    """
    if budget is not None:
        answers = answers[answers["budget"].isna() | (answers["budget"] == budget)]
    ex = examples.assign(qid=examples["qid"].astype(str)).set_index("qid")
    missing = sorted(set(answers["qid"].astype(str)) - set(ex.index))
    if missing:
        raise ValueError(f"answers: qid(s) {missing[:5]} not found in the examples table")
    items = []
    for qid, group in answers.groupby(answers["qid"].astype(str), sort=False):
        rows = sorted(group.itertuples(index=False), key=lambda r: (
            _system_rank(r.system), -1 if pd.isna(r.budget) else int(r.budget)))
        cands = [Candidate(r.system, None if pd.isna(r.answer) else r.answer,
                           None if pd.isna(r.budget) else int(r.budget),
                           None if pd.isna(r.error) else r.error) for r in rows]
        e = ex.loc[qid]
        items.append(JudgeItem(qid, e["question"], e["answer"], [str(p) for p in e["parts"]],
                               cands))
    return items


def judge_answers(answers: pd.DataFrame, examples: pd.DataFrame, settings: LLMSettings, *,
                  budget: int | None = None, **kwargs: Any) -> pd.DataFrame:
    """`judge` over the run tables (see `items_from_frames`); kwargs go to `judge`."""
    return judge(items_from_frames(answers, examples, budget=budget), settings, **kwargs)
