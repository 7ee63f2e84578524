"""The `systems` section of the run specification (`ragdash.config.RunSpec.systems`): the user's
own RAG systems, imported from files of their results, each compared beside the built-in
retrievers under its name.

    systems:
      prod: {file: results.jsonl}                 # format detected from the content
      rerank: {file: run.trec, format: trec}
      v2: {file: spans.parquet, generate: true}   # its contexts answered by the run's generator

Kept free of heavy imports: `ragdash.config` composes it as it composes `erag`."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

FORMATS = ("ragas", "trec", "spans")
"""The formats a system's file is read in: RAGAS-style records (JSONL, CSV, Parquet, .xlsx),
a TREC run file, OpenInference spans as Phoenix exports them (Parquet or JSONL)."""
Format = Literal["auto", "ragas", "trec", "spans"]

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
"""A system's name: a letter or digit, then letters, digits, `_` or `-`, at most 40 in all (no
dot: it would split the dotted config key; no markup: names are shown on pages)."""

RESERVED = ("llm_only",)
"""Names the run already gives a system (the LLM alone)."""


def check_name(name: object, taken: tuple[str, ...] = ()) -> str:
    """`name` when it can name an imported system; ValueError saying why not. `taken`: the
    built-in retrievers' names (compared case-insensitively: pages show them upper-cased)."""
    text = str(name)
    if not isinstance(name, str) or not NAME.fullmatch(text):
        shown = text if len(text) <= 60 else text[:60] + "…"
        raise ValueError(f"system name {shown!r} is not allowed: use 1 to 40 letters, digits, "
                         "'_' or '-', starting with a letter or digit")
    clash = [t for t in (*taken, *RESERVED) if t.lower() == text.lower()]
    if clash:
        raise ValueError(f"system name {text!r} is the name of the built-in "
                         f"{'system' if clash[0] in RESERVED else 'retriever'} {clash[0]!r}; "
                         "give your system another name")
    return text


class SystemSpec(BaseModel):
    """One imported system: the file of its results (its retrieved contexts per question, in rank
    order, and optionally its answers), read in `format`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    file: str
    """The file of the system's results: RAGAS-style records (.jsonl, .csv, .parquet, .xlsx), a
    TREC run file, or OpenInference spans exported by Phoenix (.parquet, .jsonl)."""
    format: Format = "auto"
    """auto (detected from the content), ragas, trec or spans."""
    generate: bool = False
    """Answer its contexts with the run's generator (as the built-in retrievers' are), instead
    of taking the answers from its file: retrieval compared on equal footing."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        if isinstance(d.get("file"), str) and not d["file"].strip():
            raise ValueError("file must name the system's results file")
        return d
