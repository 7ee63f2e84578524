"""Issue 34 §3: the Build page's form as data (`ragdash.view.build_form`), tested without
Streamlit: what keeps a run from starting, and the overrides it starts with, which load into a
valid specification (with and without the LLM stages)."""

from __future__ import annotations

import pytest

from ragdash.config import SAMPLE_DATASET, load_spec
from ragdash.view.build_form import BuildForm


def _form(**over) -> BuildForm:
    fields = dict(name="run-1", dataset={"path": str(SAMPLE_DATASET), "format": "auto",
                                         "corpus": None, "corpus_format": "auto"},
                  retrievers=["bm25"], limit=20, chunker="none")
    return BuildForm(**{**fields, **over})


@pytest.mark.parametrize("over, problem", [
    ({"name": "a b/../c"}, "The run name may hold letters"),
    ({"retrievers": []}, "Pick at least one retriever (or give your own system's results"),
    ({"dataset": {"path": ""}}, "Choose a dataset."),
    ({"budgets": "100:50:10"}, "Budgets:"),
    ({"source": "upload", "upload": {"name": "qa.csv", "examples": 0}},
     "qa.csv has no valid question"),
])
def test_each_problem_is_said(over, problem):
    said = _form(**over).problems()
    assert len(said) == 1 and said[0].startswith(problem), said


def test_your_own_system_alone_needs_no_retriever(tmp_path):
    """An imported system is compared without a built-in retriever beside it."""
    system = tmp_path / "mine.jsonl"
    system.write_text('{"user_input": "q", "retrieved_contexts": ["c"]}\n')
    form = _form(retrievers=[], systems={"mine": {"file": str(system), "format": "auto"}})
    assert form.problems() == []
    spec = load_spec(None, form.overrides(tmp_path))
    assert spec.retrievers.use == [] and spec.compared == ["mine"]


def test_a_valid_form_starts_a_run_with_its_settings(tmp_path):
    form = _form(retriever_params={"bm25": {"k": 7}}, max_chars=500, limit=0)
    assert form.problems() == []
    over = form.overrides(tmp_path)
    assert over["dataset.limit"] is None and over["chunker.max_chars"] == 500
    spec = load_spec(None, over)
    assert spec.retrievers.use == ["bm25"] and spec.runs_root == str(tmp_path)
    assert spec.retrievers.resolved["bm25"]["k"] == 7
    assert not spec.generation.enabled and not spec.judge.enabled


def test_the_llm_stages_switch_on_with_their_models(tmp_path):
    form = _form(llm={"backend": "local", "model": None, "base_url": None},
                 judge={"backend": "local", "model": "qwen-1.5b", "base_url": None},
                 judge_mode="grouped", prompt="paper")
    over = form.overrides(tmp_path)
    assert "llm.model" not in over and over["judge.llm.model"] == "qwen-1.5b"  # None left out
    spec = load_spec(None, over)
    assert spec.generation.enabled and spec.judge.enabled and spec.calibration.enabled
    assert (spec.judge.mode, spec.generation.prompt) == ("grouped", "paper")
