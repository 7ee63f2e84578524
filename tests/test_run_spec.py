"""Issue 48 point 3: a finished run is read through the specification it was made with
(`ragdash.run_spec`): its saved config, migrated and validated as the same `RunSpec` the loader
gives, frozen, tolerant of files that moved, and refused by name and key when it no longer
reads; the pages list such a run as unreadable instead of failing on it."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from ragdash.config import ConfigError, RunSpec, load_spec, saved_spec
from ragdash.constants import PROJECT_ROOT
from ragdash.run_spec import budgets, ir_scores, problem, run_spec, score_methods
from ragdash.rundir import MANIFEST, Run
from ragdash.rundir.manifest import SPEC_VERSION, ManifestError
from ragdash.view.build import earlier_runs

V0 = Path(__file__).parent / "fixtures" / "run_json"


def saved_run(path: Path, config: dict, version: int | None = SPEC_VERSION) -> Run:
    """A run folder whose run.json keeps `config` (of `version`'s shape; None: no version)."""
    path.mkdir(parents=True, exist_ok=True)
    manifest = {"id": path.name, "config": config}
    if version is not None:
        manifest["spec_version"] = version
    (path / MANIFEST).write_text(json.dumps(manifest))
    return Run(path)


def test_a_saved_run_reads_as_the_spec_it_was_made_with(tmp_path):
    made = load_spec(None, {"scoring.method": "token", "judge.mode": "single",
                            "chunker.method": "recursive", "llm.backend": "ollama",
                            "generation.llm": {"backend": "openai"}, "generation.budget": 500,
                            "scoring.relevance_share": 0.5, "calibration.seed": 3,
                            "calibration.estimand": "new questions",
                            "judge.refusal.patterns": ["no idea"], "retrievers.use": "bm25,sim"})
    spec = run_spec(Run(tmp_path / "r").create(made.to_config(), SPEC_VERSION))
    assert spec == made  # one model: what was built is what is read back
    assert (spec.scoring.method, spec.judge.mode, spec.chunker.method) == (
        "token", "single", "recursive")
    assert (spec.generation.llm.backend, spec.llm.backend, spec.generation.budget) == (
        "openai", "ollama", 500)
    assert spec.compared == ["bm25", "sim"] and spec.judge.refusal.patterns == ["no idea"]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        spec.scoring.method = "substring"  # read-only


def test_keys_a_run_predates_read_at_the_specifications_defaults(tmp_path):
    """One declaration per default: a key the saved config lacks reads as RunSpec declares it
    (a changed default adds a migration, `SPEC_VERSION`), not as a second table of defaults."""
    spec = run_spec(saved_run(tmp_path / "old", {"retrievers": {"use": ["bm25"]}}))
    assert spec == RunSpec.from_config({"retrievers": {"use": ["bm25"]}})
    assert spec.judge.mode == RunSpec().judge.mode  # None in the view this replaces
    assert spec.generation.budget == RunSpec().generation.budget


@pytest.mark.parametrize("fixture", sorted(p.name for p in V0.glob("*.json")))
def test_a_version_0_run_is_migrated_on_reading(tmp_path, fixture):
    manifest = json.loads((V0 / fixture).read_text())
    assert "spec_version" not in manifest
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    spec = run_spec(Run(tmp_path))
    assert spec.judge.llm is None and spec.generation.llm is None  # the run's own LLM judged
    assert spec == saved_spec(manifest)  # what `ragdash run --run-dir` goes on with


def test_files_that_moved_since_the_run_do_not_stop_reading_it(tmp_path):
    gone = {"tokenizer": str(tmp_path / "gone" / "tokenizer.json"),
            "dataset": {"path": str(tmp_path / "gone" / "qa.jsonl")}}
    with pytest.raises(ConfigError, match="tokenizer"):  # a new run needs the file
        RunSpec.from_config(gone)
    run = saved_run(tmp_path / "moved", gone)
    assert problem(run) is None
    spec = run_spec(run)
    assert spec.tokenizer == gone["tokenizer"] and spec.dataset.path == gone["dataset"]["path"]


@pytest.mark.parametrize("config, reason", [
    ({"retrievers": "bm25"}, "'retrievers' must be a mapping"),
    ({"retrievers": {"use": 5}}, "retrievers.use must be a list of retriever names"),
    ({"retrievers": {"use": ["nope"]}}, "retrievers.use: unknown ['nope']"),
    ({"scoring": {"methd": "token"}}, "did you mean 'scoring.method'"),
    ({"generation": {"budget": "many"}}, "generation.budget"),
])
def test_a_config_that_no_longer_reads_is_refused_by_file_and_key(tmp_path, config, reason):
    run = saved_run(tmp_path / "bad", config)
    assert run.problem() is None  # run.json itself is fine: its stages can be listed
    with pytest.raises(ManifestError) as err:
        run_spec(run)
    assert str(err.value).startswith(f"{run.path / MANIFEST} cannot be read: config: ")
    assert reason in str(err.value)
    assert err.value.shown.startswith(f"{MANIFEST} cannot be read: config: ")  # no server path
    assert problem(run) == str(err.value)


def test_the_build_page_lists_a_run_whose_config_no_longer_reads(tmp_path):
    good = saved_run(tmp_path / "good", {"retrievers": {"use": ["bm25"]}})
    bad = saved_run(tmp_path / "bad", {"retrievers": {"use": ["nope"]}})
    table, problems = earlier_runs([good, bad])
    assert problems[str(good.path)] is None
    assert "retrievers.use: unknown" in problems[str(bad.path)]
    assert list(table["run"]) == ["good", "bad"]
    assert table.set_index("run").loc["bad", "stages"].startswith("unreadable: ")


def test_the_view_follows_run_json_when_it_changes(tmp_path):
    run = saved_run(tmp_path / "r", {"scoring": {"method": "token"}})
    first = run_spec(run)
    assert run_spec(run) is first  # kept: a page reads it many times a rerun
    saved_run(tmp_path / "r", {"scoring": {"method": "substring"}})
    assert run_spec(run).scoring.method == "substring"


def test_score_ir_tables_are_picked_by_the_specs_methods():
    run = Run(PROJECT_ROOT / "data" / "demo_run")
    spec = run_spec(run)
    assert score_methods(run)[0] == spec.scoring.method
    main = ir_scores(run)
    assert main.equals(ir_scores(run, spec.scoring.method))
    assert budgets(run) == sorted(int(b) for b in main["budget"].unique())
    with pytest.raises(ValueError, match="has no Score_IR by 'token'"):
        ir_scores(run, "token")


def test_budgets_before_scoring_are_the_specs(tmp_path):
    run = saved_run(tmp_path / "r", {"budgets": [300, 100, 200]})
    assert budgets(run) == [100, 200, 300]
