"""The LLM estimates before any call, as the LLM page's launcher and the Build page price them,
checked on their models without a browser (they were
tests/browser/test_browser_llm_estimate.py):
a local model's time is given before its first call (assumed from the bundled demos' calls, and
said so), a remote model never called has none. The pages' layout of these lines is
tests/test_app_pages.py's (`test_llm_page_estimates_cost_before_it_can_start`,
`test_build_page_prices_the_llm_stages_before_start`)."""

from __future__ import annotations

import re

import pytest
from fixtures.make_run import make_run

from ragdash.config import load_spec, saved_config
from ragdash.llm.refusal import RefusalRule
from ragdash.llm.settings import BACKENDS
from ragdash.planning import before_run, dry_run
from ragdash.rundir import Run
from ragdash.view.build import estimate_lines
from ragdash.view.llm_launch import LaunchForm, launch_spec

TIME_SOURCE = re.compile(r"calls/min \((assumed from|measured on) ")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    """The browser tests' default run: 40 synthetic questions with answers (seed 0)."""
    return Run(make_run(tmp_path_factory.mktemp("estimate") / "demo", n_questions=40, seed=0))


def test_the_llm_page_gives_the_local_model_a_time_and_the_remote_one_none(run):
    """The launcher as the browser left it: every widget at its default but the judge model,
    typed `gpt-4o` (the backends stay the first, local)."""
    saved = saved_config(run.manifest)
    form = LaunchForm(BACKENDS[0], "", BACKENDS[0], "gpt-4o", "", "stepwise", "abstain", 1000,
                      0, RefusalRule.from_config(saved.get("judge", {}).get("refusal")))
    lines = dict(estimate_lines(dry_run(run, launch_spec(saved, form))))
    generation = lines["generation"]
    assert generation.startswith("qwen2.5-coder-1.5b-instruct: "), generation
    assert "time unknown" not in generation
    assert TIME_SOURCE.search(generation), generation
    assert lines["judge"].startswith("gpt-4o: ") and "time unknown" in lines["judge"], lines


def test_the_build_page_prices_the_default_llm_stages_with_their_time(tmp_path):
    """The Build page's estimate (`server.llm_estimate`: `before_run` of its form's overrides)
    as the browser left the form: the sample dataset (its first 100 questions), BM25, the LLM
    stages switched on and nothing else changed: the default generator and judge, each priced,
    the generator with a time and where it comes from."""
    from ragdash.config import SAMPLE_DATASET
    from ragdash.llm.settings import judge_model_for
    from ragdash.view.build import dataset_section
    from ragdash.view.build_form import BuildForm

    form = BuildForm("run-x", dataset_section("sample", str(SAMPLE_DATASET), None, "", ""),
                     limit=100, retrievers=["bm25"],
                     llm={"backend": BACKENDS[0], "model": None, "base_url": None},
                     judge={"backend": BACKENDS[0], "base_url": None,
                            "model": judge_model_for(BACKENDS[0], "")})
    lines = dict(estimate_lines(before_run(load_spec(None, form.overrides(tmp_path)))))
    assert lines["generation"].startswith("qwen2.5-coder-1.5b-instruct: "), lines
    assert TIME_SOURCE.search(lines["generation"]), lines["generation"]
    assert lines["judge"].startswith("qwen2.5-coder-1.5b-instruct: "), lines
