"""Issue 34 §1: every section below the run specification is a typed model owned by its package
(LLM, executor, evidence, sampling, refusal, sweep), so a bad value anywhere stops the run at
load, named by its dotted key with what the key takes, instead of being accepted and failing
(or not) mid-run. Only free mappings (a method's parameters, Ray's runtime_env, a backend's
options) are left to their own checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdash.config import ConfigError, RunSpec, load_spec, section_model
from ragdash.constants import PROJECT_ROOT


@pytest.mark.parametrize(("overrides", "said"), [
    ({"llm.backend": "nope"}, "llm.backend must be one of local, ollama, openai, not 'nope'"),
    ({"llm.retries": -1}, "llm.retries must be at least 0, not -1"),
    ({"llm.tmperature": 0.2}, "unknown key 'llm.tmperature'; did you mean 'llm.temperature'?"),
    ({"judge.llm.concurrency": 0}, "judge.llm.concurrency must be at least 1, not 0"),
    ({"dataset.format": "xml"}, "dataset.format must be one of auto, hotpotqa, squad"),
    ({"dataset.corpus_format": "rtf"}, "dataset.corpus_format must be one of auto, jsonl"),
    ({"generation.llm": {"backend": "local", "max_tokens": "many"}},
     "generation.llm.max_tokens must be a whole number, not 'many'"),
    ({"metrics.llm": {"structured": "yaml"}},
     "metrics.llm.structured must be one of auto, json_schema, json_object, none"),
    ({"llm.temperature": True}, "llm.temperature must be a number, not True"),
    ({"llm.model": 3}, "llm.model must be text, not 3"),
    ({"llm.api_key": "sk-x"}, "llm.api_key: API keys must come from the environment"),
    ({"executor.kind": "cloud"}, "executor.kind must be one of local, ray, not 'cloud'"),
    ({"executor.wrokers": 2}, "unknown key 'executor.wrokers'; did you mean 'executor.workers'?"),
    ({"executor.workers": 2}, "apply to the ray executor only"),
    ({"dataset.evidence.max_parts": 5}, "dataset.evidence.max_parts must be at most 3, not 5"),
    ({"dataset.evidence.llm": "yes"}, "dataset.evidence.llm must be true or false"),
    ({"dataset.sample.n": 0}, "dataset.sample.n must be at least 1, not 0"),
    ({"dataset.sample.each": 2}, "unknown key 'dataset.sample.each'"),
    ({"judge.refusal.patterns": ["(x"]}, "judge.refusal.patterns: refusal pattern '(x'"),
    ({"judge.refusal.enabled": "no"}, "judge.refusal.enabled must be true or false"),
    ({"generation.sweep": {"retriever": "bm25", "budgets": "x"}}, "generation.sweep.budgets"),
    ({"generation.sweep": {"retriever": "bm25", "step": 5}},
     "unknown key 'generation.sweep.step'"),
])
def test_a_bad_value_below_the_spec_is_refused_at_load_by_its_key(overrides, said):
    with pytest.raises(ConfigError) as exc:
        load_spec(None, overrides)
    assert said in str(exc.value)


def _mappings(model, prefix=""):
    """The dotted keys of the spec that hold a free mapping (no section model)."""
    from ragdash.config import _is_mapping

    out = []
    for name, field in model.model_fields.items():
        inner = section_model(field.annotation)
        if inner is not None:
            out += _mappings(inner, f"{prefix}{name}.")
        elif _is_mapping(field.annotation):
            out.append(f"{prefix}{name}")
    return sorted(out)


def test_only_free_mappings_are_left_untyped():
    # a method's parameters (checked by its declared Param list), the columns map, Ray's
    # runtime_env, a backend's own options and the live retrievers by name (each value a typed
    # CustomRetrieverSpec); everything else is a typed field
    assert _mappings(RunSpec) == sorted([
        "dataset.columns", "chunker.params", "retrievers.params", "retrievers.resolved",
        "retrievers.custom", "llm.options", "generation.llm.options", "judge.llm.options",
        "metrics.llm.options", "erag.llm.options", "stress.llm.options",
        "executor.runtime_env"])


@pytest.mark.parametrize("config", sorted((PROJECT_ROOT / "configs").glob("*.yaml")),
                         ids=lambda p: Path(p).name)
def test_every_bundled_config_still_loads(config):
    spec = load_spec(config)
    assert spec.llm.backend in ("local", "ollama", "openai")


@pytest.mark.parametrize("demo", ["demo_run", "demo_squad"])
def test_both_demos_saved_configs_still_load(demo):
    cfg = json.loads((PROJECT_ROOT / "data" / demo / "run.json").read_text())["config"]
    assert load_spec(None, {k: v for k, v in cfg.items() if not k.startswith("_")})


def test_good_values_pass_and_sections_keep_only_what_was_written():
    spec = load_spec(None, {"llm.temperature": 0.7, "llm.max_tokens": 64, "llm.seed": None,
                            "judge.llm": {"backend": "openai", "model": "gpt-4o",
                                          "concurrency": 8, "timeout_s": 30.5},
                            "executor": {"kind": "ray", "workers": 2}})
    assert spec.judge.llm.concurrency == 8 and spec.executor.workers == 2
    # an LLM section dumps only its written keys (a stage key hashes it as the mapping it was)
    assert spec.judge.llm.model_dump() == {"backend": "openai", "model": "gpt-4o",
                                           "concurrency": 8, "timeout_s": 30.5}
    assert spec.to_config()["llm"] == {"backend": "local", "model": None, "temperature": 0.7,
                                       "max_tokens": 64, "seed": None}
    assert load_spec(None, {"llm.temperature": 0}).to_config()["llm"]["temperature"] == 0
    assert spec.judge.llm.settings().concurrency == 8  # the call settings of the section
