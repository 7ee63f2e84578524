"""run.json, read in one place: bounded, parsed, its fields' types checked, its config migrated.

`read_manifest` is the one reader of a run's manifest (`Run.manifest` goes through it, plain or
cached): a file larger than `MAX_MANIFEST_BYTES` is refused before it is read, a parse error or
nesting deeper than `MAX_DEPTH` is refused with its reason, the top level must be an object and
every field `FIELDS` declares (and each stage record's, `StageRecord`'s) must have its type.
`migrated_config` is the one reader of the config a run keeps: its `spec_version` checked and
the config migrated to today's shape (`SPEC_VERSION`, `MIGRATIONS`). Either refuses with
`ManifestError`, whose message names the file (where known) and the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from ragdash.rundir.records import StageRecord

MAX_MANIFEST_BYTES = 4 * 1024 * 1024
"""The largest run.json read (4 MiB; ragdash writes about 10 KB): a larger one is refused
unread, so one file cannot take a shared dashboard's memory."""

MAX_RUN_JSON_BYTES = 64 * 1024 * 1024
"""The largest of a run's other JSON files read (calibration.json, estimate.json: ragdash writes
well under 1 MB): a larger one is refused unread, as run.json is over MAX_MANIFEST_BYTES."""

MAX_DEPTH = 64
"""The deepest nesting of objects and lists read in a run.json (ragdash writes 6 levels)."""

SPEC_VERSION = 1
"""The shape of the config a run.json keeps, written beside it as `spec_version` (a run.json
without one is version 0). A change that would read an earlier shape differently adds a
migration to MIGRATIONS and bumps this."""

FIELDS: dict[str, type] = {
    "id": str, "created": str, "updated": str, "command": str, "config": dict,
    "spec_version": int, "versions": dict, "stages": dict, "source": dict, "issues": dict,
    "llm": dict, "judge_audit": dict, "index_recall": dict, "evidence": dict, "sweep": dict,
}
"""The type of each top-level field of run.json ragdash reads (every one optional; a field
not named here is kept as it is)."""


class RunFileError(ValueError):
    """A file of a run that cannot be read (damaged, too large, of another shape); the message
    names it, says why and, where known, which stage writes it again. `shown`: the same
    without the server's path (the file's name only), for a page."""

    def __init__(self, message: str, shown: str | None = None):
        super().__init__(message)
        self.shown = shown or message


class ManifestError(RunFileError):
    """A run.json (or its config) that cannot be read; the message names it and says why."""


def _v0_to_v1(cfg: dict[str, Any]) -> dict[str, Any]:
    """Version 0 (run.json before `spec_version`): a `generation` or `judge` section without an
    `llm` key used the run's `llm`. Since version 1 the local backend's default generator and
    judge fill such a section in, so the saved config says what it meant: `llm: None`."""
    out = dict(cfg)
    for section in ("generation", "judge"):
        part = out.get(section)
        if part is None or isinstance(part, Mapping) and "llm" not in part:
            out[section] = {**(part or {}), "llm": None}
    return out


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _v0_to_v1}
"""version -> the function taking a config of that shape to the next version's."""


_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true or false",
          int: "a whole number", float: "a number", NoneType: "null"}


def _kind(value: object) -> str:
    """How a message names a JSON value's type."""
    return _NAMES.get(type(value), type(value).__name__)


def _shown(value: object) -> str:
    """A JSON value in a message: a scalar as written (cut to 40 characters), else its type."""
    if isinstance(value, dict | list):
        return _kind(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _expected(hint: Any) -> str:
    """What a type hint asks for, in words ("a number", "a list of objects")."""
    if get_origin(hint) in (Union, UnionType):
        return " or ".join(_expected(a) for a in get_args(hint) if a is not NoneType)
    if get_origin(hint) is tuple:
        return f"a list of {_expected(get_args(hint)[0]).removeprefix('an ').removeprefix('a ')}s"
    return _NAMES.get(get_origin(hint) or hint, str(hint))


def check_version(version: object) -> int:
    """`spec_version` as an int this ragdash reads (0 up to SPEC_VERSION); ManifestError
    otherwise (a newer ragdash wrote it, or it is not a whole number)."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise ManifestError(f"spec_version is {_shown(version)}, not a whole number")
    if not 0 <= version <= SPEC_VERSION:
        raise ManifestError(f"spec_version {version}: this ragdash reads versions 0 to "
                            f"{SPEC_VERSION}; the run was made by a newer ragdash"
                            if version > SPEC_VERSION else
                            f"spec_version {version}: versions start at 0")
    return version


def migrate(cfg: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A saved config of `version`'s shape in today's (SPEC_VERSION), one migration at a time;
    ManifestError for a version this ragdash does not read."""
    out = dict(cfg)
    for v in range(check_version(version), SPEC_VERSION):
        out = MIGRATIONS[v](out)
    return out


def migrated_config(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The config a run keeps (run.json `config`, {} when it has none) in today's shape: its
    `spec_version` checked (0 when absent), then migrated. ManifestError when either is not
    what ragdash writes."""
    if not isinstance(manifest, Mapping):
        raise ManifestError(f"the manifest is {_kind(manifest)}, not an object")
    cfg = manifest.get("config")
    if cfg is not None and not isinstance(cfg, Mapping):
        raise ManifestError(f"config is {_shown(cfg)}, not an object")
    return migrate(cfg or {}, manifest.get("spec_version", 0))


def _fits(value: object, hint: Any) -> bool:
    """Whether a JSON value has the type `hint` (str, int, float, dict, tuple[X, ...], unions)."""
    origin = get_origin(hint)
    if origin in (Union, UnionType):
        return any(_fits(value, a) for a in get_args(hint))
    if hint is NoneType:
        return value is None
    if isinstance(value, bool):
        return hint is bool
    if hint is float:
        return isinstance(value, int | float)
    if origin is tuple:
        return isinstance(value, list) and all(_fits(v, get_args(hint)[0]) for v in value)
    return isinstance(value, origin or hint)


_RECORD = {f.name: get_type_hints(StageRecord)[f.name] for f in fields(StageRecord)
           if f.name != "name"}
"""The type of each field of a stage record, as `StageRecord` declares it."""
_PLAIN = {key: hint for key, hint in _RECORD.items()
          if set(get_args(hint)) - {NoneType} <= {str, dict} and get_args(hint)}
"""The record's fields that are a string or an object (or null): checked with one isinstance."""


def _too_deep(value: object) -> bool:
    """Whether objects and lists nest deeper than MAX_DEPTH in `value`: one level at a time,
    containers only, without recursion."""
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [v for item in level
                 for v in (item.values() if isinstance(item, dict) else item)
                 if isinstance(v, dict | list)]
        if not level:
            return False
    return True


def check_manifest(data: object) -> dict[str, Any]:
    """`data` (a parsed run.json) when it is what ragdash writes: an object not nested deeper
    than MAX_DEPTH, each field of FIELDS and of each stage record of its type, a config that
    migrates (its values are checked by `ragdash.run_spec`, which knows the specification).
    ManifestError naming the first problem otherwise."""
    if not isinstance(data, dict):
        raise ManifestError(f"the top level is {_kind(data)}, not an object")
    if _too_deep(data):
        raise ManifestError(f"it nests deeper than {MAX_DEPTH} levels")
    for key, kind in FIELDS.items():
        value = data.get(key)
        if value is not None and not _fits(value, kind):
            raise ManifestError(f"{key} is {_shown(value)}, not {_expected(kind)}")
    for name, record in (data.get("stages") or {}).items():
        if not isinstance(record, dict):
            raise ManifestError(f"stages.{name} is {_shown(record)}, not an object")
        for key, hint in _RECORD.items():
            value = record.get(key)
            if value is not None and not (isinstance(value, get_args(_PLAIN[key]))
                                          if key in _PLAIN else _fits(value, hint)):
                raise ManifestError(f"stages.{name}.{key} is {_shown(value)}, not "
                                    f"{_expected(hint)}")
    migrated_config(data)
    return data


def load_json(path: Path | str, max_bytes: int | None = MAX_MANIFEST_BYTES) -> Any:
    """The JSON file at `path`, parsed: ManifestError naming the file and the reason when it is
    larger than `max_bytes` (refused unread; None: any size), not JSON (or not UTF-8) or nested
    too deep for the parser. An OSError (a missing file) is raised as is."""
    path = Path(path)
    limit = f"the {(max_bytes or 0) / 2**20:g} MiB a {path.name} may hold"
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise ManifestError(f"it is {size / 2**20:.1f} MiB, over {limit}")
            raw = f.read(size + 1)  # a larger buffer would be allocated whole
            if max_bytes is None or len(raw) > size:  # it grew since: the rest, up to the limit
                raw += f.read() if max_bytes is None else f.read(max_bytes + 1 - len(raw))
        if max_bytes is not None and len(raw) > max_bytes:  # it grew while read
            raise ManifestError(f"it is over {limit}")
        try:
            return json.loads(raw)
        except RecursionError:
            raise ManifestError(f"it nests deeper than {MAX_DEPTH} levels") from None
        except ValueError as exc:  # not JSON, or not UTF-8
            raise ManifestError(f"it is not valid JSON ({' '.join(str(exc).split())[:200]})"
                                ) from None
    except ManifestError as exc:
        raise ManifestError(f"{path} cannot be read: {exc}") from None


def read_manifest(path: Path | str) -> dict[str, Any]:
    """The run.json at `path`, at most MAX_MANIFEST_BYTES (`load_json`) and checked
    (`check_manifest`); ManifestError naming the file and the reason when it cannot be read.
    An OSError (a missing file) is raised as is."""
    data = load_json(path)
    try:
        return check_manifest(data)
    except ManifestError as exc:
        raise ManifestError(f"{path} cannot be read: {exc}") from None
