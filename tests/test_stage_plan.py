"""Issue 48 §2: one stage interface. Each stage declares its settings section, which LLM it
calls under a spec (`Stage.llm`) and its calls as data (`Stage.plan`); the dry run, the
endpoints printed before a run, every `--dry-run` and the launchers' estimates are one loop
over the registry (`ragdash.planning`), so an LLM stage cannot be added without a plan and
none is left out of the endpoint lines."""

from __future__ import annotations

import dataclasses

import pytest

from ragdash.cli.endpoints import endpoint_lines
from ragdash.config import load_spec
from ragdash.llm.plan import CallPlan
from ragdash.llm.runner import chat_call
from ragdash.planning import estimated_stages, priced_stages
from ragdash.stages import REGISTRY, STAGES
from ragdash.stages.base import Stage
from ragdash.stages.runner import configured_stages
from ragdash.ui.stage_launcher import SINGLE

URL = "http://127.0.0.1:9/v1"
PARTS = ("mlq", "generation", "judge", "metrics", "erag", "stress")
"""What the calls of each LLM use are called, in registry order."""


def _llm(model: str) -> dict:
    return {"backend": "openai", "model": model, "base_url": URL}


EVERY_LLM = {"llm": _llm("m-mlq"), "retrievers.use": ["bm25", "mlq"],
             "generation.enabled": True, "generation.llm": _llm("m-generation"),
             "judge.enabled": True, "judge.llm": _llm("m-judge"),
             "metrics.enabled": True, "metrics.llm": _llm("m-metrics"),
             "erag.enabled": True, "erag.llm": _llm("m-erag"),
             "stress.enabled": True, "stress.llm": _llm("m-stress")}
"""A run that calls an LLM in every stage that can, each its own model."""


def test_every_stage_that_calls_an_llm_has_a_plan_and_a_section():
    spec = load_spec(None, EVERY_LLM)
    calling = [s for s in REGISTRY if s.uses_llm(spec) is not None]
    assert [s.priced_as for s in calling] == list(PARTS)
    for s in calling:
        assert s.plan is not None and s.section, s.name
        assert estimated_stages()[s.priced_as] == s.name
    # a job's time left weighs each one's progress step with its plan and names it (jobs.py
    # reads both from the registry)
    from ragdash import jobs

    assert set(jobs.PLANNED_STEPS) == set(jobs.STAGE_WORDS) == {
        s.name for s in REGISTRY if s.llm is not None}
    # ingest too, on a dataset without relevant parts (tests/test_evidence_dry_run.py)
    assert {s.name for s in calling} == set(jobs.PLANNED_STEPS) - {"ingest"}
    assert jobs.PLANNED_STEPS["erag"] == "answering from each chunk alone"
    assert priced_stages(spec) == calling  # the dry run's loop prices each of them
    assert all(s.section for s in REGISTRY if s.name != "reference")  # reference has none
    # the stages the LLM page launches alone, each setting its own section
    assert SINGLE == ("metrics", "erag", "stress")
    assert all(STAGES[name].section == name for name in SINGLE)


def test_a_stage_that_calls_an_llm_without_a_plan_is_refused():
    erag = STAGES["erag"]
    with pytest.raises(TypeError, match="no plan"):
        dataclasses.replace(erag, name="echo", plan=None)
    with pytest.raises(TypeError, match="names no llm"):
        dataclasses.replace(STAGES["score"], llm_stage=True)


def test_the_endpoint_lines_name_every_llm_section_each_with_its_own_model():
    spec = load_spec(None, EVERY_LLM)
    assert endpoint_lines(spec, configured_stages(spec)) == [
        f"[llm] {part}: openai model m-{part} at {URL}" for part in PARTS]
    # a section left out borrows the model its stage borrows (eRAG and stress: the generator's)
    borrowed = load_spec(None, {k: v for k, v in EVERY_LLM.items()
                                if k not in ("erag.llm", "stress.llm")})
    lines = endpoint_lines(borrowed, ("erag", "stress"))
    assert lines == [f"[llm] {p}: openai model m-generation at {URL}" for p in ("erag", "stress")]
    # mlq only when it is used; a stage not run prints nothing
    plain = load_spec(None, {**EVERY_LLM, "retrievers.use": ["bm25"]})
    assert [line.split(":")[0] for line in endpoint_lines(plain, ("retrieve", "judge"))] == [
        "[llm] judge"]


def test_a_stage_added_to_the_registry_is_priced_and_announced_by_the_loop(tmp_path,
                                                                          monkeypatch, capsys):
    """The next LLM stage touches its own module and the registry only: declared with its
    `llm` and `plan`, the dry run prices it, `ragdash run` announces its endpoint and, for a
    stage on an existing run, `ragdash <stage> --run-dir R` exists."""
    import re
    import shutil

    import ragdash.cli.parser as parser
    import ragdash.planning as planning
    import ragdash.stages as stages
    from ragdash.cli import main
    from ragdash.constants import PROJECT_ROOT
    from ragdash.planning import dry_run
    from ragdash.rundir import Run
    from ragdash.stages.generate import generator_settings

    def plan(ctx):
        return CallPlan([chat_call([{"role": "user", "content": f"say {i}"}])
                         for i in range(3)], tokens_out=5)

    echo = Stage("echo", "say something", needs=("ingest",), settings=lambda spec: (),
                 run=lambda ctx: {}, section="generation", switch="generation",
                 llm=generator_settings, plan=plan, llm_stage=True, on_run_dir=True)
    registry = (*REGISTRY, echo)
    for module in (stages, planning, parser):
        monkeypatch.setattr(module, "REGISTRY", registry)
    for module in (stages, planning):
        monkeypatch.setattr(module, "STAGES", {**STAGES, "echo": echo})
    spec = load_spec(None, {**EVERY_LLM, "runs_root": str(tmp_path)})
    est = dry_run(Run(tmp_path / "r"), spec, stages=("echo",))
    assert est["echo"].calls == 3 and est["echo"].model == "m-generation"
    assert estimated_stages()["echo"] == "echo"  # a job's ETA (`stage_plan`) counts it
    assert endpoint_lines(spec, ("echo",)) == [f"[llm] echo: openai model m-generation at {URL}"]
    # on an existing run, `ragdash echo --run-dir R --dry-run` is made from the registry
    shutil.copytree(PROJECT_ROOT / "data" / "demo_run", tmp_path / "demo")
    capsys.readouterr()
    assert main(["echo", "--run-dir", str(tmp_path / "demo"), "--dry-run", "--set",
                 f"runs_root={tmp_path}"]) == 0
    assert re.search(r"Stage echo would cost:\n  \S+: 3 calls", capsys.readouterr().out)


def test_the_dry_run_is_each_stage_priced_alone(tmp_path):
    """`ragdash run --dry-run` (the loop) prices each LLM stage as its own `--dry-run` and its
    launcher do (`stage_estimate`): one plan per stage, so they cannot disagree."""
    import shutil

    from ragdash.config import RunSpec, deep_merge, saved_spec
    from ragdash.constants import PROJECT_ROOT
    from ragdash.planning import dry_run, stage_estimate
    from ragdash.rundir import Run

    shutil.copytree(PROJECT_ROOT / "data" / "demo_run", tmp_path / "r")
    run = Run(tmp_path / "r")
    spec = RunSpec.from_config(deep_merge(saved_spec(run.manifest).to_config(), {
        "runs_root": str(tmp_path), "generation": {"limit": 3},
        "metrics": {"enabled": True, "limit": 2}, "erag": {"enabled": True, "limit": 2},
        "stress": {"enabled": True, "limit": 2}}))
    est = dry_run(run, spec)
    assert [k for k in est if k != "note"] == ["generation", "judge", "metrics", "erag",
                                               "stress"]
    for part in ("generation", "metrics", "erag", "stress"):  # the judge reads generation's
        alone, cached = stage_estimate(run, spec, estimated_stages()[part])
        assert (alone.calls, alone.tokens_in, alone.tokens_out) == (
            est[part].calls, est[part].tokens_in, est[part].tokens_out), part
        assert alone.calls > 0 and cached == 0, part  # no reply cache under tmp_path
    # priced before retrieval (mlq would ask the LLM): mlq's calls too, one per question, and
    # generation with contexts of the full budget, an upper bound
    before = dry_run(run, spec, retrieved=False)
    assert before["mlq"].calls == 40 and "upper bound" in before["note"]
    assert before["generation"].tokens_in >= est["generation"].tokens_in


def test_the_llm_page_has_a_launcher_per_llm_stage_on_an_existing_run(monkeypatch):
    """The LLM page's launchers are a loop over the registry (`stage_launcher.launchers`): the
    page's words where it has them, the stage's own otherwise; the metrics have their chooser."""
    from ragdash.ui import stage_launcher

    made = []
    monkeypatch.setattr(stage_launcher, "launcher",
                        lambda run, name, title, about, default_limit: made.append(
                            (name, title, default_limit)))
    stage_launcher.launchers(None, {"erag": ("Judge retrieval", "…", 5)})
    assert made == [("erag", "Judge retrieval", 5),
                    ("stress", f"Run stress: {STAGES['stress'].about}", 10)]
