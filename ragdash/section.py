"""What every section of the run specification shares, below the packages that own their
sections (`ragdash.config.RunSpec` composes them): the error that names a dotted key, the base
model (frozen, unknown keys refused, attribute docstrings as its documentation) and the reading
of a number written as text. Imports nothing else from ragdash."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the dotted key."""


class Section(BaseModel):
    """One section of the run specification: frozen, unknown keys refused (`check_shape` names
    them first, with the closest valid one), validated by its own `_check`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def number(value: object, key: str, kind: type) -> int | float:
    """`value` as an int or float (numbers written as text accepted), or ConfigError."""
    try:
        if isinstance(value, bool):
            raise ValueError
        number = kind(value)
        if kind is int and float(value) != number:
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be {'a whole number' if kind is int else 'a number'}, "
                          f"not {value!r}") from None
    return number


_BOUNDS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}


def checked(model: type[M], values: dict[str, Any], where: str) -> M:
    """`model` of `values`; ConfigError naming `where.key` and what it takes for the first value
    it refuses (`counterfactual.passages must be at least 1, not 0`), instead of pydantic's
    report."""
    try:
        return model(**values)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join([where, *(str(p) for p in err["loc"])])
        ctx = err.get("ctx") or {}
        if isinstance(ctx.get("error"), Exception):
            raise ConfigError(str(ctx["error"])) from None
        if err["type"] in _BOUNDS:
            bound, words = _BOUNDS[err["type"]]
            raise ConfigError(f"{key} must be {words} {ctx.get(bound)}, not "
                              f"{err.get('input')!r}") from None
        raise ConfigError(f"{key}: {err['msg'][:1].lower()}{err['msg'][1:]}, not "
                          f"{err.get('input')!r}"[:300]) from None
