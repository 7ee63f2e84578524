"""RGB's counterfactual robustness test (Chen et al., AAAI 2024, "Benchmarking Large Language
Models in Retrieval-Augmented Generation", §"Counterfactual Robustness"): the generator reads
passages that state a false answer, with an instruction to say "There are factual errors in the
provided documents." and give the correct answer when the documents are wrong.

Followed from RGB's `evalue.py` (its defaults: 5 passages, no noise, no correct passage):
- context: `random.seed(2333)` before each question, then up to `PASSAGES` indices drawn with
  `random.sample` from the question's passages, their `positive_wrong` texts in that order,
  shuffled with the same generator; joined one per line (`ragdash.llm.prompts.rgb_messages`).
- detected: the reply contains "factual errors" (case-sensitive, as RGB checks it).
- answer found (RGB's `checkanswer`): every group of the true answer occurs in the lower-cased
  reply, one spelling of a group sufficing (plain substrings, no normalisation: ragdash's
  `contains` drops punctuation and wants whole tokens, so it is not RGB's rule).
- refused: the reply contains "insufficient information"; RGB then labels it [-1] and skips
  the answer check.
- corrected: detected and (answer found or refused). RGB counts a reply as corrected when its
  labels hold no 0, so a detected refusal counts too; `refused` keeps those visible.
- rates: error detection rate = detected / replies; error correction rate = corrected /
  detected (0 when none detected), both over the replies received: RGB drops a failed call.

Differences: RGB samples at temperature 0.7; ragdash's LLM settings default to 0 (replies
reproducible and cached). A failed call is kept as a row with its error, not dropped.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.data.rgb import Answer, FactRecord
from ragdash.llm.factory import calls_session
from ragdash.llm.generate import generation_call
from ragdash.llm.prompts import rgb_messages
from ragdash.llm.runner import ChatCall, Progress, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.stress.settings import CounterfactualSettings

if TYPE_CHECKING:
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.types import Backend

PASSAGES: int = CounterfactualSettings.model_fields["passages"].default
"""RGB's default `passage_num`: passages per context (`CounterfactualSettings.passages`)."""
SEED = 2333
"""RGB seeds Python's `random` with this before building each question's context."""
DETECTION_PHRASE = "factual errors"
REFUSAL_PHRASE = "insufficient information"

COLUMNS = ["qid", "query", "answer", "fake_answer", "prompt", "model", "reply", "detected",
           "answer_found", "refused", "corrected", "latency_s", "tokens_in", "tokens_out",
           "error"]
"""The per-question table: `answer` as JSON (RGB's groups), `prompt` the user message sent
(the passages and the question)."""


def context(record: FactRecord, passages: int = PASSAGES, seed: int = SEED) -> list[str]:
    """The counterfactual passages RGB puts before the question, in RGB's order."""
    rng = random.Random(seed)
    wrong = record.positive_wrong
    chosen = rng.sample(range(len(wrong)), min(len(wrong), passages))
    docs = [wrong[i] for i in chosen]
    rng.shuffle(docs)
    return docs


def answer_found(reply: str, answer: Answer) -> bool:
    """RGB's `checkanswer`: every group occurs in the lower-cased reply (any one spelling)."""
    said = reply.lower()
    return all(any(text.lower() in said for text in group) for group in answer)


@dataclass(frozen=True)
class Verdict:
    """What RGB's rules say of one reply (see the module's docstring)."""

    detected: bool
    answer_found: bool
    refused: bool

    @property
    def corrected(self) -> bool:
        return self.detected and (self.answer_found or self.refused)


def verdict(reply: str, answer: Answer) -> Verdict:
    """RGB's reading of a reply: error detected, true answer found, refusal."""
    refused = REFUSAL_PHRASE in reply
    return Verdict(DETECTION_PHRASE in reply, not refused and answer_found(reply, answer),
                   refused)


def calls(records: Sequence[FactRecord], passages: int = PASSAGES,
          seed: int = SEED) -> list[ChatCall]:
    """One generation call per question (an empty reply is asked again, never cached): what a
    run sends and a dry run prices."""
    return [generation_call(rgb_messages(r.query, context(r, passages, seed))) for r in records]


def run_counterfactual(records: Sequence[FactRecord], settings: LLMSettings, *,
                       cache: LLMCache | str | Path | None = None,
                       progress: Progress | None = None, backend: Backend | None = None,
                       passages: int = PASSAGES, seed: int = SEED) -> pd.DataFrame:
    """Ask the generator each question over its counterfactual context and score the replies
    (`COLUMNS`, one row per question, in order). Replies go through the reply cache, so a
    re-run asks only what is missing; a failed call is a row with `error` set and no verdict.
    A failure that would repeat for every call (no server, bad key) raises `LLMError` after
    the finished calls are cached."""
    plan = calls(records, passages, seed)
    with calls_session(settings, cache, backend) as (be, store):
        outcomes = dispatch_calls(be, plan, settings, progress, cache=store)
        model = be.model
    rows = []
    for rec, call, o in zip(records, plan, outcomes, strict=True):
        r = o.result
        reply = r.text.strip() if r else None
        v = verdict(reply, rec.answer) if reply is not None else None
        rows.append({"qid": rec.qid, "query": rec.query,
                     "answer": json.dumps(rec.answer, ensure_ascii=False),
                     "fake_answer": rec.fake_answer,
                     "prompt": call.messages[-1]["content"], "model": r.model if r else model,
                     "reply": reply, "detected": v.detected if v else None,
                     "answer_found": v.answer_found if v else None,
                     "refused": v.refused if v else None, "corrected": v.corrected if v else None,
                     "latency_s": r.latency_s if r else None,
                     "tokens_in": r.tokens_in if r else None,
                     "tokens_out": r.tokens_out if r else None, "error": o.error})
    return _typed(pd.DataFrame(rows, columns=COLUMNS))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    for col in ("detected", "answer_found", "refused", "corrected"):
        df[col] = df[col].astype("boolean")
    for col in ("tokens_in", "tokens_out"):
        df[col] = df[col].astype("Int64")
    df["latency_s"] = df["latency_s"].astype("float64")
    return df
