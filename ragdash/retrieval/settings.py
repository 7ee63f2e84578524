"""The `retrievers` section of the run specification (`ragdash.config.RunSpec.retrievers`):
the retrievers compared, their preset and parameters, and the live retrievers. Kept free
of heavy imports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, model_validator

from ragdash.constants import PAPER_RETRIEVERS
from ragdash.retrieval.custom import CustomRetrieverSpec
from ragdash.section import ConfigError, Section


class RetrieversSpec(Section):
    """The retrievers compared (`ragdash.retrieval`): `resolved` holds each one's parameters
    (declared defaults, then the preset, then `params`), which the retrieve stage key hashes."""

    preset: str | None = "paper"
    """paper (bm25 and mlq keep 5 chunks, the dense ones 10) or equal-k (10 everywhere)."""
    use: list[str] = Field(default_factory=lambda: list(PAPER_RETRIEVERS))
    """The retrievers compared, in order (a list or 'bm25,sim'); none (or []) compares your
    imported systems (`systems`) alone."""
    params: dict[str, dict[str, Any]] | None = Field(default_factory=dict)
    """Per retriever, the parameters set over the preset (below)."""
    resolved: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Derived: every parameter of every retriever used."""
    # each live retriever's keys are checked by `_custom` (Annotated: a free mapping to
    # `check_shape` and config_doc, which documents its keys once, under its own heading)
    custom: dict[str, Annotated[CustomRetrieverSpec, "live retriever"]] = Field(
        default_factory=dict)
    """Live retrievers, your own system asked for every question: {NAME: {kind, ...}} (keys
    below; docs/own-data.md "Live retrievers"); NAME in `use` compares it."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        from ragdash.retrieval import RETRIEVERS, resolve_params

        d = dict(data or {})
        custom = d["custom"] = _custom(d.get("custom"))
        use = d.get("use", list(PAPER_RETRIEVERS))
        if not isinstance(use, str | list):
            raise ConfigError(f"retrievers.use must be a list of retriever names (or "
                              f"'bm25,sim'), not {use!r}")
        if isinstance(use, str):
            use = [] if use.strip().lower() == "none" else \
                [u.strip() for u in use.split(",") if u.strip()]
        unknown = [u for u in use if u not in RETRIEVERS and u not in custom]
        if unknown:  # none at all is checked against the imported systems (RunSpec)
            raise ConfigError(f"retrievers.use: unknown {unknown}; known: "
                              f"{', '.join([*RETRIEVERS, *custom])}, or none")
        d["use"] = list(dict.fromkeys(use))
        params = d.get("params") or {}
        live = [name for name in params if name in custom]
        if live:
            raise ConfigError(f"retrievers.params.{live[0]}: a live retriever's settings are "
                              f"under retrievers.custom.{live[0]}")
        try:
            d["resolved"] = {name: custom[name].key_fields() if name in custom else
                             resolve_params(name, d.get("preset", "paper"), params.get(name))
                             for name in d["use"]}
        except ValueError as exc:  # "bm25.k must be ...": named by its dotted key
            text = str(exc)
            where = "retrievers.params." if text.split(".")[0].split(":")[0] in d["use"] \
                else "retrievers: "
            raise ConfigError(f"{where}{text}") from exc
        return d


def _custom(value: object) -> dict[str, CustomRetrieverSpec]:
    """`retrievers.custom`, each name checked (no markup, no built-in retriever's name) and
    each live retriever's settings validated; ConfigError naming the key otherwise."""
    from ragdash.retrieval import RETRIEVERS
    from ragdash.retrieval.custom import check_name, validate

    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"retrievers.custom must be a mapping of names to {{kind, ...}}, not "
                          f"{value!r}"[:300])
    try:
        return {check_name(name, RETRIEVERS): validate(name, spec)
                for name, spec in value.items()}
    except ValueError as exc:
        text = str(exc)
        raise ConfigError(text if text.startswith("retrievers.") else
                          f"retrievers.custom: {text}") from None
