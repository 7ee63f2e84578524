"""A stage command on an existing run goes on with the run's own settings (run.json) when no
--config is given, and settings added after a run was made leave its stage keys alone."""

from __future__ import annotations

import json
import shutil

import pytest

from ragdash.cli import main
from ragdash.config import RunSpec, fingerprint, load_config
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Run
from ragdash.stages.runner import stage_keys


def _saved(path) -> dict:
    return {k: v for k, v in Run(path).manifest["config"].items() if not k.startswith("_")}


def _keys(path):
    """The stage keys the saved config gives now (through the typed specification, as given
    back to the loader) and the keys stored in the manifest."""
    spec = RunSpec.from_config(_saved(path))
    assert stage_keys(spec.to_config()) == stage_keys(load_config(None, _saved(path)))
    return stage_keys(spec.to_config()), {s: r["key"] for s, r in
                                          Run(path).manifest["stages"].items()}


NOT_RUN_ON_DEMOS = {"metrics", "erag", "stress"}
"""Optional stages added after the demos were made (their runs never performed them)."""


def test_the_squad_demo_keeps_every_stage_key():
    now, stored = _keys(PROJECT_ROOT / "data" / "demo_squad")
    assert set(stored) == set(now) - NOT_RUN_ON_DEMOS  # every other stage, all recomputed
    assert {s: k for s, k in now.items() if s in stored} == stored


LLM_STAGES = ("generate", "judge", "calibrate")


def test_the_hotpotqa_demo_keeps_every_stage_key_but_its_llm_ones():
    now, stored = _keys(PROJECT_ROOT / "data" / "demo_run")
    assert set(stored) == set(now) - NOT_RUN_ON_DEMOS
    assert {s: k for s, k in now.items() if s not in (*LLM_STAGES, *NOT_RUN_ON_DEMOS)} == \
        {s: k for s, k in stored.items() if s not in LLM_STAGES}


def test_the_hotpotqa_demos_llm_keys_predate_prompt_versions_and_the_refusal_rule():
    """Why its generate, judge and calibrate keys differ: they were made before the prompt
    versions and the resolved refusal rule entered those keys. Left out, the stored keys come
    back exactly (nothing else changed); they stay in, since nothing records which prompt texts
    the demo used (the squad demo, made after, hashes both)."""
    cfg = load_config(None, _saved(PROJECT_ROOT / "data" / "demo_run"))
    now, stored = _keys(PROJECT_ROOT / "data" / "demo_run")
    gen = {k: v for k, v in cfg["generation"].items() if k not in ("prompt", "limit")}
    assert cfg["generation"]["prompt"] == "paper" and cfg["generation"]["limit"] is None
    generate = fingerprint(now["retrieve"], cfg["tokenizer"], cfg["scoring"]["mode"],
                           cfg["llm"], gen)
    judge = fingerprint(generate, {k: v for k, v in cfg["judge"].items() if k != "refusal"},
                        None)
    calibrate = fingerprint(judge, now["score"], {k: v for k, v in cfg["calibration"].items()
                                                  if k not in ("scores", "estimand")})
    assert (generate, judge, calibrate) == tuple(stored[s] for s in LLM_STAGES)
    assert all(now[s] != stored[s] for s in LLM_STAGES)


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
