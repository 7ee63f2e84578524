"""Runs of one dataset and of another on the Compare runs page and in the question browser,
without a browser (these were tests/browser/test_browser_runs.py's refusals and its cut
slider; picking, following the link and reloading stay there): runs of different datasets are
refused on both pages (one AppTest render each), and with two runs side by side in the
question browser the cut moves both columns (one render, one slider change)."""

from __future__ import annotations

import re

import pytest
from fixtures.apptest import open_app, page_text
from fixtures.make_run import make_run_reading

from ragdash.rundir import Run
from ragdash.ui.state import run_key

pytestmark = pytest.mark.slow




@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("runs-pages") / "runs"


@pytest.fixture
def three(root, monkeypatch):
    """Two runs of one dataset and one of another (the browser test's), keys in that order."""
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(root))
    if not (root / "run-other").exists():
        make_run_reading(root / "run-a", ("bm25", "sim"), "ab" * 32, llm=True)
        make_run_reading(root / "run-b", ("sim", "bm25"), "ab" * 32)
        make_run_reading(root / "run-other", ("bm25",), "cd" * 32)
    return tuple(run_key(root / n) for n in ("run-a", "run-b", "run-other"))


def test_runs_of_different_datasets_are_refused(three):
    a, _, other = three
    at = open_app("runs", rn_runs=[a, other])
    assert [e.value for e in at.error if "These runs cannot be compared." in e.value]
    assert len(re.findall("read different datasets", page_text(at))) == 1
    assert "Leaderboard" not in [h.value for h in at.subheader]


def test_browser_refuses_a_second_run_on_another_dataset(three, root):
    a, _, other = three
    qid = Run(root / "run-a").read("examples")["qid"].astype(str).iloc[0]
    at = open_app("browser", run=a, qb_q=qid, qb_run2=other)
    assert len(re.findall("read different datasets", page_text(at))) == 1
    assert [m for m in at.metric if m.label.startswith("Score_IR at N = ")]  # run a still shown
    assert "run-other ·" not in page_text(at)


def test_the_cut_moves_both_runs_columns(three, root):
    a, b, _ = three
    qid = Run(root / "run-a").read("examples")["qid"].astype(str).iloc[0]
    # as the Compare runs page's link opens them: one retriever of each run, cut at N = 800
    at = open_app("browser", run=a, qb_q=qid, qb_ret="bm25", qb_run2=b, qb_ret2="sim",
                  qb_cut="800")
    at800 = [m.label for m in at.metric if m.label.startswith("Score_IR at N = ")]
    assert at800 == ["Score_IR at N = 800"] * 2, at800
    assert "run-b ·" in page_text(at)
    at.slider(key="qb_cut").set_value(700).run()
    assert not at.exception, at.exception
    at700 = [m.label for m in at.metric if m.label.startswith("Score_IR at N = ")]
    assert at700 == ["Score_IR at N = 700"] * 2, at700
