"""The run specification: one frozen, typed model per config section (pydantic), each owning
its defaults and its checks, and one loader from a YAML file and dotted overrides. The package a
section belongs to declares it (`ragdash.chunking.settings`, `ragdash.retrieval.settings`,
`ragdash.scoring.settings`, `ragdash.llm.sections`, `ragdash.metrics.settings`,
`ragdash.erag.settings`, `ragdash.stress.settings`, `ragdash.calibration.settings`, ...; their
base is `ragdash.section`); `RunSpec` composes them.

    spec = load_spec("configs/paper.yaml", {"dataset.limit": 20, "retrievers.use": "bm25"})
    spec.retrievers.resolved["bm25"]["k"]      # typed reading
    cfg = spec.to_config()                     # the plain dict the stage keys and manifest use

The CLI, the Build page, `ragdash sweep` and the sub-commands all hand dotted overrides to
`load_spec`. Errors are ConfigError naming the dotted key (`retrievers.bm25.k must be ...`).
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.fields import FieldInfo

from ragdash.budget import DEFAULT_BUDGETS, parse_budgets
from ragdash.calibration.settings import CalibrationSpec
from ragdash.chunking.settings import ChunkerSpec
from ragdash.constants import (
    DEFAULT_TOKENIZER,
    PROJECT_ROOT,
)
from ragdash.data import CORPUS_FORMATS, FORMATS
from ragdash.data.columns import parse_columns
from ragdash.data.sample import SampleRule
from ragdash.embeddings import DEFAULT_PRECISION, check_precision
from ragdash.erag.settings import ERAGSpec
from ragdash.evidence.settings import EvidenceSettings
from ragdash.executors.base import ExecutorSpec
from ragdash.llm.sections import GenerationSpec, JudgeSpec
from ragdash.llm.settings import (
    API_KEY_IN_FILE,
    LOCAL_GENERATOR,
    LOCAL_JUDGE,
    LLMSpec,
    local_default_llm,
)
from ragdash.metrics.settings import MetricsSpec
from ragdash.params import MAX_QUESTIONS
from ragdash.retrieval.settings import RetrieversSpec
from ragdash.rundir import manifest
from ragdash.rundir.manifest import MIGRATIONS as MIGRATIONS
from ragdash.rundir.manifest import SPEC_VERSION as SPEC_VERSION
from ragdash.scoring.settings import ScoringSpec
from ragdash.section import ConfigError, Section
from ragdash.section import number as _number
from ragdash.stress.settings import StressSpec
from ragdash.systems.settings import SystemSpec, check_name

SAMPLE_NAME = "hotpot_dev_distractor_v1_subset1186.json.gz"
SAMPLE_DATASET = next((p for p in (PROJECT_ROOT / "data" / SAMPLE_NAME,
                                   Path(__file__).parent / "sample" / SAMPLE_NAME) if p.exists()),
                      PROJECT_ROOT / "data" / SAMPLE_NAME)
"""The bundled HotpotQA sample: `data/` of the source tree, else the installed package's copy
(`pip install .`)."""

Override = Mapping[str, Any] | Iterable[str] | None
"""Overrides: a mapping of (dotted or nested) keys to values, or `KEY=VALUE` texts whose value
is read as YAML (`retrievers.params.bm25.k=10`)."""


def _fail(where: str, exc: Exception) -> ConfigError:
    """A ConfigError prefixed with `where` (a ConfigError already names its key)."""
    return exc if isinstance(exc, ConfigError) else ConfigError(f"{where}{exc}")


class DatasetSpec(Section):
    """The questions and the corpus (`ragdash.data.load_dataset`)."""

    path: str | None = str(SAMPLE_DATASET)
    """The dataset file: HotpotQA/SQuAD JSON, CRAG JSONL, JSONL, CSV, Parquet or an Excel .xlsx
    workbook (default: the bundled HotpotQA sample)."""
    format: str | None = "auto"
    """auto, hotpotqa, squad, crag, jsonl, csv, parquet or xlsx."""
    sheet: str | None = None
    """The sheet of an .xlsx dataset (default: its only sheet with data)."""
    columns: dict[str, str] | None = None
    """Which column holds what when they are not named id/question/answer: {question: Q,
    answer: A, id: I} (id optional: made from the row, row-N), or `question=Q,answer=A`."""
    corpus: str | None = None
    """The corpus file, folder or .zip (generic datasets)."""
    corpus_format: str | None = "auto"
    """auto, jsonl, csv, parquet, folder, zip or document."""
    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Only the first N questions."""
    include_unanswerable: bool = False
    """Keep questions without relevant parts (scored 0)."""
    sample: SampleRule | None = None
    """A fixed sampling rule {per_context, every, n}."""
    evidence: EvidenceSettings = Field(default_factory=EvidenceSettings)
    """How relevant parts are found for a dataset without them (`ragdash evidence`)."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        d = dict(data or {})
        if d.get("limit") is not None:
            d["limit"] = _number(d["limit"], "dataset.limit", int)
            if d["limit"] <= 0:
                raise ConfigError("dataset.limit must be a positive integer")
        for key in ("path", "corpus"):
            if key in d:
                d[key] = resolve_path(d[key])
        if d.get("sheet") is not None:
            d["sheet"] = str(d["sheet"])
        for key, allowed in (("format", FORMATS), ("corpus_format", CORPUS_FORMATS)):
            if d.get(key) is not None and d[key] not in ("auto", *allowed):
                raise ConfigError(f"dataset.{key} must be one of auto, {', '.join(allowed)}, "
                                  f"not {d[key]!r}")
        try:
            d["columns"] = parse_columns(d.get("columns"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        if not d.get("sample"):
            d["sample"] = None
        return d


class EmbeddingsSpec(Section):
    """Sentence embeddings (docs/speed-and-scale.md "Speed on one machine")."""

    precision: str = DEFAULT_PRECISION
    """fp32 or bf16."""
    cache: bool = True
    """Vectors kept in <runs_root>/_embedding_cache.sqlite."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        data = dict(data or {})
        try:
            check_precision(data.get("precision", DEFAULT_PRECISION))
        except ValueError as exc:
            raise ConfigError(f"embeddings.{exc}") from None
        if not isinstance(data.get("cache", True), bool):
            raise ConfigError(f"embeddings.cache must be true or false, not "
                              f"{data.get('cache')!r}")
        return data


class RunSpec(BaseModel):
    """A run's whole specification, frozen: one typed section each, validated on building.

    The stages read it (`StageContext.spec`); `to_config()` gives the plain dict the manifest
    keeps and every stage key hashes parts of, exactly as before the specification was typed."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True,
                              use_attribute_docstrings=True)

    name: str = "run"
    """The run's name: its directory under runs_root."""
    description: str = ""
    """One line shown beside the run in the dashboard's run picker."""
    dataset: DatasetSpec = Field(default_factory=DatasetSpec)
    chunker: ChunkerSpec = Field(default_factory=ChunkerSpec)
    retrievers: RetrieversSpec = Field(default_factory=RetrieversSpec)
    tokenizer: str = DEFAULT_TOKENIZER
    """Counts the N tokens of C_N: llama3 (the paper's), cl100k, minilm, whitespace, or a
    tokenizer.json path."""
    budgets: list[int] = Field(default_factory=lambda: list(DEFAULT_BUDGETS))
    """The token budgets N scored: START:STOP:STEP or a list."""
    scoring: ScoringSpec = Field(default_factory=ScoringSpec)
    llm: LLMSpec = Field(default_factory=lambda: LLMSpec(backend="local", model=None))
    """The run's LLM (MLQ sub-questions, and the generator and judge by default): backend
    (local, ollama or openai), model, base_url, temperature, max_tokens, …"""
    generation: GenerationSpec = Field(default_factory=GenerationSpec)
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    metrics: MetricsSpec = Field(default_factory=MetricsSpec)
    erag: ERAGSpec = Field(default_factory=ERAGSpec)
    stress: StressSpec = Field(default_factory=StressSpec)
    """Controlled contexts answered by the generator (`ragdash stress`; docs/metrics.md)."""
    calibration: CalibrationSpec = Field(default_factory=CalibrationSpec)
    systems: dict[str, SystemSpec] = Field(default_factory=dict)
    """Your own RAG systems, compared beside the built-in retrievers: {NAME: {file, format,
    generate}}, each the file of its results (docs/own-data.md "Your own RAG system")."""
    embeddings: EmbeddingsSpec = Field(default_factory=EmbeddingsSpec)
    executor: ExecutorSpec = Field(default_factory=ExecutorSpec)
    """Where stages run: local, or ray (docs/speed-and-scale.md "On a Ray cluster"); never in a
    stage key."""
    runs_root: str = "runs"
    """Where runs go; its shared caches (indexes, LLM replies, embeddings) live there."""
    file: str | None = Field(None, alias="_file")
    """The YAML file the run was configured from, if any."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any, info: ValidationInfo) -> Any:
        d = dict(data or {})
        try:
            d["budgets"] = parse_budgets(d.get("budgets", DEFAULT_BUDGETS))
        except ValueError as exc:
            raise ConfigError(f"budgets: {exc}") from exc
        if not (info.context or {}).get("saved"):  # a saved run's tokenizer.json may move
            _check_tokenizer(d.get("tokenizer", DEFAULT_TOKENIZER))
        inherit_url(d)
        if d.get("executor") is None:
            d["executor"] = {}
        d["systems"] = _systems(d.get("systems"))
        return d

    @property
    def compared(self) -> list[str]:
        """Every retriever compared, in order: the built-in ones (`retrievers.use`), then the
        imported systems (`systems`)."""
        return [*self.retrievers.use, *self.systems]

    @model_validator(mode="after")
    def _across(self) -> RunSpec:
        """Checks that read two sections."""
        imported = {str(n).lower() for n in getattr(self, "systems", None) or {}}
        both = sorted(n for n in self.retrievers.custom if n.lower() in imported)
        if both:
            raise ConfigError(f"retrievers.custom.{both[0]}: an imported system (systems) has "
                              "that name too; give one of them another name")
        if not self.compared:
            raise ConfigError("retrievers.use: none, and no system is imported (systems): "
                              "nothing to compare; name a retriever or give your own system's "
                              "results")
        sweep = self.generation.sweep
        if sweep and sweep.retriever not in self.retrievers.use:
            raise ConfigError("generation.sweep.retriever must be one of retrievers.use")
        scored = [self.scoring.method, *self.scoring.also]
        if self.calibration.scores not in (None, *scored):
            raise ConfigError(f"calibration.scores must be one of the methods scored "
                              f"(scoring.method and scoring.also: {', '.join(scored)}), not "
                              f"{self.calibration.scores!r}")
        return self

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], *, saved: bool = False) -> RunSpec:
        """The specification of a config dict (a saved run's, or `to_config()`'s); ConfigError
        names the first invalid key. `saved`: the config of a finished run, read for what it
        says (`ragdash.run_spec`): a file it names need not exist here any more."""
        check_shape(dict(cfg))
        cfg = with_local_defaults(cfg)
        try:  # missing keys at their defaults (a mapping section merged key by key)
            return cls.model_validate(deep_merge(DEFAULTS, dict(cfg)),
                                      context={"saved": saved})
        except ValidationError as exc:
            raise _config_error(exc) from None

    def to_config(self) -> dict[str, Any]:
        """The plain dict: what the manifest keeps and the stage keys hash."""
        out = self.model_dump(by_alias=True)
        if out.get("_file") is None:
            out.pop("_file", None)
        return out


_KINDS = {"int_type": "a whole number", "int_parsing": "a whole number",
          "int_from_float": "a whole number", "float_type": "a number",
          "float_parsing": "a number", "string_type": "text", "bool_type": "true or false",
          "bool_parsing": "true or false", "dict_type": "a mapping", "list_type": "a list"}
_BOUNDS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}


def _dotted(loc: tuple) -> str:
    """The dotted key of an error location, without pydantic's union-member tags."""
    model: Any = RunSpec
    free = False  # inside a free mapping, every part is a key
    parts: list[str] = []
    for part in loc:
        fields = getattr(model, "model_fields", None) or {}
        by_alias = {(f.alias or n): n for n, f in fields.items()}
        if isinstance(part, str) and part in by_alias:
            parts.append(part)
            annotation = fields[by_alias[part]].annotation
            model, free = section_model(annotation), _is_mapping(annotation)
        elif isinstance(part, int) or free:
            parts.append(str(part))
    return ".".join(parts)


def _config_error(exc: ValidationError) -> ConfigError:
    """The first error of a ValidationError as one sentence naming its dotted key and what the
    key takes: `llm.backend must be one of local, ollama, openai, not 'nope'`."""
    errors = exc.errors(include_url=False)
    err = errors[0]
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, ConfigError):
        return cause
    where = _dotted(err["loc"])
    if cause is not None:  # a validator's own sentence
        text = str(cause)
        return ConfigError(text if text.startswith(where) else f"{where}: {text}")
    same = [e for e in errors if _dotted(e["loc"]) == where]
    kinds = {e["type"] for e in same}
    ctx = err.get("ctx") or {}
    if err["type"] == "literal_error":
        allowed = str(ctx.get("expected", "")).replace(" or ", ", ").replace("'", "")
        what = f"one of {allowed}"
    elif err["type"] in _BOUNDS:
        bound, words = _BOUNDS[err["type"]]
        what = f"{words} {ctx.get(bound)}"
    elif kinds & {"float_type", "float_parsing"}:
        what = "a number"
    elif err["type"] in _KINDS:
        what = _KINDS[err["type"]]
    else:
        return ConfigError(f"{where}: {err['msg'][:1].lower()}{err['msg'][1:]}, not "
                           f"{err.get('input')!r}"[:300])
    return ConfigError(f"{where} must be {what}, not {err.get('input')!r}"[:300])


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading numbers in exponent form as YAML 1.2 does: `1e300`,
    `2E-3`, `5e+2` are numbers (YAML 1.1, which PyYAML follows, reads them as text unless
    they hold a dot and a signed exponent: `1.0e+300`)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load_yaml(text: str) -> Any:
    """`text` read as YAML with the safe loader (no objects built), `1e300` read as a number;
    yaml.YAMLError when it is not YAML."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader)


def parse_set(text: str) -> tuple[str, Any]:
    """`a.b.c=VALUE` -> ('a.b.c', VALUE read as a YAML scalar or flow collection)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
        raise ConfigError(f"override {text!r}: expected KEY=VALUE with a dotted config key "
                          "(e.g. retrievers.params.bm25.k=10)")
    try:
        return key, load_yaml(value) if value.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {key}: cannot read the value {value!r} "
                          f"({getattr(exc, 'problem', exc)})") from None


def nest(key: str, value: Any) -> dict:
    """{'a': {'b': value}} from 'a.b'."""
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    return out


def expand(overrides: Override) -> dict:
    """Overrides as one nested dict: dotted keys nested, `KEY=VALUE` texts read, later ones
    winning."""
    if overrides is None:
        return {}
    pairs = (overrides.items() if isinstance(overrides, Mapping)
             else (parse_set(t) for t in overrides))
    out: dict = {}
    for key, value in pairs:
        out = deep_merge(out, nest(str(key), value) if "." in str(key) else {key: value})
    return out


def read_yaml(path: str | Path) -> dict:
    """A config file's mapping; ConfigError naming the file, the line and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    try:
        data = load_yaml(path.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"config file {path} is not valid YAML{where}: {what}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    check_shape(data, f"config file {path}: ")
    return data


def load_spec(path: str | Path | None = None, overrides: Override = None) -> RunSpec:
    """The one loader: defaults, then the YAML file, then the overrides (dotted keys, nested
    mappings or `KEY=VALUE` texts), validated into a frozen RunSpec; ConfigError names the
    dotted key of the first problem."""
    cfg: dict = {}
    if path is not None:
        cfg = {**read_yaml(path), "_file": str(path)}
    over = expand(overrides)
    check_shape(over)
    chunker = over.get("chunker") or {}
    file_chunker = cfg.get("chunker") or {}
    if chunker.get("method") not in (None, file_chunker.get("method", "semantic")) \
            and "params" not in chunker:
        cfg = {**cfg, "chunker": {**file_chunker, "params": {}}}  # not the new method's
    return RunSpec.from_config(deep_merge(cfg, over))


def migrate(cfg: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A saved config of `version`'s shape in today's (`rundir.manifest.migrate`); ConfigError
    for a version this ragdash does not read (a newer one wrote it)."""
    try:
        return manifest.migrate(cfg, version)
    except manifest.ManifestError as exc:
        raise ConfigError(str(exc)) from None


def saved_config(manifest_: Mapping[str, Any]) -> dict[str, Any]:
    """The config a run was made with (its run.json `config`), its version checked and migrated
    to today's shape (`rundir.manifest.migrated_config`, the one reader of a saved config),
    without the keys only the manifest keeps (`_file`): what a later stage on the run, or a new
    run from it, starts from. ConfigError when it cannot be read."""
    try:
        cfg = manifest.migrated_config(manifest_)
    except manifest.ManifestError as exc:
        raise ConfigError(str(exc)) from None
    return {k: v for k, v in cfg.items() if not k.startswith("_")}


def saved_spec(manifest_: Mapping[str, Any]) -> RunSpec:
    """`saved_config` as a specification; ConfigError when it is no longer valid here."""
    return RunSpec.from_config(saved_config(manifest_))


def load_config(path: str | Path | None = None, overrides: Override = None) -> dict:
    """`load_spec(...).to_config()`: the plain dict (for the stage keys, the manifest and
    callers that index sections by name)."""
    return load_spec(path, overrides).to_config()


DERIVED = {"retrievers.resolved", "_file"}
"""Keys the specification adds (a saved run config given back as overrides carries them)."""


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (`LLMSpec` of `LLMSpec | None`), or None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    models = [a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
    return models[0] if models else None


def _is_mapping(annotation: Any) -> bool:
    """A field holding a free mapping (a method's parameters, Ray's runtime_env)."""
    return get_origin(annotation) is dict or any(_is_mapping(a) for a in get_args(annotation))


def check_shape(data: dict, where: str = "", model: type[BaseModel] | None = None,
                prefix: str = "") -> None:
    """Every key a field of its section, at every depth (an unknown key names the closest
    valid one), and a mapping wherever a section is expected; ConfigError otherwise. The keys
    inside free mappings (a chunker's or retriever's parameters, Ray's runtime_env, a
    backend's options) are left to their own checks."""
    model = RunSpec if model is None else model
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if path in DERIVED:
            continue
        if model is LLMSpec and "key" in str(key).lower() and key not in fields:
            raise ConfigError(f"{where}{path}: {API_KEY_IN_FILE}")
        if key not in fields:
            known = [k for k in fields if not k.startswith("_")]
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.5)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else \
                f"; known: {', '.join(prefix + k for k in known)}"
            raise ConfigError(f"{where}unknown key '{path}'{hint}")
        inner = section_model(fields[key].annotation)
        if value is None or inner is None:  # a value: its field's own checks
            continue
        if _is_mapping(fields[key].annotation) and isinstance(value, dict):  # NAME: section
            for name, part in value.items():
                if not isinstance(part, dict):
                    raise ConfigError(f"{where}'{path}.{name}' must be a mapping (key: value "
                                      f"lines), not {type(part).__name__} {part!r}"[:300])
                check_shape(part, where, inner, f"{path}.{name}.")
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"{where}'{path}' must be a mapping (key: value lines), not "
                              f"{type(value).__name__} {value!r}"[:300])
        check_shape(value, where, inner, f"{path}.")


def _systems(value: object) -> dict:
    """`systems` with each name checked (`systems.check_name`: no markup, no built-in
    retriever's name); ConfigError naming the key otherwise."""
    from ragdash.retrieval import RETRIEVERS

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"systems must be a mapping of names to {{file, format}}, not "
                          f"{value!r}"[:300])
    out = {}
    for name, system in value.items():
        try:
            check_name(name, tuple(RETRIEVERS))
        except ValueError as exc:
            raise ConfigError(f"systems: {exc}") from None
        if isinstance(system, Mapping) and isinstance(system.get("file"), str):
            system = {**system, "file": resolve_path(system["file"])}  # as dataset.path
        out[name] = system
    return out


def _check_tokenizer(spec: object) -> None:
    from ragdash.budget import TOKENIZERS

    if spec in TOKENIZERS:
        return
    if not isinstance(spec, str) or not Path(spec).expanduser().is_file():
        raise ConfigError(f"tokenizer: {spec!r} is neither one of {', '.join(TOKENIZERS)} nor "
                          "an existing tokenizer.json file")


def inherit_url(cfg: dict) -> None:
    """Each section's own LLM (`<section>.llm` of LLM_SECTIONS: generation, judge, metrics,
    erag, stress) without a base_url takes the run's `llm.base_url` when it uses the same
    backend: a server (and an API key) only ever goes where the user said."""
    base = cfg.get("llm") or {}
    for section in (s.removesuffix(".llm") for s in LLM_SECTIONS
                    if s.count(".") == 1 and s.endswith(".llm")):
        llm = (cfg.get(section) or {}).get("llm")
        if (llm and not llm.get("base_url") and base.get("base_url")
                and llm.get("backend", base.get("backend")) == base.get("backend")):
            cfg[section] = {**cfg[section], "llm": {**llm, "base_url": base["base_url"]}}


def with_local_defaults(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """`cfg` with the local default models when its `llm` is the local default: the generator
    (`ragdash.llm.settings.LOCAL_GENERATOR`) as `generation.llm` and the judge (`LOCAL_JUDGE`)
    as `judge.llm` where the section names none. A saved run's config always names both (None:
    the run's `llm`), so its answers and judgments keep their models."""
    out = dict(cfg)
    for section, model in (("generation", LOCAL_GENERATOR), ("judge", LOCAL_JUDGE)):
        part = out.get(section)
        if (part is None or isinstance(part, Mapping) and "llm" not in part) and \
                (llm := local_default_llm(out.get("llm"), model)) is not None:
            out[section] = {**(part or {}), "llm": llm}
    return out


def spec_field(key: str) -> FieldInfo | None:
    """The declaration of a dotted key of the run specification; None for a key inside a free
    mapping (a method's parameters) or no key at all."""
    model: Any = RunSpec
    field = None
    for part in key.split("."):
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        field = fields[part]
        model = section_model(field.annotation)
    return field


def default_of(key: str) -> Any:
    """The declared default of a dotted key of the run specification (what a form starts
    from); KeyError for a key without a declaration."""
    field = spec_field(key)
    if field is None:
        raise KeyError(key)
    return field.get_default(call_default_factory=True)


def describe(key: str) -> str | None:
    """The documentation of a dotted key (what docs/config.md shows for it), one line; None
    where `spec_field` has no declaration."""
    field = spec_field(key)
    return " ".join((field.description or "").split()) or None if field else None


def resolve_path(path: str | None) -> str | None:
    """A relative path as given if it exists from here, else relative to the project root."""
    if not path:
        return path
    p = Path(path).expanduser()
    if not p.is_absolute() and not p.exists() and (PROJECT_ROOT / p).exists():
        return str(PROJECT_ROOT / p)
    return str(p)


def fingerprint(*parts) -> str:
    """Stable short hash of JSON-able values (stage keys)."""
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _schema() -> dict[str, Any]:
    """The defaults as nested dicts: the shape `check_shape` compares keys against."""
    return RunSpec.model_construct().model_dump(by_alias=True, exclude={"file"})


DEFAULTS: dict[str, Any] = _schema()
"""Every setting at its default (derived from RunSpec)."""


def sections_of(kind: type[BaseModel], model: type[BaseModel] | None = None,
                prefix: str = "") -> tuple[str, ...]:
    """The dotted keys of every field of the run specification (at any depth) that holds a
    `kind` section; `*` stands for the names of a free mapping of sections (`systems.*`)."""
    out: list[str] = []
    for name, field in (model or RunSpec).model_fields.items():
        inner = section_model(field.annotation)
        if inner is None:
            continue
        key = f"{prefix}{field.alias or name}" + (".*" if _is_mapping(field.annotation) else "")
        if inner is kind:
            out.append(key)
        else:
            out.extend(sections_of(kind, inner, f"{key}."))
    return tuple(out)


LLM_SECTIONS: tuple[str, ...] = sections_of(LLMSpec)
"""Every LLM section of the run specification (`llm`, `generation.llm`, `judge.llm`, ...):
what names a local model file (`ragdash.ui.paths`) or a server, wherever a stage adds one."""
