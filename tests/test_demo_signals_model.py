"""Every signal on the bundled SQuAD demo (no metrics stage; its labels are stand-ins, so the
truth is the reference metric `contains`), without a browser (these were
tests/browser/test_browser_signals.py and test_browser_compare_metrics.py): the LLM page's
"Which signal agrees with the truth here?" from its model; Compare retrievers (one AppTest
render, opened by its link's URL parameters) with every signal's means and intervals, the
rank-agreement callout with Kendall's tau and a dash where a pair has no test; Compare runs
(one AppTest render) with the same under its leaderboard."""

from __future__ import annotations

import re

import pytest
from fixtures.apptest import open_app

from ragdash.analysis import signals
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import Run
from ragdash.view import RunView

pytestmark = pytest.mark.slow

DEMO = "data/demo_squad"
RETRIEVERS = ["bm25", "sim", "mmr", "reo", "mlq"]
CELL = re.compile(r"^\d\.\d{3} \[\d\.\d{3}–\d\.\d{3}\]")


@pytest.fixture
def demos(tmp_path, monkeypatch):
    """The app on the bundled demos (their default list) with an empty runs root."""
    monkeypatch.delenv("RAGDASH_DEMO_RUN", raising=False)
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))


def test_the_llm_page_ranks_the_signals_against_the_reference_truth():
    """The panel's model (`RunView.signal_agreement`, read as app_pages/llm.py lays it out: the
    heading once there is a table, "Truth: <truth>." and the best line)."""
    got = RunView(Run(PROJECT_ROOT / DEMO)).signal_agreement()
    assert got is not None and not got[0].empty  # the page draws the panel
    table, truth = got
    assert truth == "reference metric: contains"
    best = signals.best_line(table, lambda name: f"**{name}**")
    assert best is not None and best.startswith("Best here: **token F1 (vs gold answer)"), best
    assert re.search(r"AUC 0\.\d\d \(95 % CI 0\.\d\d–0\.\d\d\)", best), best
    assert "agrees well" in best, best


def _frames(at) -> list:
    return [d.value for d in at.dataframe]


def test_compare_retrievers_shows_every_signal(demos):
    at = open_app("compare", run=DEMO, cmp_n="500", cmp_ret=RETRIEVERS)
    assert any(re.fullmatch(r"Do the signals rank the retrievers the same way\? \(N = 500\)",
                            h.value) for h in at.subheader), [h.value for h in at.subheader]
    line = next(i.value for i in at.info if "Against the truth" in i.value).replace("\\", "")
    assert "Against the truth (contains a gold answer), 6 systems:" in line, line
    verdicts = dict(re.findall(r"^- \*\*(.+?)\*\*: (.*)$", line, re.M))
    assert "Score_IR (5 of the 6 systems)" in verdicts["Same order as the reference (tau 1.00)"]
    assert "LLM judge (2 of 15 pairs reversed, tau 0.71)" in verdicts[
        "Partly the same order (reverses some pairs)"], verdicts
    means = next(f for f in _frames(at) if "system" in f.columns and "questions" in f.columns)
    cells = [str(c).strip() for c in means.to_numpy().ravel()]
    assert "LLM only" in cells and "BM25" in cells, cells[:20]
    assert "–" in cells  # the LLM-only answers have no Score_IR
    assert "0.887 [0.788–0.950]" in cells  # BM25's Score_IR at N = 500 (docs/metrics.md)
    assert sum(bool(CELL.match(c)) for c in cells) >= 20, cells
    # SIM and MLQ tie on all 60 questions: no test, a dash (a null cell read "None")
    pairs = next(f for f in _frames(at) if "Holm p" in f.columns)
    row = pairs[pairs.iloc[:, 0] == "SIM vs MLQ"]
    assert len(row) == 1, pairs.iloc[:, 0].tolist()
    assert row[["Wilcoxon p", "Holm p"]].iloc[0].tolist() == ["—", "—"]
    assert not pairs.isna().any().any() and "None" not in pairs.astype(str).to_numpy()


def test_compare_runs_shows_the_leaderboard_on_every_signal(demos):
    at = open_app("runs", rn_runs=DEMO, rn_n="500")
    assert [h.value for h in at.subheader].count("Leaderboard on every signal") == 1
    line = next(i.value for i in at.info if "Against the truth" in i.value).replace("\\", "")
    assert "tau 1.00" in line, line
