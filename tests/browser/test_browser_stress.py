"""Issue 35 §1–2 on the LLM results page in Chromium: a run whose stress stage and eRAG have run
shows the controlled contexts' sentences and three charts, eRAG's table with its LLM cost, and
the two launchers open on their estimates without an LLM call. On the shared server
(tests/browser/conftest.py); screenshots 60-llm-stress and 61-llm-stress-launcher."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pandas as pd
import pytest
from fixtures.make_run import make_run
from fixtures.stress import stress_table
from helpers import goto, no_exception, shot
from playwright.sync_api import expect

from ragdash.config import RunSpec, deep_merge, saved_config
from ragdash.erag.measures import MEASURES
from ragdash.planning import stage_estimate
from ragdash.rundir import Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def stressed(server):
    """A synthetic run with a stress table and eRAG's tables; its URL key."""
    path = make_run(server["root"] / "runs" / "stressed", n_questions=20, seed=11,
                    retrievers=("bm25", "sim"))
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
    return quote(str(path.resolve()))


def _spec(run: Run, limit: int) -> RunSpec:
    """The spec the launcher prices: the run's saved config with the stress test on."""
    base = {k: v for k, v in saved_config(run.manifest).items() if not k.startswith("_")}
    return RunSpec.from_config(deep_merge(base, {"stress": {"enabled": True, "limit": limit}}))


def test_the_llm_page_shows_the_controlled_contexts_and_erag(server, page, stressed):
    page.set_viewport_size({"width": 1400, "height": 3000})
    goto(page, server, f"llm?run={stressed}")
    heading = page.get_by_role("heading",
                               name="Does the evidence cause good answers? (controlled contexts)")
    expect(heading).to_be_visible()
    heading.scroll_into_view_if_needed()
    expect(page.get_by_text("Accuracy falls from 100%")).to_be_visible()
    expect(page.get_by_text("it mostly declines, as it should.")).to_be_visible()
    for title in ("Accuracy as noise replaces evidence", "Where the evidence stands",
                  "Does more evidence cause correct answers?"):
        expect(page.locator(".js-plotly-plot").filter(has_text=title)).to_have_count(1)
    erag = page.get_by_role("heading", name="Retrieval judged by the generator (eRAG)")
    expect(erag).to_be_visible()
    expect(page.get_by_text("40 calls, 8,400 tokens; Score_IR's: none")).to_be_visible()
    no_exception(page, "llm page with stress and eRAG")
    heading.scroll_into_view_if_needed()
    shot(page, "60-llm-stress")

    launcher = page.get_by_test_id("stExpander").filter(
        has_text="Test the generator on controlled contexts")
    launcher.get_by_text("Test the generator on controlled contexts").click()
    estimate = launcher.locator('[data-testid="stMarkdownContainer"]').filter(
        has_text="LLM calls").filter(has_text="tokens in")
    expect(estimate).to_be_visible()
    run = Run(server["root"] / "runs" / "stressed")
    planned = stage_estimate(run, _spec(run, 10), "stress")[0].calls
    expect(estimate).to_contain_text(f"{planned:,} LLM calls")  # the dry run's, 10 questions
    assert launcher.get_by_role("button", name="▶ Start").is_enabled()
    no_exception(page, "stress launcher")
    shot(page, "61-llm-stress-launcher")
