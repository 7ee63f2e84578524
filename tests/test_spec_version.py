"""Issue 34 §1: run.json keeps `spec_version` beside its config, and an earlier shape is
migrated into today's specification on read, one migration function per version, each tested
on a run.json of that shape kept as a fixture (tests/fixtures/run_json/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdash.config import (
    MIGRATIONS,
    SPEC_VERSION,
    ConfigError,
    RunSpec,
    load_spec,
    migrate,
    saved_config,
    saved_spec,
)
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Run
from ragdash.stages.generate import generator_settings
from ragdash.stages.judge import judge_settings
from ragdash.stages.runner import run_stages, stage_keys

FIXTURES = Path(__file__).parent / "fixtures" / "run_json"


def _manifest(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def test_every_version_below_the_current_one_has_its_migration():
    assert sorted(MIGRATIONS) == list(range(SPEC_VERSION))


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("v0-*.json")))
def test_a_version_0_run_json_reads_as_a_spec(name):
    manifest = _manifest(name)
    assert "spec_version" not in manifest  # version 0: written before the field
    spec = saved_spec(manifest)
    assert isinstance(spec, RunSpec) and spec.retrievers.use == ["bm25", "sim"]
    assert spec.dataset.limit == 20 and spec.executor.kind == "local"  # later keys: defaults
    assert set(stage_keys(spec)) >= {"ingest", "retrieve", "generate", "judge"}


def test_version_0_answers_keep_the_model_they_were_written_with():
    """Before version 1 a generation or judge section without `llm` meant the run's `llm`;
    read as today's shape, the local default generator (the 1.5B) would take over, re-keying
    the run and answering again with another model. The migration keeps the run's."""
    manifest = _manifest("v0-with-answers.json")
    raw = {k: v for k, v in manifest["config"].items()}
    unmigrated = RunSpec.from_config(raw)
    assert unmigrated.generation.llm is not None  # the 1.5B default stepped in
    spec = saved_spec(manifest)
    assert spec.generation.llm is None and spec.judge.llm is None
    assert generator_settings(spec).model == judge_settings(spec).model == \
        RunSpec.from_config({"llm": raw["llm"]}).llm.settings().model
    assert generator_settings(spec).max_tokens == 96  # the run's own llm section
    assert stage_keys(spec)["generate"] != stage_keys(unmigrated)["generate"]
    assert saved_config(manifest)["generation"]["llm"] is None


def test_a_config_already_in_todays_shape_is_unchanged():
    cfg = load_spec(None, {"generation.enabled": True}).to_config()
    assert migrate(cfg, SPEC_VERSION) == cfg
    assert saved_config({"config": cfg, "spec_version": SPEC_VERSION}) == cfg


def test_a_run_json_from_a_newer_ragdash_is_refused_by_name():
    with pytest.raises(ConfigError, match="spec_version 99.*newer ragdash"):
        saved_spec({"config": {}, "spec_version": 99})


@pytest.mark.parametrize("demo", ["demo_run", "demo_squad"])
def test_both_demos_are_version_0_and_keep_every_stage_key(demo):
    manifest = json.loads((PROJECT_ROOT / "data" / demo / "run.json").read_text())
    recorded = {s: r["key"] for s, r in manifest["stages"].items() if r.get("key")}
    keys = stage_keys(saved_spec(manifest))
    # the HotpotQA demo's LLM stages predate prompt versions (tests/test_saved_config.py)
    same = {s for s in recorded if keys[s] == recorded[s]}
    assert {"ingest", "chunk", "retrieve", "score"} <= same


def test_a_new_run_writes_the_current_spec_version(tmp_path, generic):
    dataset, corpus = generic
    spec = load_spec(None, {"dataset": {"path": str(dataset), "corpus": str(corpus)},
                            "chunker": {"method": "none"}, "retrievers": {"use": ["bm25"]},
                            "tokenizer": "whitespace", "budgets": [5, 10]})
    run = run_stages(spec, tmp_path / "r", ["ingest"])
    assert Run(run.path).manifest["spec_version"] == SPEC_VERSION
    assert saved_spec(run.manifest) == spec
