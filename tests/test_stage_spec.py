"""The stages read the typed run specification (`StageContext.spec`), while the stage keys and
the manifest keep the plain config: a spec and its plain config run the same stages with the
same keys, and a config the specification refuses stops before any file is written."""

from __future__ import annotations

import dataclasses

import pytest

from ragdash.config import ConfigError, RunSpec, load_config, load_spec
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Run
from ragdash.stages.base import StageContext
from ragdash.stages.runner import run_stages, stage_keys, typed


def test_the_context_carries_the_spec_and_no_plain_config():
    names = [f.name for f in dataclasses.fields(StageContext)]
    assert "spec" in names and "cfg" not in names
    assert StageContext.__annotations__["spec"] in ("RunSpec", RunSpec)


@pytest.mark.parametrize("name", ["paper", "squad-demo", "sample-llm", "equal-k"])
def test_a_spec_and_its_plain_config_give_the_same_keys(name):
    path = PROJECT_ROOT / "configs" / f"{name}.yaml"
    spec, cfg = load_spec(path), load_config(path)
    from_spec, plain = typed(spec), typed(cfg)
    assert from_spec[0] is spec and from_spec[1] == cfg
    assert plain[0] == spec and plain[1] == cfg  # the dict as given: its keys unchanged
    assert stage_keys(from_spec[1]) == stage_keys(plain[1]) == stage_keys(cfg)


def test_a_run_from_a_spec_matches_one_from_its_config(tmp_path, generic):
    dataset, corpus = generic
    over = {"dataset": {"path": str(dataset), "corpus": str(corpus)},
            "chunker": {"method": "none"}, "retrievers": {"use": ["bm25"]},
            "tokenizer": "whitespace", "budgets": [5, 10]}
    spec = load_spec(None, over)
    a = run_stages(spec, tmp_path / "a", ["ingest", "chunk", "retrieve", "score"])
    b = run_stages(spec.to_config(), tmp_path / "b", ["ingest", "chunk", "retrieve", "score"])
    assert a.manifest["config"] == b.manifest["config"] == spec.to_config()
    assert ({s: r["key"] for s, r in a.manifest["stages"].items()}
            == {s: r["key"] for s, r in b.manifest["stages"].items()})
    assert a.read("ir_scores").equals(b.read("ir_scores"))
    assert sorted(a.read("ir_scores")["budget"].unique()) == [5, 10]  # the spec's budgets


def test_a_config_the_spec_refuses_stops_before_any_file(tmp_path):
    cfg = load_config()
    bad = {**cfg, "retrievers": {**cfg["retrievers"], "use": ["bm25", "nosuch"]}}
    with pytest.raises(ConfigError, match="nosuch"):
        run_stages(bad, tmp_path / "r", ["ingest"])
    assert not Run(tmp_path / "r").exists()
