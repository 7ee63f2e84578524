"""The `generation` and `judge` sections of the run specification
(`ragdash.config.RunSpec.generation`, `.judge`): the answers (the paper's §3.2) and the
LLM judge with its refusal rule (§2.3). Kept free of heavy imports."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from ragdash.budget import DEFAULT_BUDGETS, MAX_BUDGET, parse_budgets
from ragdash.llm.prompts import GENERATION_PROMPTS
from ragdash.llm.refusal import RefusalSpec
from ragdash.llm.settings import JUDGE_MODES, LLMSpec
from ragdash.params import MAX_QUESTIONS
from ragdash.section import ConfigError, Section, number


class SweepSpec(Section):
    """Answers of one retriever at several budgets N (`generation.sweep`)."""

    retriever: str
    """The retriever swept (one of retrievers.use)."""
    budgets: list[int] = Field(default_factory=lambda: list(DEFAULT_BUDGETS))
    """The budgets N: START:STOP:STEP or a list."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        try:
            d["budgets"] = parse_budgets(d.get("budgets", list(DEFAULT_BUDGETS)))
        except ValueError as exc:
            raise ConfigError(f"generation.sweep.budgets: {exc}") from exc
        return d


class GenerationSpec(Section):
    """Answers of the LLM alone and with each retriever's C_N (the paper's §3.2)."""

    enabled: bool = False
    budget: Annotated[int, Field(ge=1, le=MAX_BUDGET)] = 1000
    """N: the tokens of retrieved context the answers are written from."""
    llm_only: bool = True
    """Also answer without retrieved context (the paper's LLM only)."""
    sweep: SweepSpec | None = None
    """{retriever, budgets}: answers of one retriever at several N instead."""
    prompt: str = "paper"
    """paper, or abstain (answer from the documents; a fixed refusal sentence only when they
    mention nothing related; `ragdash.llm.prompts`)."""
    reference_prompts: bool = False
    llm: LLMSpec | None = None
    """The generator's LLM settings (default: the run's `llm`)."""
    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Answer only the first N questions."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        d["budget"] = number(d.get("budget", cls.model_fields["budget"].default),
                              "generation.budget", int)
        if d.get("limit") is not None:
            d["limit"] = number(d["limit"], "generation.limit", int)
            if d["limit"] <= 0:
                raise ConfigError("generation.limit must be a positive number of questions")
        if d["budget"] <= 0:
            raise ConfigError("generation.budget must be a positive number of tokens")
        if not d.get("sweep"):
            d["sweep"] = None
        if d.get("prompt", "paper") not in GENERATION_PROMPTS:
            raise ConfigError(f"generation.prompt must be one of "
                              f"{', '.join(GENERATION_PROMPTS)}, not {d.get('prompt')!r}")
        return d


class JudgeSpec(Section):
    """The LLM judge of the answers (the paper's §2.3) and its refusal rule."""

    enabled: bool = False
    llm: LLMSpec | None = None
    """The judge's LLM settings (default: the run's `llm`)."""
    mode: str = "grouped"
    """grouped (the paper's one call per question) or stepwise (small local judges)."""
    shuffle: bool = True
    seed: int = 0
    reference_prompts: bool = False
    refusal: RefusalSpec = Field(default_factory=RefusalSpec)
    """Answers matching these patterns are scored 1 without asking the judge."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        if d.get("refusal") is None:
            d["refusal"] = {}
        if d.get("mode", "grouped") not in JUDGE_MODES:
            raise ConfigError(f"judge.mode must be one of {', '.join(JUDGE_MODES)}")
        return d
