"""The `chunker` section of the run specification (`ragdash.config.RunSpec.chunker`): the
method and its declared parameters (`ragdash.chunking`). Kept free of heavy imports."""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from pydantic import Field, model_validator

from ragdash.params import MAX_CHARS
from ragdash.section import ConfigError, Section, number


class ChunkerSpec(Section):
    """How documents are cut into chunks (`ragdash.chunking`); `params` as given (hashed into
    the chunk stage key), checked against the method's declared parameters."""

    method: str = "semantic"
    """semantic, recursive, tokens or none (parameters: below)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The method's parameters (unset ones at their defaults)."""
    max_chars: Annotated[int, Field(ge=1, le=MAX_CHARS)] | None = None
    """Split chunks longer than this many characters (none: never)."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        from ragdash.chunking import CHUNKERS, resolve_params

        d = dict(data or {})
        method = d.get("method", "semantic")
        if method not in CHUNKERS:
            close = difflib.get_close_matches(str(method), list(CHUNKERS), n=1)
            raise ConfigError(f"chunker.method: unknown method {method!r}"
                              + (f"; did you mean '{close[0]}'?" if close else "")
                              + f" (known: {', '.join(CHUNKERS)})")
        try:
            resolve_params(method, d.get("params"))
        except ValueError as exc:
            raise ConfigError(f"chunker.params: {exc}") from exc
        d["params"] = d.get("params") or {}
        if d.get("max_chars") is not None:
            d["max_chars"] = number(d["max_chars"], "chunker.max_chars", int)
        return d

    def resolved(self) -> dict[str, Any]:
        """Every parameter of the method, defaults filled in."""
        from ragdash.chunking import resolve_params

        return resolve_params(self.method, self.params)
