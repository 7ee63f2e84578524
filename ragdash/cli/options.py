"""The options of the stage commands (`ragdash run`, `ragdash score`, ..., `ragdash sweep`) and
the dotted config overrides they make for `ragdash.config.load_spec`."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ragdash.config import RunSpec


def stage_commands() -> dict[str, tuple[tuple[str, ...] | None, str]]:
    """{subcommand: (the stages it runs, help)}: one per stage of the registry (with what it
    needs; a stage that works on an existing run has its own sub-command), and `run` for every
    configured stage."""
    from ragdash.stages import REGISTRY
    from ragdash.stages.runner import chain

    out: dict[str, tuple[tuple[str, ...] | None, str]] = {
        s.cli: (chain(s.name), s.about) for s in REGISTRY if not s.on_run_dir}
    out["run"] = (None, "run every stage the config asks for (LLM stages when enabled)")
    return out


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options every stage command (and `sweep`) takes; `OPTIONS` maps them to keys. Each
    takes its type, its choices and its help from its key's declaration (`spec_field`,
    `describe`: what docs/config.md says), so the three never drift; `CONTEXT` adds what the
    key alone does not say (whose LLM, what an option implies)."""
    p.add_argument("--config", help="YAML config (e.g. configs/paper.yaml)")
    p.add_argument("--run-dir", help="run directory (default: <runs_root>/<config name>)")
    add_declared(p, OPTIONS, CONTEXT)
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="any config key, dotted, its value read as YAML (repeatable), e.g. "
                        "--set retrievers.params.bm25.k=10 (docs/config.md lists them)")
    p.add_argument("--system", action="append", metavar="NAME=FILE",
                   help="your own RAG system, compared beside the built-in retrievers: NAME and "
                        "the file of its results (RAGAS-style records, a TREC run or "
                        "OpenInference spans; repeatable) [systems.NAME.file]")
    p.add_argument("--system-format", choices=("auto", "ragas", "trec", "spans"),
                   help="the format of the --system files (default: detected from the content) "
                        "[systems.NAME.format]")
    p.add_argument("--force", action="store_true", help="redo stages even if up to date")
    p.add_argument("--dry-run", action="store_true",
                   help="run the stages that call no LLM (retrieval, unless mlq would ask "
                        "for sub-questions), then only estimate the LLM calls, tokens, cost "
                        "and time (no LLM call)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def add_declared(p: argparse.ArgumentParser, options: Mapping[str, str],
                 context: Mapping[str, str] | None = None,
                 model: type[BaseModel] | None = None) -> None:
    """An option per (option, dotted key) of `options`, taking its type, its choices and its
    help from the key's declaration: a key of the run specification (`spec_field`, `describe`:
    what docs/config.md says; the help ends with the key), or a field of `model` (its help ends
    with its default). `context` adds what the key alone does not say (whose LLM, what it
    implies). A true-or-false key is a flag; an option not given is None (the declaration's
    default applies)."""
    from ragdash.config import spec_field

    for opt, key in options.items():
        field = spec_field(key) if model is None else model.model_fields.get(key)
        kind = _required(field.annotation) if field else str
        if get_origin(kind) in (Union, UnionType) and {
                _required(a) for a in get_args(kind)} <= {int, float}:
            kind = float  # a number written either way
        takes: dict[str, Any] = {"action": "store_true", "default": None} if kind is bool else \
            {"type": kind} if kind in (int, float) else \
            {"choices": [a for a in get_args(kind) if a is not None]} \
            if get_origin(kind) is Literal else {}
        about = " ".join((field.description or "").split()) if field else ""
        text = "; ".join(t for t in ((context or {}).get(opt), about) if t)
        tail = f"[{key}]" if model is None else \
            f"(default {field.default})" if field and field.default is not None \
            and field.default is not False else ""
        p.add_argument("--" + opt.replace("_", "-"), **takes, help=f"{text} {tail}".strip())


def llm_options(option: str = "llm", section: str = "llm") -> dict[str, str]:
    """`--<option>-backend`, `--<option>-model` and `--<option>-url` and the keys of the LLM
    section `section` they set (`llm`, `judge.llm`, ...)."""
    return {f"{option}_{name}": f"{section}.{key}" for name, key in
            (("backend", "backend"), ("model", "model"), ("url", "base_url"))}


def add_llm_options(p: argparse.ArgumentParser, whose: str, option: str = "llm",
                    section: str = "llm") -> dict[str, str]:
    """The `llm_options` of one LLM section on a sub-command, declared by its keys
    (`ragdash.llm.settings.LLMSpec`); `whose`: whose LLM it is, in the help. Returns them
    (option -> key) for the command's overrides."""
    options = llm_options(option, section)
    add_declared(p, options, dict.fromkeys(options, whose))
    return options


def declared_overrides(args: argparse.Namespace, options: Mapping[str, str]) -> dict[str, Any]:
    """The options of `options` given, as dotted config overrides."""
    return {key: getattr(args, opt) for opt, key in options.items()
            if getattr(args, opt, None) not in (None, "")}


def _required(annotation: Any) -> Any:
    """`annotation` without its `| None` and its constraints: `int | None` and
    `Annotated[int, Field(ge=1)] | None` are int, `list[int]` stays itself."""
    if get_origin(annotation) in (Union, UnionType):
        kinds = [a for a in get_args(annotation) if a is not type(None)]
        annotation = kinds[0] if len(kinds) == 1 else annotation
    if get_origin(annotation) is Annotated:
        return _required(get_args(annotation)[0])
    return annotation


def glossary() -> str:
    """Retrievers and chunkers with their declared parameters, one line each (set them with
    --set retrievers.params.<retriever>.<name>=V or --set chunker.params.<name>=V)."""
    from ragdash import chunking, retrieval

    lines = ["retrievers and their parameters (--set retrievers.params.<retriever>.<name>=V; "
             "presets: " + ", ".join(retrieval.PRESETS) + "):"]
    for name, about in retrieval.DESCRIPTIONS.items():
        lines += [f"  {name:<5} {about}",
                  *(f"        {p.summary()}" for p in retrieval.params_of(name))]
    lines.append("chunkers and their parameters (--chunker M, --set chunker.params.<name>=V):")
    for method in chunking.CHUNKERS:
        lines += [f"  {method:<9} {chunking.describe(method)}",
                  *(f"        {p.summary()}" for p in chunking.params_of(method))]
    lines.append("every config key: docs/config.md")
    return "\n".join(lines)


OPTIONS: dict[str, str] = {
    "dataset": "dataset.path", "corpus": "dataset.corpus", "format": "dataset.format",
    "limit": "dataset.limit", "sheet": "dataset.sheet", "columns": "dataset.columns",
    "chunker": "chunker.method", "retrievers": "retrievers.use",
    "preset": "retrievers.preset", "tokenizer": "tokenizer", "budgets": "budgets",
    "scoring": "scoring.method", "mode": "scoring.mode", "also": "scoring.also",
    "calibrate_on": "calibration.scores", "llm_backend": "llm.backend", "llm_model": "llm.model",
    "llm_url": "llm.base_url", "judge_backend": "judge.llm.backend",
    "judge_model": "judge.llm.model", "judge_url": "judge.llm.base_url",
    "gen_budget": "generation.budget", "executor": "executor.kind",
    "ray_address": "executor.address", "workers": "executor.workers",
}
"""Each option of the stage commands and the dotted config key it sets."""

CONTEXT: dict[str, str] = {
    "llm_backend": "the run's LLM (the generator's by default, and mlq's)",
    "llm_model": "the run's model",
    "llm_url": "the run's server",
    "judge_backend": "the judge's LLM (default: the run's)",
    "judge_model": "the judge's model",
    "judge_url": "the judge's server (default: --llm-url when the judge uses the run's "
                 "backend)",
    "executor": "where stages run their batches (same results either way)",
    "ray_address": "implies --executor ray",
    "workers": "implies --executor ray",
}
"""What an option's help says before its key's documentation: the key of an LLM section is
documented once for every section (whose LLM it is goes here), and what an option implies."""


def overrides_from(args: argparse.Namespace) -> dict[str, object]:
    """The options given, as dotted config overrides (then every `--set KEY=VALUE`), for
    `ragdash.config.load_spec`."""
    from ragdash.config import parse_set
    from ragdash.stages import STAGES

    o: dict[str, object] = {key: getattr(args, opt) for opt, key in OPTIONS.items()
                            if getattr(args, opt, None) not in (None, "")}
    if args.dataset and not args.format:  # a new file: detect its format, not the config's
        o["dataset.format"] = "auto"
    if (args.ray_address or args.workers is not None) and not args.executor:
        o["executor.kind"] = "ray"  # a Ray option implies the Ray executor
    # a stage asked for is switched on (`sweep` runs what the config asks, as `run` does)
    for name in stage_commands().get(args.command, ((), ""))[0] or ():
        if switch := STAGES[name].switch:
            o[f"{switch}.enabled"] = True
    o.update(system_overrides(getattr(args, "system", None) or (),
                              getattr(args, "system_format", None)))
    o.update(parse_set(text) for text in getattr(args, "set", None) or ())
    return with_llm_options(args, o)


LLM_OPTIONS = {"llm_backend": "backend", "llm_model": "model", "llm_url": "base_url"}
"""The options that set the run's LLM (`llm.*`), and with it the generator's and judge's."""


def with_llm_options(args: argparse.Namespace, over: dict[str, object]) -> dict[str, object]:
    """`over` with the generator and the judge following `--llm-backend`, `--llm-model` and
    `--llm-url` as on a new run, when the config they go onto (`--config`, else the run's
    saved one) names its own `generation.llm` or `judge.llm` that no `--set` or `--judge-*`
    of this command sets: one that is the local default (`with_local_defaults` filled it in
    from the run's `llm`) is made again from the new `llm`; a generator set otherwise that
    the options would not change is refused (ConfigError naming `generation.llm` and how to
    set it); a judge set otherwise keeps its own LLM."""
    from ragdash.config import ConfigError, deep_merge, expand, read_yaml
    from ragdash.llm.settings import LOCAL_GENERATOR, LOCAL_JUDGE, local_default_llm

    given = {key: getattr(args, opt) for opt, key in LLM_OPTIONS.items()
             if getattr(args, opt, None) not in (None, "")}
    if not given:
        return over
    config = getattr(args, "config", None)
    base = read_yaml(config) if config else \
        on_saved(args, {}) if getattr(args, "run_dir", None) else {}
    nested = expand(over)
    old = base.get("llm") if isinstance(base.get("llm"), dict) else {}
    new = deep_merge(old, nested["llm"] if isinstance(nested.get("llm"), dict) else {})
    out = dict(over)
    for section, model in (("generation", LOCAL_GENERATOR), ("judge", LOCAL_JUDGE)):
        own = (base.get(section) or {}).get("llm") if isinstance(base.get(section), dict) \
            else None
        asked = nested.get(section, {})
        if not isinstance(own, dict) or not isinstance(asked, dict) or "llm" in asked:
            continue  # it follows the run's llm already, or this command sets it
        if own == local_default_llm(old, model):
            out[f"{section}.llm"] = local_default_llm(new, model)
            continue
        kept = {"backend": own.get("backend") or "local", "model": own.get("model"),
                "base_url": own.get("base_url")}
        if section == "generation" and any(kept[k] != v for k, v in given.items()):
            options = " ".join(f"--{opt.replace('_', '-')} {getattr(args, opt)}"
                               for opt, k in LLM_OPTIONS.items() if k in given)
            sets = " ".join(f"--set generation.llm.{k}={v}" for k, v in given.items())
            where = f"config file {config}" if config else f"the config saved in {args.run_dir}"
            shown = ", ".join(f"{k} {v}" for k, v in kept.items() if v)
            raise ConfigError(
                f"{options} sets the run's LLM (llm.*), but {where} gives the generator its "
                f"own generation.llm ({shown}), which these options do not change: set it "
                f"with {sets}, or --set generation.llm=null to answer with the run's llm")
    return out


def system_overrides(given: Iterable[str], fmt: str | None = None) -> dict[str, object]:
    """`--system NAME=FILE` texts (and `--system-format`) as `systems.NAME.*` overrides;
    ConfigError for a text without `=` or a name that cannot name a system."""
    from ragdash.config import ConfigError
    from ragdash.retrieval import RETRIEVERS
    from ragdash.systems import check_name

    out: dict[str, object] = {}
    for text in given:
        name, sep, file = str(text).partition("=")
        if not sep or not file.strip():
            raise ConfigError(f"--system {text!r}: expected NAME=FILE, e.g. --system "
                              "mine=results.jsonl")
        try:
            check_name(name.strip(), tuple(RETRIEVERS))
        except ValueError as exc:
            raise ConfigError(f"--system: {exc}") from None
        out[f"systems.{name.strip()}.file"] = file.strip()
        if fmt:
            out[f"systems.{name.strip()}.format"] = fmt
    return out


def on_saved(args: argparse.Namespace, overrides: dict) -> dict:
    """The overrides on top of the config saved in `--run-dir`'s run.json when no `--config`
    is given (read and migrated by `ragdash.config.saved_config`): `ragdash calibrate --run-dir
    R` goes on with R's own settings instead of the defaults (which would redo its stages and
    overwrite its run.json). A run.json that cannot be read, or that keeps no config, is
    refused (naming the file and why) before anything of the run is touched."""
    from ragdash.config import ConfigError, deep_merge, expand, saved_config
    from ragdash.rundir import MANIFEST, Run

    if args.config or not args.run_dir:
        return overrides
    run = Run(args.run_dir)
    if not run.exists():
        return overrides  # a new run
    manifest = run.manifest  # ManifestError: the file and the reason
    if "config" not in manifest:
        raise ConfigError(f"{run.path / MANIFEST} keeps no config: give --config (or run "
                          "`ragdash run --config ...` there first)")
    return deep_merge(saved_config(manifest), expand(overrides))


def saved_with(run_dir: str, over: dict[str, Any], sets: Iterable[str] | None) -> RunSpec:
    """The config saved in the run at `run_dir` with the dotted keys of `over`, then the
    `--set KEY=VALUE` texts `sets`: what a sub-command working on an existing run uses."""
    from ragdash.config import RunSpec, deep_merge, expand, parse_set, saved_config
    from ragdash.rundir import Run

    run = Run(run_dir)
    if not run.exists():
        raise FileNotFoundError(f"{run.path} is not a run directory: give --run-dir a run made "
                                "by `ragdash run`")
    over = {**over, **dict(parse_set(t) for t in sets or ())}
    return RunSpec.from_config(deep_merge(saved_config(run.manifest), expand(over)))


def stage_spec(args: argparse.Namespace, stage: str, options: Iterable[str]) -> RunSpec:
    """The config saved in the run at `--run-dir` with `stage` switched on, each of this
    command's `options` that was given as `<stage>.<option>`, then its `--set` texts."""
    over: dict[str, Any] = {f"{stage}.enabled": True}
    over.update({f"{stage}.{key}": value for key in options
                 if (value := getattr(args, key)) not in (None, "")})
    return saved_with(args.run_dir, over, args.set)


def add_llm_stage_options(p: argparse.ArgumentParser, example: str) -> None:
    """`--set`, `--dry-run` and `-q` of a sub-command that runs an LLM stage on an existing run
    (`ragdash metrics`, `ragdash erag`); `example`: a `--set` value for its help."""
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help=f"a config key for this stage, e.g. --set {example}")
    p.add_argument("--dry-run", action="store_true",
                   help="only estimate the calls, tokens, cost and time (no LLM call)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
