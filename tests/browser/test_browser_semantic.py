"""Semantic matching in the dashboard, in real Chromium: a run whose relevant parts are
paraphrases of its documents (tests/fixtures/paraphrase.py), built with the real stages (BM25,
whole documents as chunks, `scoring.also: [semantic]`). The question browser shows each part's
closest sentence window underlined with its cosine beside the exact match; the Retrieval page
switches the matching method and overlays both curves. On the shared server
(tests/browser/conftest.py); screenshots go to test-artifacts/screenshots/ (50-…)."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from fixtures.corpus import write_jsonl
from fixtures.paraphrase import ITEMS
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def para_run(server):
    """A run over the paraphrase fixture under the server's runs root; its URL key."""
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    base = server["root"] / "paraphrase"
    base.mkdir(parents=True, exist_ok=True)
    qa = write_jsonl(base / "qa.jsonl", [{
        "id": f"p{i:02d}", "question": f"What about {' '.join(item.context.split()[:4])}?",
        "answer": "see the part", "relevant_parts": [item.paraphrase]}
        for i, item in enumerate(ITEMS)])
    corpus = write_jsonl(base / "corpus.jsonl", [
        {"doc_id": f"d{i:02d}", "title": f"Document {i}", "text": item.context}
        for i, item in enumerate(ITEMS)])
    cfg = load_config(None, {
        "name": "paraphrase", "dataset": {"path": str(qa), "corpus": str(corpus)},
        "chunker": {"method": "none"}, "retrievers": {"use": ["bm25"]},
        "tokenizer": "whitespace", "budgets": [20, 40, 80],
        "scoring": {"also": ["semantic"]}, "runs_root": str(server["root"] / "runs")})
    run = run_stages(cfg, server["root"] / "runs" / "paraphrase")
    return str(run.path.resolve())


def test_the_browser_shows_the_closest_sentence_beside_the_exact_match(
        server, page, para_run):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, f"browser?run={quote(para_run)}&qb_q=p05&qb_ret=bm25&qb_cut=80")
    page.locator(".rd-chunk").first.wait_for()
    settle(page)
    no_exception(page, "browser, semantic matches")
    toggle = page.get_by_test_id("stCheckbox").filter(has_text="Semantic matches")
    assert toggle.locator("input").is_checked()  # on: the run was scored semantically too
    window = page.locator(".rd-sem").first
    assert ITEMS[5].verbatim.split()[0] in window.inner_text()  # the sentence meant
    tag = page.locator(".rd-semtag").first.inner_text()
    cos = float(re.search(r"cos (\d\.\d\d)", tag).group(1))
    assert 0.5 < cos < 1
    text = page.get_by_test_id("stMain").inner_text()
    assert "Semantic Score_IR" in text and f"cosine {cos:.2f}" in text
    shot(page, "50-browser-semantic")
    # switched off: the exact highlights stay, the semantic windows go
    toggle.locator("label").click()
    expect(page).to_have_url(re.compile("qb_sem=false", re.I))
    expect(page.locator(".rd-sem")).to_have_count(0)
    settle(page)
    no_exception(page, "browser, semantic off")
    assert page.locator(".rd-chunk").count() >= 1


def test_the_retrieval_page_switches_and_overlays_the_methods(
        server, page, para_run):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, f"retrieval?run={quote(para_run)}")
    control = page.get_by_test_id("stButtonGroup").filter(has_text="semantic")
    assert control.count() == 1
    assert page.get_by_text("BM25 · semantic").count() >= 1  # the overlaid curve's legend
    control.get_by_text("semantic").click()
    expect(page).to_have_url(re.compile("ret_method=semantic"))
    expect(page.get_by_text("Scored here by semantic matching")).to_have_count(1)
    settle(page)
    no_exception(page, "retrieval, semantic")
    shot(page, "51-retrieval-semantic")
    # without the overlay: one method's curves, with their bands
    page.get_by_test_id("stCheckbox").filter(has_text="Overlay").locator("label").click()
    # the chart redraws after the rerun: wait for the overlaid legend to go
    expect(page.get_by_text("BM25 · semantic")).to_have_count(0)
    settle(page)
    no_exception(page, "retrieval, no overlay")
    assert page.get_by_text("Mean Score_IR by token budget N").count() >= 1
