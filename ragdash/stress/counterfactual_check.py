"""RGB's second way to decide detection (Chen et al., AAAI 2024; its `fact_evalue.py`): an LLM
(RGB: ChatGPT) reads each reply with RGB's check prompt (`ragdash.llm.prompts.rgb_check_messages`)
and the reply detected the error when the check says "has identified" or "Yes". Corrected is
then detected and the true answer found (that script wants a 1 among the answer labels, so a
refusal does not count), and the rates are over the replies whose check came back.

`ragdash counterfactual --checker judge` asks this of the judge's LLM; the default, `phrase`,
is the rule of `ragdash.stress.counterfactual`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import pandas as pd

from ragdash.llm.factory import calls_session
from ragdash.llm.generate import generation_call
from ragdash.llm.prompts import rgb_check_messages
from ragdash.llm.runner import ChatCall, Progress, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.stress.settings import Checker

if TYPE_CHECKING:
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.types import Backend

CHECKERS: tuple[str, ...] = get_args(Checker)
"""phrase: "factual errors" in the reply (RGB's evalue.py); judge: RGB's LLM check."""
IDENTIFIED = ("has identified", "Yes")
"""A check reply holding either says the reply identified the errors (as RGB reads it)."""


def identified(check: str) -> bool:
    """RGB's reading of a check reply."""
    return any(phrase in check for phrase in IDENTIFIED)


def check_calls(replies: Sequence[str]) -> list[ChatCall]:
    """One check per reply (an empty check reply is asked again, never cached)."""
    return [generation_call(rgb_check_messages(r)) for r in replies]


def run_checks(table: pd.DataFrame, settings: LLMSettings, *,
               cache: LLMCache | str | Path | None = None, progress: Progress | None = None,
               backend: Backend | None = None) -> pd.DataFrame:
    """`table` (`ragdash.stress.counterfactual.COLUMNS`) with each reply checked by the LLM
    of `settings`: `check` holds its reply, `detected` and `corrected` follow RGB's check; a
    failed check leaves the row without a verdict, its `error` saying so."""
    out = table.copy()
    rows = out.index[out["error"].isna() & out["reply"].notna()]
    plan = check_calls(out.loc[rows, "reply"].tolist())
    with calls_session(settings, cache, backend) as (be, store):
        outcomes = dispatch_calls(be, plan, settings, progress, cache=store)
    out["check"] = pd.Series([None] * len(out), index=out.index, dtype="object")
    for i, o in zip(rows, outcomes, strict=True):
        if o.result is None:
            out.loc[i, ["detected", "corrected"]] = pd.NA
            out.loc[i, "error"] = f"check: {o.error}"
            continue
        seen = identified(o.result.text)
        out.loc[i, "check"] = o.result.text.strip()
        out.loc[i, "detected"] = seen
        out.loc[i, "corrected"] = seen and bool(out.loc[i, "answer_found"])
    return out
