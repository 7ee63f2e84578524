"""A stage command on an existing run goes on with the run's own settings (run.json) when no
--config is given, and settings added after a run was made leave its stage keys alone."""

from __future__ import annotations

import json
import shutil

import pytest

from ragdash.cli import main
from ragdash.config import load_config
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Run
from ragdash.stages.runner import stage_keys


def _keys(path):
    m = Run(path).manifest
    cfg = load_config(None, {k: v for k, v in m["config"].items() if not k.startswith("_")})
    return stage_keys(cfg), {s: r["key"] for s, r in m["stages"].items()}


def test_the_squad_demo_keeps_every_stage_key():
    now, stored = _keys(PROJECT_ROOT / "data" / "demo_squad")
    assert {s: now[s] for s in stored} == stored


def test_the_hotpotqa_demo_keeps_its_retrieval_stage_keys():
    now, stored = _keys(PROJECT_ROOT / "data" / "demo_run")
    assert {s: now[s] for s in ("ingest", "chunk", "retrieve", "score")} == \
        {s: stored[s] for s in ("ingest", "chunk", "retrieve", "score")}


@pytest.mark.slow
def test_calibrate_on_a_run_dir_uses_its_saved_settings(tmp_path, capsys):
    run = tmp_path / "sq"
    shutil.copytree(PROJECT_ROOT / "data" / "demo_squad", run)
    before = json.loads((run / "run.json").read_text())
    assert main(["calibrate", "--run-dir", str(run), "-q"]) == 0
    after = json.loads((run / "run.json").read_text())
    # nothing was redone (with the defaults, every stage ran again from a sample dataset)
    assert {s: r.get("finished") for s, r in after["stages"].items()} == \
        {s: r.get("finished") for s, r in before["stages"].items()}
    assert after["config"]["dataset"]["path"] == before["config"]["dataset"]["path"]
    assert after["config"]["retrievers"]["use"] == before["config"]["retrievers"]["use"]
