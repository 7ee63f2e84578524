"""The configuration reference, generated from the run specification (`ragdash.config.RunSpec`)
and the declared parameters of every retriever and chunker (`ragdash.params`):

    python -m ragdash.config_doc > docs/config.md

A test fails when docs/config.md differs from what this prints.
"""

from __future__ import annotations

import sys
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ragdash import chunking, retrieval
from ragdash.config import DEFAULTS, RunSpec, section_model
from ragdash.llm.settings import LLMSpec
from ragdash.params import Param
from ragdash.retrieval.custom import CustomRetrieverSpec


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(value: Any) -> str:
    if isinstance(value, str) and "/" in value:  # a path of this checkout: its file name
        value = value.rsplit("/", 1)[-1]
    if isinstance(value, list) and len(str(value)) > 100:
        return f"the {len(value)} built-in ones"
    if isinstance(value, dict) and len(str(value)) > 60:
        return "(see below)" if not value else "{" + ", ".join(value) + "}"
    return f"`{value!r}`" if value is not None else "none"


_BOUND_WORDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}


def _words(annotation: Any) -> str:
    """A field's type in words: `whole number ≥ 1 or none`, `one of local, ray`."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        base, bounds = _words(args[0]), []
        for meta in args[1:]:
            for item in [meta, *getattr(meta, "metadata", [])]:
                bounds += [f"{_BOUND_WORDS[k]} {getattr(item, k)}" for k in _BOUND_WORDS
                           if getattr(item, k, None) is not None]
        low = [b for b in bounds if b[0] in "≥>"]
        high = [b for b in bounds if b[0] in "≤<"]
        if len(low) == len(high) == 1 and low[0][0] == "≥" and high[0][0] == "≤":
            return f"{base} from {low[0][2:]} to {high[0][2:]}"
        return " ".join([base, *bounds])
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if origin in (Union, UnionType):
        kinds = [_words(a) for a in args if a is not type(None)]
        if set(kinds) == {"whole number", "number"}:
            kinds = ["number"]
        return " or ".join(kinds) + ((", or unset" if kinds[-1].startswith("one of") else
                                      " or none") if type(None) in args else "")
    if origin is list:
        return f"list of {_words(args[0])}s" if args else "list"
    if origin is dict or annotation is dict:
        return "mapping"
    if annotation is LLMSpec:
        return "LLM settings (the keys of `llm`)"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section (below)"
    return {bool: "true/false", int: "whole number", float: "number", str: "text"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))


def _type(field: FieldInfo) -> str:
    """A field's type in words, its own bounds included (pydantic keeps those of a plain
    `Annotated[int, Field(ge=1)]` in the field's metadata)."""
    annotation = field.annotation
    if field.metadata:
        annotation = Annotated[(annotation, *field.metadata)]
    return _cell(_words(annotation))


def _fields(model: type[BaseModel], defaults: dict, prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key.startswith("_"):
            continue
        rows.append(f"| `{prefix}{key}` | {_type(field)} | "
                    f"{_cell(_default(defaults.get(key)))} | {_cell(field.description or '')} |")
    return rows


def _params(owner: str, params: tuple[Param, ...], prefix: str) -> list[str]:
    if not params:
        return ["No parameter.", ""]
    rows = ["| parameter | takes | default | what it does |", "|---|---|---|---|"]
    rows += [f"| `{prefix}{p.name}` | {_cell(p.expected())} | `{p.default!r}` | "
             f"{_cell(p.help)} |" for p in params]
    return [*rows, ""]


def _section(key: str, model: type[BaseModel], defaults: dict, level: str) -> list[str]:
    """A section's table, then a table of each section inside it (an LLM section inside
    another is the `llm` section's keys, named once)."""
    doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
    out = [f"{level} `{key}`", "", doc, "", "| key | type | default | meaning |",
           "|---|---|---|---|", *_fields(model, defaults, f"{key}."), ""]
    for name, field in model.model_fields.items():
        inner = section_model(field.annotation)
        if inner is None:
            continue
        if inner is LLMSpec:
            continue  # `generation.llm`, `judge.llm`, `metrics.llm`: the `llm` section's keys
        out += _section(f"{key}.{name}", inner, (defaults or {}).get(name) or {}, "###")
    return out


def render() -> str:
    """docs/config.md."""
    out = ["# Configuration reference", "",
           "<!-- generated by `python -m ragdash.config_doc > docs/config.md`; do not edit -->",
           "",
           "A run is configured by a YAML file (`--config`, e.g. `configs/paper.yaml`), then "
           "overrides: the options of `ragdash run` and `--set KEY=VALUE` with a dotted key, "
           "its value read as YAML (`--set retrievers.params.bm25.k=10`). Every key has a "
           "default; an unknown key or a bad value stops the run before any stage, naming the "
           "key, its value and what it takes. A number may be written in exponent form (`1e-3`, "
           "`2e5`: a number, as YAML 1.2 reads it). The Build page, `ragdash sweep --vary "
           "KEY=V1,V2` and the sub-commands use the same keys.", ""]
    top = ["| key | type | default | meaning |", "|---|---|---|---|"]
    sections = []
    for name, field in RunSpec.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            sections.append((name, field.annotation))
        elif not (field.alias or name).startswith("_"):
            top.append(_fields(RunSpec, DEFAULTS, "")[list(RunSpec.model_fields).index(name)])
    out += ["## Top-level keys", "", *top, ""]
    for name, model in sections:
        out += _section(name, model, DEFAULTS[name], "##")
    for name, field in RunSpec.model_fields.items():  # a mapping of named sections (`systems`)
        if get_origin(field.annotation) is dict and (inner := section_model(field.annotation)):
            out += _section(f"{name}.<NAME>", inner, {k: f.default for k, f in
                                                      inner.model_fields.items()
                                                      if not f.is_required()}, "##")
    out += ["## Retriever parameters", "",
            "Set under `retrievers.params.<retriever>`; unset ones take the preset's value, "
            "else the default. Presets: " + "; ".join(
                f"`{p}`: " + ", ".join(f"{r} k={v['k']}" for r, v in ks.items())
                for p, ks in retrieval.PRESETS.items()) + ".", ""]
    for name, about in retrieval.DESCRIPTIONS.items():
        out += [f"### `{name}`", "", about, "",
                *_params(name, retrieval.params_of(name), f"retrievers.params.{name}.")]
    live = CustomRetrieverSpec.model_fields
    out += _section("retrievers.custom.<NAME>", CustomRetrieverSpec,
                    {k: f.default for k, f in live.items() if not f.is_required()}, "##")
    out += ["## Chunker parameters", "", "Set under `chunker.params` for the `chunker.method` "
            "chosen.", ""]
    for method in chunking.CHUNKERS:
        out += [f"### `{method}`", "", chunking.describe(method), "",
                *_params(method, chunking.params_of(method), "chunker.params.")]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
