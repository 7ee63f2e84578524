"""Run configuration: defaults, YAML files and command-line overrides, validated in one place."""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
from pathlib import Path

import yaml

from ragdash.budget import DEFAULT_BUDGETS, parse_budgets
from ragdash.constants import PROJECT_ROOT
from ragdash.data.sample import check_rule
from ragdash.embeddings import DEFAULT_PRECISION, check_precision
from ragdash.evidence.settings import DEFAULTS as EVIDENCE_DEFAULTS
from ragdash.evidence.settings import check as check_evidence
from ragdash.executors.base import DEFAULTS as EXECUTOR_DEFAULTS
from ragdash.executors.base import check as check_executor
from ragdash.llm.prompts import GENERATION_PROMPTS
from ragdash.llm.refusal import RefusalPatternError, RefusalRule
from ragdash.llm.settings import JUDGE_MODES

SAMPLE_DATASET = PROJECT_ROOT / "data" / "hotpot_dev_distractor_v1_subset1186.json.gz"

DEFAULTS: dict = {
    "name": "run",
    "description": "",  # one line shown beside the run in the dashboard's run picker
    "dataset": {"path": str(SAMPLE_DATASET), "format": "auto", "corpus": None,
                "corpus_format": "auto", "limit": None, "include_unanswerable": False,
                "sample": None, "evidence": dict(EVIDENCE_DEFAULTS)},
    "chunker": {"method": "semantic", "params": {}, "max_chars": None},
    "retrievers": {"preset": "paper", "use": ["bm25", "sim", "mmr", "reo", "mlq"], "params": {}},
    "tokenizer": "llama3",
    "budgets": list(DEFAULT_BUDGETS),
    "scoring": {"method": "substring", "mode": "corrected", "relevance_share": 1.0,
                "also": []},  # also: more matching methods scored beside `method`
    "llm": {"backend": "local", "model": None},
    "generation": {"enabled": False, "budget": 1000, "llm_only": True, "sweep": None,
                   "prompt": "paper", "reference_prompts": False, "llm": None, "limit": None},
    "judge": {"enabled": False, "llm": None, "mode": "grouped", "shuffle": True, "seed": 0,
              "reference_prompts": False, "refusal": {"enabled": True, "patterns": None}},
    "calibration": {"enabled": False, "budget": None, "per_retriever": False,
                    "method": "sweep", "n_boot": 200, "seed": 0,
                    "scores": None},  # the Score_IR method h, k are fit on (None: scoring.method)
    "embeddings": {"precision": DEFAULT_PRECISION,  # fp32 or bf16 (README "Speed")
                   "cache": True},  # vectors kept in <runs_root>/_embedding_cache.sqlite
    "executor": dict(EXECUTOR_DEFAULTS),  # local, or ray (README "On a Ray cluster")
    "runs_root": "runs",
}


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the key."""


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> dict:
    """Defaults, then the YAML file, then overrides; validated and normalised."""
    cfg = copy.deepcopy(DEFAULTS)
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"config file {path} is not valid YAML{where}: {what}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
        check_shape(data, f"config file {path}: ")
        cfg = deep_merge(cfg, data)
        cfg["_file"] = str(path)
    check_shape(overrides or {})
    chunker = (overrides or {}).get("chunker") or {}
    if chunker.get("method") not in (None, cfg["chunker"]["method"]) and "params" not in chunker:
        cfg["chunker"]["params"] = {}  # another method: the file's parameters are not its own
    cfg = deep_merge(cfg, overrides or {})
    return validate(cfg)


FREE_FORM = {"chunker.params", "retrievers.params", "llm", "generation.llm", "judge.llm",
             "generation.sweep", "dataset.sample", "judge.refusal", "executor.runtime_env"}
"""Sections whose keys are checked by their own validator (LLM settings, a chunker's or a
retriever's parameters, the sampling rule, the refusal rule)."""


DERIVED = {"retrievers.resolved", "_file"}
"""Keys `validate` adds (a saved run config given back as overrides carries them)."""


def check_shape(data: dict, where: str = "", schema: dict = DEFAULTS, prefix: str = "") -> None:
    """Every key known at every depth (an unknown key names the closest valid one), and a
    mapping wherever the defaults have one; ConfigError otherwise."""
    for key, value in data.items():
        path = f"{prefix}{key}"
        if path in DERIVED:
            continue
        if key not in schema:
            close = difflib.get_close_matches(str(key), [str(k) for k in schema], n=1,
                                              cutoff=0.5)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else \
                f"; known: {', '.join(prefix + k for k in schema if not k.startswith('_'))}"
            raise ConfigError(f"{where}unknown key '{path}'{hint}")
        if isinstance(schema[key], dict) or path in FREE_FORM:
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{where}'{path}' must be a mapping (key: value lines), not "
                                  f"{type(value).__name__} {value!r}"[:300])
            if path not in FREE_FORM:
                check_shape(value, where, schema[key], f"{path}.")


def validate(cfg: dict) -> dict:
    from ragdash.retrieval import RETRIEVERS, resolve_params
    from ragdash.scoring import METHODS

    try:
        cfg["budgets"] = parse_budgets(cfg["budgets"])
    except ValueError as exc:
        raise ConfigError(f"budgets: {exc}") from exc
    use = cfg["retrievers"]["use"]
    if not isinstance(use, str | list):
        raise ConfigError(f"retrievers.use must be a list of retriever names (or 'bm25,sim'), "
                          f"not {use!r}")
    if isinstance(use, str):
        use = [u.strip() for u in use.split(",") if u.strip()]
    unknown = [u for u in use if u not in RETRIEVERS]
    if unknown or not use:
        raise ConfigError(f"retrievers.use: unknown or empty {unknown or use}; "
                          f"known: {', '.join(RETRIEVERS)}")
    cfg["retrievers"]["use"] = list(dict.fromkeys(use))
    params = cfg["retrievers"].get("params") or {}
    try:
        cfg["retrievers"]["resolved"] = {
            name: resolve_params(name, cfg["retrievers"].get("preset"), params.get(name))
            for name in cfg["retrievers"]["use"]
        }
    except ValueError as exc:
        raise ConfigError(f"retrievers: {exc}") from exc
    _check_chunker(cfg["chunker"])
    _check_tokenizer(cfg["tokenizer"])
    _check_embeddings(cfg["embeddings"])
    cfg["scoring"]["relevance_share"] = _number(cfg["scoring"].get("relevance_share", 1.0),
                                                "scoring.relevance_share", float)
    cfg["generation"]["budget"] = _number(cfg["generation"]["budget"], "generation.budget", int)
    if cfg["generation"].get("limit") is not None:
        cfg["generation"]["limit"] = _number(cfg["generation"]["limit"], "generation.limit", int)
        if cfg["generation"]["limit"] <= 0:
            raise ConfigError("generation.limit must be a positive number of questions")
    if cfg["dataset"].get("limit") is not None:
        cfg["dataset"]["limit"] = _number(cfg["dataset"]["limit"], "dataset.limit", int)
    if cfg["scoring"]["method"] not in METHODS:
        raise ConfigError(f"scoring.method: '{cfg['scoring']['method']}' is not one of "
                          f"{', '.join(METHODS)}")
    cfg["scoring"]["also"] = _also(cfg["scoring"].get("also"), cfg["scoring"]["method"])
    if cfg["scoring"]["mode"] not in ("corrected", "reference"):
        raise ConfigError("scoring.mode must be 'corrected' or 'reference'")
    share = cfg["scoring"]["relevance_share"]
    if not 0 < share <= 1:
        raise ConfigError("scoring.relevance_share must be in (0, 1]")
    g = cfg["generation"]
    if g["budget"] <= 0:
        raise ConfigError("generation.budget must be a positive number of tokens")
    if g.get("sweep"):
        sweep = g["sweep"]
        if sweep.get("retriever") not in cfg["retrievers"]["use"]:
            raise ConfigError("generation.sweep.retriever must be one of retrievers.use")
        try:
            sweep["budgets"] = parse_budgets(sweep.get("budgets", "100:1000:100"))
        except ValueError as exc:
            raise ConfigError(f"generation.sweep.budgets: {exc}") from exc
    if g.get("prompt", "paper") not in GENERATION_PROMPTS:
        raise ConfigError(f"generation.prompt must be one of {', '.join(GENERATION_PROMPTS)}, "
                          f"not {g.get('prompt')!r}")
    refusal = cfg["judge"].get("refusal") or {}
    if not isinstance(refusal, dict):
        raise ConfigError("judge.refusal must be a mapping {enabled, patterns}")
    patterns = refusal.get("patterns")
    if patterns is not None and (isinstance(patterns, str) or not isinstance(patterns, list)):
        raise ConfigError("judge.refusal.patterns must be a list of regular expressions")
    try:  # resolved, so a change of the default patterns changes the judge stage key
        cfg["judge"]["refusal"] = RefusalRule.from_config(refusal).to_config()
    except RefusalPatternError as exc:
        raise ConfigError(f"judge.refusal.patterns: {exc}") from exc
    if cfg["judge"]["mode"] not in JUDGE_MODES:
        raise ConfigError(f"judge.mode must be one of {', '.join(JUDGE_MODES)}")
    if cfg["calibration"]["method"] not in ("sweep", "de"):
        raise ConfigError("calibration.method must be 'sweep' or 'de'")
    scored = [cfg["scoring"]["method"], *cfg["scoring"]["also"]]
    if cfg["calibration"].get("scores") not in (None, *scored):
        raise ConfigError(f"calibration.scores must be one of the methods scored "
                          f"(scoring.method and scoring.also: {', '.join(scored)}), not "
                          f"{cfg['calibration']['scores']!r}")
    inherit_url(cfg)
    for section in ("llm", "generation", "judge"):
        llm = cfg[section] if section == "llm" else (cfg[section].get("llm") or {})
        if any("key" in k.lower() and k != "api_key_env" for k in llm):
            raise ConfigError(f"{section}: API keys must come from the environment "
                              "(OPENAI_API_KEY) or the dashboard's password field, never a file")
    for key in ("path", "corpus"):
        cfg["dataset"][key] = resolve_path(cfg["dataset"].get(key))
    try:
        cfg["dataset"]["sample"] = check_rule(cfg["dataset"].get("sample"))
    except ValueError as exc:
        raise ConfigError(f"dataset.{exc}") from exc
    try:  # found relevant parts (a dataset without them): resolved, missing keys at defaults
        cfg["dataset"]["evidence"] = check_evidence(cfg["dataset"].get("evidence")).to_dict()
    except ValueError as exc:
        raise ConfigError(f"dataset.{exc}") from exc
    limit = cfg["dataset"].get("limit")
    if limit is not None and limit <= 0:
        raise ConfigError("dataset.limit must be a positive integer")
    try:  # where stages run (never in a stage key: the results are the same)
        cfg["executor"] = check_executor(cfg.get("executor"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return cfg


def _number(value: object, key: str, kind: type) -> int | float:
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


def _also(value: object, method: str) -> list[str]:
    """`scoring.also` as a list of known methods (a comma string accepted), in order, without
    repeats or `scoring.method`; ConfigError otherwise."""
    from ragdash.scoring import METHODS

    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"scoring.also must be a list of scoring methods, not {value!r}")
    unknown = [v for v in value if v not in METHODS]
    if unknown:
        raise ConfigError(f"scoring.also: {', '.join(map(repr, unknown))} not one of "
                          f"{', '.join(METHODS)}")
    return [v for v in dict.fromkeys(value) if v != method]


def _check_chunker(chunker: dict) -> None:
    from ragdash.chunking import CHUNKERS, resolve_params

    method = chunker.get("method")
    if method not in CHUNKERS:
        close = difflib.get_close_matches(str(method), list(CHUNKERS), n=1)
        raise ConfigError(f"chunker.method: unknown method {method!r}"
                          + (f"; did you mean '{close[0]}'?" if close else "")
                          + f" (known: {', '.join(CHUNKERS)})")
    try:
        resolve_params(method, chunker.get("params"))
    except ValueError as exc:
        raise ConfigError(f"chunker.params: {exc}") from exc
    if chunker.get("max_chars") is not None:
        chunker["max_chars"] = _number(chunker["max_chars"], "chunker.max_chars", int)


def _check_embeddings(section: dict) -> None:
    try:
        check_precision(section.get("precision"))
    except ValueError as exc:
        raise ConfigError(f"embeddings.{exc}") from None
    if not isinstance(section.get("cache"), bool):
        raise ConfigError(f"embeddings.cache must be true or false, not {section.get('cache')!r}")


def _check_tokenizer(spec: object) -> None:
    from ragdash.budget import TOKENIZERS

    if spec in TOKENIZERS:
        return
    if not isinstance(spec, str) or not Path(spec).expanduser().is_file():
        raise ConfigError(f"tokenizer: {spec!r} is neither one of {', '.join(TOKENIZERS)} nor "
                          "an existing tokenizer.json file")


def inherit_url(cfg: dict) -> None:
    """`generation.llm` and `judge.llm` without a base_url take the run's `llm.base_url` when
    they use the same backend: a server (and an API key) only ever goes where the user said."""
    base = cfg["llm"]
    for section in ("generation", "judge"):
        llm = cfg[section].get("llm")
        if (llm and not llm.get("base_url") and base.get("base_url")
                and llm.get("backend", base.get("backend")) == base.get("backend")):
            llm["base_url"] = base["base_url"]


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
