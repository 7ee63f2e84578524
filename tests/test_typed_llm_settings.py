"""Issue 34 §1 (first step): a bad value in any LLM section or a dataset format stops the run
at load, named by its dotted key, instead of being accepted and failing (or not) mid-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdash.config import ConfigError, load_spec
from ragdash.constants import PROJECT_ROOT


@pytest.mark.parametrize(("overrides", "said"), [
    ({"llm.backend": "nope"}, "llm.backend must be one of local, ollama, openai, not 'nope'"),
    ({"llm.retries": -1}, "llm.retries must be a whole number of at least 0"),
    ({"llm.tmperature": 0.2}, "llm.tmperature is not an LLM setting (did you mean "
                              "llm.temperature?)"),
    ({"judge.llm.concurrency": 0}, "judge.llm.concurrency must be a whole number of at least 1"),
    ({"dataset.format": "xml"}, "dataset.format must be one of auto, hotpotqa, squad"),
    ({"dataset.corpus_format": "rtf"}, "dataset.corpus_format must be one of auto, jsonl"),
    ({"generation.llm": {"backend": "local", "max_tokens": "many"}},
     "generation.llm.max_tokens must be a whole number"),
    ({"metrics.llm": {"structured": "yaml"}}, "metrics.llm.structured must be one of auto"),
    ({"llm.temperature": True}, "llm.temperature must be a number"),
    ({"llm.model": 3}, "llm.model must be text"),
])
def test_a_bad_llm_setting_or_format_is_refused_at_load_by_its_key(overrides, said):
    with pytest.raises(ConfigError) as exc:
        load_spec(None, overrides)
    assert said in str(exc.value)


@pytest.mark.parametrize("config", sorted((PROJECT_ROOT / "configs").glob("*.yaml")),
                         ids=lambda p: Path(p).name)
def test_every_bundled_config_still_loads(config):
    spec = load_spec(config)
    assert spec.llm["backend"] in ("local", "ollama", "openai")


@pytest.mark.parametrize("demo", ["demo_run", "demo_squad"])
def test_both_demos_saved_configs_still_load(demo):
    import json

    cfg = json.loads((PROJECT_ROOT / "data" / demo / "run.json").read_text())["config"]
    assert load_spec(None, {k: v for k, v in cfg.items() if not k.startswith("_")})


def test_good_values_pass():
    spec = load_spec(None, {"llm.temperature": 0.7, "llm.max_tokens": 64, "llm.seed": None,
                            "judge.llm": {"backend": "openai", "model": "gpt-4o",
                                          "concurrency": 8, "timeout_s": 30.5}})
    assert spec.judge.llm["concurrency"] == 8
