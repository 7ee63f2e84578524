"""Question sampling by a rule fixed in the config, never by results.

`per_context` keeps the first N questions of each context (SQuAD: paragraph, in file order),
`every` then keeps every k-th question (the 1st, the k+1-th, …) and `n` the first n of those.
The corpus is left whole, so retrieval searches every document of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ragdash.data.schema import Example
from ragdash.params import MAX_QUESTIONS

CONTEXT_KEY = "paragraph"


class SampleRule(BaseModel):
    """A fixed sampling rule (config `dataset.sample`): applied in the order of the fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)

    per_context: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Keep the first N questions of each context (SQuAD: paragraph), in file order."""
    every: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Then every k-th of those (the 1st, the k+1-th, ...)."""
    n: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Then the first n."""


def check_rule(rule: SampleRule | Mapping[str, Any] | None) -> dict[str, int | None] | None:
    """The rule with its keys checked (positive integers or None), or None for no sampling;
    ValueError (a pydantic ValidationError) naming the key otherwise."""
    if isinstance(rule, SampleRule):
        return rule.model_dump()
    if not rule:
        return None
    if not isinstance(rule, Mapping):
        raise ValueError("sample must be a mapping {per_context, every, n}")
    return SampleRule.model_validate(dict(rule)).model_dump()


def describe(rule: Mapping[str, int | None]) -> str:
    """The rule in words, for the run manifest."""
    steps = []
    if rule.get("per_context"):
        steps.append(f"the first {rule['per_context']} question(s) of each {CONTEXT_KEY} in "
                     "file order")
    if (rule.get("every") or 1) > 1:
        steps.append(f"every {rule['every']}th of those (1st, {rule['every'] + 1}th, …)")
    if rule.get("n"):
        steps.append(f"the first {rule['n']}")
    return ", then ".join(steps) or "every question"


def sample(examples: list[Example], labels: list[str], rule: Mapping[str, int | None]
           ) -> tuple[list[Example], list[str]]:
    """The examples (and their record labels) kept by `rule` (see the module docstring)."""
    kept = list(zip(examples, labels, strict=True))
    if per := rule.get("per_context"):
        if any(CONTEXT_KEY not in e.meta for e, _ in kept):
            raise ValueError(f"sample.per_context needs each question's {CONTEXT_KEY} "
                             "(SQuAD files have it)")
        seen: dict[str, int] = {}
        out = []
        for e, label in kept:
            c = str(e.meta[CONTEXT_KEY])
            if seen.get(c, 0) < per:
                out.append((e, label))
            seen[c] = seen.get(c, 0) + 1
        kept = out
    kept = kept[:: rule.get("every") or 1]
    if rule.get("n"):
        kept = kept[: rule["n"]]
    return [e for e, _ in kept], [label for _, label in kept]
