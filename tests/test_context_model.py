"""Issue 48 §5: the context cut at N tokens (`ragdash.view.context`), the question browser's and
the labelling page's model, built without Streamlit: the page hands in its view and tokenizer."""

from __future__ import annotations

import pytest
from fixtures.make_run import make_run

from ragdash.budget import Tokenizer
from ragdash.view import RunView
from ragdash.view.context import cut_context, part_matches


@pytest.fixture(scope="module")
def view(tmp_path_factory) -> RunView:
    return RunView(make_run(tmp_path_factory.mktemp("ctx") / "run", n_questions=6, llm=False))


def _stored(view: RunView, qid: str, retriever: str):
    ir = view.run.read("ir_scores")
    return ir[(ir["qid"].astype(str) == qid) & (ir["retriever"] == retriever)].set_index("budget")


def test_the_cut_is_the_score_stages_cut_with_the_runs_tokenizer(view):
    qid = str(view.run.read("examples")["qid"].iloc[0])
    stored = _stored(view, qid, "bm25")
    asked: list[str] = []

    def load(spec: str) -> Tokenizer:
        asked.append(spec)
        return Tokenizer("whitespace", None, "whitespace")

    cut = cut_context(view, qid, "bm25", 200, load)
    assert asked == ["whitespace"]  # the run's own tokenizer
    assert cut is not None and cut.note is None and cut.budget == 200
    assert cut.cut == int(stored.loc[200, "cut"])  # what Score_IR was computed on
    assert cut.reached == (cut.cut < len(cut.context))
    assert list(cut.chunks["chunk_id"]) == list(
        view.question_chunks(qid)["bm25"]["chunk_id"])  # the chunks in rank order
    parts = [str(p) for p in view.run.read("examples")["parts"].iloc[0]][:1]
    assert len(part_matches(cut, parts)) == len(parts)


def test_without_its_tokenizer_the_cut_falls_back_to_the_nearest_stored_budget(view):
    qid = str(view.run.read("examples")["qid"].iloc[1])
    stored = _stored(view, qid, "sim")

    def missing(spec: str) -> Tokenizer:
        raise OSError(f"no {spec} here")

    cut = cut_context(view, qid, "sim", 250, missing)
    assert cut is not None and cut.budget == 250
    assert cut.cut == int(stored.loc[200, "cut"])  # the largest stored N at or under 250
    assert "unavailable (OSError)" in cut.note and "N = 200" in cut.note
    assert cut_context(view, qid, "nobody", 250, missing) is None  # retrieved nothing
