"""The configuration a run was made with, as a frozen typed view of its manifest.

`ragdash.config.RunSpec` is the one schema (its `to_config()` dict is what a run keeps in
`run.json`); the defaults read here for runs that predate a key are its constants. Readers
get this view instead of `manifest.get("config", {})…` chains; it tolerates runs written
before a key existed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragdash.constants import DEFAULT_SCORING_METHOD, DEFAULT_SCORING_MODE, DEFAULT_TOKENIZER


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return copy.deepcopy(value)


def _part(cfg: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """Section `name` of a saved config ({} when absent); ValueError when it is no mapping."""
    value = cfg.get(name)
    if value is not None and not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping, not {type(value).__name__} {value!r}"[:200])
    return value or {}


def _listed(value: Any, key: str, kind: type) -> tuple:
    """A list of `kind` values of a saved config as a tuple (() when absent); ValueError
    naming `key` otherwise."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(
            isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{key} must be a list of {kind.__name__} values, not "
                         f"{value!r}"[:200])
    return tuple(value)


def _text(value: Any) -> str | None:
    """A saved setting as text (None when absent or empty)."""
    return None if value is None or value == "" else str(value)


def _whole(value: Any, key: str) -> int | None:
    """A saved whole number (None when absent); ValueError naming `key` otherwise."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{key} must be a whole number, not {value!r}"[:200])
    return value


@dataclass(frozen=True)
class RunConfig:
    """A run's configuration (read-only)."""

    name: str = ""
    description: str = ""
    retrievers: tuple[str, ...] = ()
    """The retrievers the config asked for (`retrievers.use`), in its order, then its imported
    systems (`systems`)."""
    budgets: tuple[int, ...] = ()
    tokenizer: str = DEFAULT_TOKENIZER
    scoring_mode: str = DEFAULT_SCORING_MODE
    scoring_method: str = DEFAULT_SCORING_METHOD
    """Score_IR's main matching method (`scoring.method`)."""
    relevance_share: float = 1.0
    """The share of a relevant part that counts it found (`scoring.relevance_share`)."""
    generation_budget: int | None = None
    """N of the generation contexts (`generation.budget`)."""
    judge_mode: str | None = None
    """How the judge asks (`judge.mode`; None for a run saved without one)."""
    dataset_path: str = ""
    """The dataset file as the config named it (`dataset.path`)."""
    chunker_method: str | None = None
    """The chunker (`chunker.method`; None for a run saved without one)."""
    llm_backend: str | None = None
    """The run's LLM backend (`llm.backend`); a stage's own `llm` section may override it."""
    judge_refusal: Any = None
    """The judge's refusal rule as saved (`judge.refusal`: `RefusalRule.from_config` reads it)."""
    calibration_scores: str | None = None
    """The Score_IR method calibration fits on (`calibration.scores`; None: the main one)."""
    calibration_estimand: str | None = None
    """What the share-correct interval is about (`calibration.estimand`; None: the default)."""
    calibration_n_boot: int | None = None
    """Bootstrap resamples of the calibration's intervals (`calibration.n_boot`)."""
    calibration_seed: int | None = None
    """The seed of those resamples (`calibration.seed`)."""
    sections: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Every section as saved (read-only mappings): dataset, chunker, llm, judge, …"""

    @classmethod
    def from_dict(cls, cfg: Mapping[str, Any] | None) -> RunConfig:
        """The view of a saved config (already migrated: `manifest.migrated_config`); ValueError
        naming the key when a value it reads has the wrong type."""
        cfg = cfg or {}
        return cls(**cls._read(cfg), sections=_freeze(dict(cfg)))

    @classmethod
    def check(cls, cfg: Mapping[str, Any] | None) -> None:
        """ValueError as `from_dict` would raise it, without building the view."""
        cls._read(cfg or {})

    @staticmethod
    def _read(cfg: Mapping[str, Any]) -> dict[str, Any]:
        """The typed fields of a saved config (every one but `sections`)."""
        budget = _whole(_part(cfg, "generation").get("budget"), "generation.budget")
        return {
            "name": str(cfg.get("name") or ""),
            "description": str(cfg.get("description") or ""),
            "retrievers": (*_listed(_part(cfg, "retrievers").get("use"), "retrievers.use", str),
                           *map(str, _part(cfg, "systems"))),  # then the imported systems
            "budgets": _listed(cfg.get("budgets"), "budgets", int),
            "tokenizer": str(cfg.get("tokenizer") or DEFAULT_TOKENIZER),
            "scoring_mode": str(_part(cfg, "scoring").get("mode") or DEFAULT_SCORING_MODE),
            "scoring_method": str(_part(cfg, "scoring").get("method")
                                  or DEFAULT_SCORING_METHOD),
            "relevance_share": float(_part(cfg, "scoring").get("relevance_share") or 1.0),
            "generation_budget": budget,
            "judge_mode": None if (mode := _part(cfg, "judge").get("mode")) is None
            else str(mode),
            "dataset_path": str(_part(cfg, "dataset").get("path") or ""),
            "chunker_method": _text(_part(cfg, "chunker").get("method")),
            "llm_backend": _text(_part(cfg, "llm").get("backend")),
            "judge_refusal": _freeze(_part(cfg, "judge").get("refusal")),
            "calibration_scores": _text(_part(cfg, "calibration").get("scores")),
            "calibration_estimand": _text(_part(cfg, "calibration").get("estimand")),
            "calibration_n_boot": _whole(_part(cfg, "calibration").get("n_boot"),
                                         "calibration.n_boot"),
            "calibration_seed": _whole(_part(cfg, "calibration").get("seed"), "calibration.seed"),
        }

    def stage_backend(self, section: str) -> str | None:
        """The LLM backend of the stage configured in `section` (its own `llm.backend`, else
        the run's)."""
        own = self.section(section).get("llm")
        return (own.get("backend") if isinstance(own, Mapping) else None) or self.llm_backend

    def section(self, name: str) -> Mapping[str, Any]:
        """One top-level section ({} when the run predates it)."""
        value = self.sections.get(name)
        return value if isinstance(value, Mapping) else MappingProxyType({})

    def to_dict(self) -> dict[str, Any]:
        """The plain dict, as saved in the manifest and hashed into the stage keys."""
        return _thaw(self.sections)
