"""A deterministic refusal rule that runs before the LLM judge.

The paper's class 1 ("the candidate says it cannot find enough information in the documents")
is the one small local judges miss: Qwen2.5-Coder 1.5B calls "The documents do not say…"
incorrect (4). An answer matched by the rule gets score 1 with the reason "refusal (rule)" and is
never sent to the judge; every other answer is judged as before. Patterns are case-insensitive
regular expressions searched anywhere in the answer; the defaults are deliberately narrow
phrases of refusal, never single words, so an answer like "The capital is Paris." is not matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator

ABSTAIN_SENTENCE = "I cannot find enough information in the documents."
"""The fixed reply the `abstain` generation prompt asks for when the documents lack the answer."""
LLM_ONLY_ABSTAIN_SENTENCE = "I do not know the answer."
"""The fixed reply of the `abstain` LLM-only prompt (it was given no documents to speak of)."""

REASON = "refusal (rule)"

DEFAULT_PATTERNS: tuple[str, ...] = (
    r"cannot find enough information",
    r"(?:documents?|context|texts?|passages?|references?|sources?|provided information)"
    r" (?:do|does|did) not (?:contain|say|mention|provide|specify|state|include|give|answer)",
    r"(?:not|no|insufficient) (?:enough |sufficient )?information (?:is )?(?:provided|given"
    r"|available|to (?:answer|determine))",
    r"not enough information",
    r"\b(?:i|we) (?:cannot|can ?not|can't|am unable to|are unable to) (?:determine|answer|find"
    r"|tell|say)",
    r"cannot be (?:determined|answered|found|inferred) (?:from|based on|with)",
    r"no (?:information|mention) (?:about|on|of|regarding|in the)",
    r"\bi (?:do not|don't) know\b",
)
"""The abstain sentences and common variants ("the documents do not …", "not enough
information", "cannot be determined from", "I don't know")."""


class RefusalPatternError(ValueError):
    """A pattern of the refusal rule is not a valid regular expression."""


def compile_patterns(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """Compiled case-insensitive patterns; RefusalPatternError names the bad one."""
    out = []
    for p in patterns:
        p = str(p).strip()
        if not p:
            continue
        try:
            out.append(re.compile(p, re.IGNORECASE))
        except re.error as exc:
            raise RefusalPatternError(f"refusal pattern {p!r} is not a valid regular "
                                      f"expression: {exc}") from None
    return out


@dataclass(frozen=True)
class RefusalRule:
    """Refusal patterns; `match(answer)` gives the first pattern found, or None."""

    patterns: Sequence[str] = DEFAULT_PATTERNS
    enabled: bool = True
    _compiled: list[re.Pattern[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", tuple(str(p) for p in self.patterns
                                                   if str(p).strip()))
        object.__setattr__(self, "_compiled", compile_patterns(self.patterns))

    @classmethod
    def from_config(cls, cfg: RefusalSpec | Mapping[str, Any] | None) -> RefusalRule:
        """From the `judge.refusal` config section ({enabled, patterns}); None = defaults."""
        if isinstance(cfg, RefusalSpec):
            return cfg.rule()
        cfg = cfg or {}
        patterns = cfg.get("patterns")
        return cls(DEFAULT_PATTERNS if patterns is None else tuple(patterns),
                   bool(cfg.get("enabled", True)))

    def match(self, answer: str | None) -> str | None:
        """The pattern that marks `answer` a refusal, or None (also when disabled)."""
        if not self.enabled or not answer:
            return None
        text = " ".join(str(answer).split())
        for raw, pattern in zip(self.patterns, self._compiled, strict=True):
            if pattern.search(text):
                return raw
        return None

    def to_config(self) -> dict:
        return {"enabled": self.enabled, "patterns": list(self.patterns)}


class RefusalSpec(BaseModel):
    """The `judge.refusal` section of the run specification: the patterns resolved (None: the
    defaults, blank ones dropped, each compiled), so a change of the defaults changes the judge
    stage key."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: StrictBool = True
    """Score answers matching a pattern 1 without asking the judge."""
    patterns: list[StrictStr] = Field(default_factory=lambda: list(DEFAULT_PATTERNS))
    """Case-insensitive regular expressions (None: the defaults)."""

    @field_validator("patterns", mode="before")
    @classmethod
    def _resolve(cls, patterns: Any) -> Any:
        if patterns is None:
            return list(DEFAULT_PATTERNS)
        if isinstance(patterns, str) or not isinstance(patterns, list):
            raise ValueError("judge.refusal.patterns must be a list of regular expressions")
        kept = [str(p) for p in patterns if str(p).strip()]
        try:
            compile_patterns(kept)
        except RefusalPatternError as exc:
            raise ValueError(f"judge.refusal.patterns: {exc}") from None
        return kept

    def rule(self) -> RefusalRule:
        return RefusalRule(tuple(self.patterns), self.enabled)
