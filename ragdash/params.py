"""Declared parameters: each retriever and chunker states its tunable parameters once (type,
default, bounds or choices, one line of help), as scikit-learn's `_parameter_constraints` do.

Validation (`check`), the run specification, the Build page's inputs, the CLI help and the
generated configuration reference (`python -m ragdash.config_doc`) all read these declarations.
Nothing here imports anything else from ragdash.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_K = 10_000
"""The most chunks a retriever keeps (or fetches) per question, and eRAG judges: a retriever
keeps at most the corpus's chunks whatever k says (its search asks for no more), and every
chunk kept is a row of the results and a share of the contexts."""
MAX_QUESTIONS = 1_000_000
"""The largest question count a config may set (dataset.limit, generation.limit, ...)."""
MAX_CHARS = 64 * 1024**2
"""The largest character count a config may set (chunk sizes, chunker.max_chars): the size of
one document (`ragdash.data.readers.base.MAX_DOCUMENT_BYTES`); a chunk cannot be longer."""
MAX_BOOT = 10_000
"""The most bootstrap resamples (calibration.n_boot): each one is kept in memory."""


@dataclass(frozen=True)
class Param:
    """One tunable parameter.

    kind: int (a count), float (a weight or share) or str (a name, or free text without
    `choices`). low/high: inclusive bounds of a number. text_numbers: numbers written as text
    ("95", from a form or the command line) are read as numbers.
    """

    name: str
    kind: type
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    text_numbers: bool = False

    def check(self, owner: str, value: Any) -> Any:
        """`value` if valid (a whole float given for an int is returned as an int when text
        numbers are accepted), else ValueError naming `owner.name` and what is expected."""
        where = f"{owner}.{self.name}"
        if self.choices is not None:
            if value not in self.choices:
                raise ValueError(f"{where} must be one of {', '.join(self.choices)}, "
                                 f"not {value!r}")
            return value
        if self.kind is str:
            if not isinstance(value, str):
                raise ValueError(f"{where} must be text, not {value!r}")
            return value
        number = self._number(value)
        if number is None:
            raise ValueError(f"{where} must be {self.expected()}, not {value!r}")
        return number

    def _number(self, value: Any) -> int | float | None:
        """The number `value` stands for, None if it is not one of this parameter's kind or
        lies outside its bounds."""
        if self.text_numbers and isinstance(value, str):
            try:
                value = self.kind(value.strip())
            except ValueError:
                return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if self.kind is int:
            if isinstance(value, float):
                if not (self.text_numbers and value.is_integer()):
                    return None
                value = int(value)
        elif self.text_numbers and isinstance(value, int):
            value = float(value)
        if math.isnan(value) or (self.low is not None and value < self.low) \
                or (self.high is not None and value > self.high):
            return None
        return value

    def expected(self) -> str:
        """What a valid value is, in words (error messages, docs)."""
        if self.choices is not None:
            return f"one of {', '.join(self.choices)}"
        if self.kind is str:
            return "text"
        what = "a whole number" if self.kind is int else "a number"
        low, high = _fmt(self.low), _fmt(self.high)
        if self.low is not None and self.high is not None:
            return f"{what} between {low} and {high}"
        if self.low is not None:
            return f"{what} of at least {low}"
        if self.high is not None:
            return f"{what} of at most {high}"
        return what


    def summary(self) -> str:
        """`name (what it takes; default D): help`, one line of the CLI help and the docs."""
        return f"{self.name} ({self.expected()}; default {self.default!r}): {self.help}"


def _fmt(x: float | None) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else str(x))


def defaults(params: Iterable[Param]) -> dict[str, Any]:
    """{name: default} of declared parameters, in their order."""
    return {p.name: p.default for p in params}


def check_all(owner: str, params: Iterable[Param], given: Mapping[str, Any] | None) -> dict:
    """The defaults updated with `given`, each value checked; ValueError names an unknown
    parameter (listing the known ones) or the first bad value."""
    declared = {p.name: p for p in params}
    unknown = set(given or {}) - set(declared)
    if unknown:
        raise ValueError(f"{owner}: unknown parameter(s) {sorted(unknown)}; "
                         f"known: {', '.join(declared) or 'none'}")
    out = defaults(declared.values())
    for key, value in (given or {}).items():
        out[key] = declared[key].check(owner, value)
    return out
