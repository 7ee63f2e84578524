"""What every section of the run specification shares, below the packages that own their
sections (`ragdash.config.RunSpec` composes them): the error that names a dotted key, the base
model (frozen, unknown keys refused, attribute docstrings as its documentation) and the reading
of a number written as text. Imports nothing else from ragdash."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
