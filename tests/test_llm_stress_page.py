"""Issue 35 §1–2 on the LLM results page, without a browser (it was
tests/browser/test_browser_stress.py): a run whose stress stage and eRAG have run shows the
controlled contexts' sentences and three charts, eRAG's table with its LLM cost, and the stress
launcher's estimate, the dry run's, without an LLM call. The sentences, charts and cost from
the page's models; the page itself in one AppTest render."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.stress import stress_table

from ragdash.analysis.signals import cost_text
from ragdash.config import RunSpec, deep_merge, saved_config
from ragdash.erag.measures import MEASURES
from ragdash.planning import stage_estimate
from ragdash.rundir import Run
from ragdash.view import RunView
from ragdash.view.stress import stress
from ragdash.viz import stress as stress_viz

pytestmark = pytest.mark.slow

HEADING = "Does the evidence cause good answers? (controlled contexts)"


@pytest.fixture(scope="module")
def stressed(tmp_path_factory) -> Run:
    """A synthetic run with a stress table and eRAG's tables."""
    path = make_run(tmp_path_factory.mktemp("stress") / "runs" / "stressed", n_questions=20,
                    seed=11, retrievers=("bm25", "sim"))
    run = Run(path)
    qids = run.read("examples")["qid"].astype(str).tolist()
    run.write("stress", stress_table(qids))
    rng = np.random.default_rng(0)
    per = pd.DataFrame([{"qid": q, "system": s, "k": 5, "judged": 5, "errors": 0,
                         "metric": "contains", **{m: float(rng.random()) for m in MEASURES}}
                        for q in qids for s in ("bm25", "sim")])
    run.write("erag", per)
    run.write("erag_labels", pd.DataFrame([{
        "qid": q, "system": "bm25", "rank": r, "chunk_id": f"c{r}", "answer": "x", "label": 0.0,
        "error": None, "model": "m", "tokens_in": 200, "tokens_out": 10, "latency_s": 1.0,
        "cached": False} for q in qids for r in range(2)]))
    return run


def _spec(run: Run, limit: int) -> RunSpec:
    """The spec the launcher prices: the run's saved config with the stress test on."""
    base = {k: v for k, v in saved_config(run.manifest).items() if not k.startswith("_")}
    return RunSpec.from_config(deep_merge(base, {"stress": {"enabled": True, "limit": limit}}))


def test_the_models_give_the_sentences_the_charts_and_erags_cost(stressed):
    view = RunView(stressed)
    page = stress(view)
    assert page is not None  # the section is drawn
    said = " ".join(page.sentences)
    assert "Accuracy falls from 100%" in said and "it mostly declines, as it should." in said
    s = page.summary
    assert len(s.by_position)  # the position chart is drawn
    titles = [fig.layout.title.text for fig in (
        stress_viz.noise_curve(s.by_ratio),
        stress_viz.position_bars(s.by_position, page.position_ratio),
        stress_viz.dose_response(s.curve, page.observed, page.h, page.k))]
    for title, want in zip(titles, ("Accuracy as noise replaces evidence",
                                    "Where the evidence stands",
                                    "Does more evidence cause correct answers?"), strict=True):
        assert want in title, titles
    assert view.erag() is not None  # eRAG's section is drawn
    assert cost_text(*view.erag_cost()) == "40 calls, 8,400 tokens"


def test_the_page_shows_both_sections_and_the_launchers_estimate(stressed, monkeypatch):
    from ragdash.ui.state import run_key

    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(stressed.path.parent))
    at = open_app("llm", run=run_key(stressed.path))
    heads = [h.value for h in at.subheader]
    assert HEADING in heads and "Retrieval judged by the generator (eRAG)" in heads, heads
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "")
    assert "Accuracy falls from 100%" in shown and "it mostly declines, as it should." in shown
    assert any("40 calls, 8,400 tokens; Score_IR's: none" in c.value.replace("\\", "")
               for c in at.caption)
    planned = stage_estimate(stressed, _spec(stressed, 10), "stress")[0].calls
    assert planned > 0
    assert f"**{planned:,} LLM calls**" in shown  # the dry run's, 10 questions
    assert at.number_input(key="stress_limit").value == 10
    assert not at.button(key="stress_start").disabled
