"""An approximate dense index in the dashboard, in real Chromium: a run built with the real
stages whose SIM searches an HNSW index; the Retrieval page says how much of exact search's top
10 it finds. On the shared server (tests/browser/conftest.py); screenshot 60-…."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def hnsw_run(server):
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    base = server["root"] / "hnsw"
    base.mkdir(parents=True, exist_ok=True)
    qa = write_jsonl(base / "qa.jsonl", [{"id": q, "question": t, "answer": a,
                                         "relevant_parts": p} for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(base / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x}
                                                 for d, t, x in DOCS])
    cfg = load_config(None, {
        "name": "hnsw", "dataset": {"path": str(qa), "corpus": str(corpus)},
        "chunker": {"method": "recursive", "params": {"chunk_size": 80, "chunk_overlap": 0}},
        "retrievers": {"use": ["bm25", "sim"], "params": {"sim": {"index": "hnsw"}}},
        "tokenizer": "whitespace", "budgets": [10, 20, 40],
        "runs_root": str(server["root"] / "runs")})
    run = run_stages(cfg, server["root"] / "runs" / "hnsw")
    return str(run.path.resolve())


def test_the_retrieval_page_gives_the_recall_of_an_approximate_index(
        server, page, hnsw_run):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, f"retrieval?run={quote(hnsw_run)}")
    no_exception(page, "retrieval, hnsw run")
    caption = page.get_by_test_id("stCaptionContainer").filter(has_text="Approximate dense index")
    assert caption.count() == 1
    assert caption.inner_text().strip() == (
        "Approximate dense index: SIM searches HNSW, which returns 100.0% of exact search's top "
        "10 chunks (recall@10 on this run's 4 questions).")
    shot(page, "60-retrieval-hnsw-recall")


def test_build_page_refuses_mmr_keeping_more_chunks_than_it_fetches(server, page):
    """Retriever parameters are checked as they change: MMR with k above fetch_k is refused
    with both values named and the run cannot start until fetch_k is raised; counts cannot go
    below 1."""
    import re

    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "build")
    rets = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Retrievers")
    rets.click()
    page.get_by_role("option", name="MMR").click()
    page.keyboard.press("Escape")
    expect(page.get_by_text("MMR parameters")).to_have_count(1)
    settle(page)
    page.get_by_text("MMR parameters").click()
    k = page.get_by_label("k", exact=True).last
    k.wait_for(timeout=60_000)
    assert k.get_attribute("min") == "1"  # a count below 1 cannot be typed
    k.fill("30")
    k.press("Enter")
    warning = page.locator('[data-testid="stAlert"]').filter(has_text="The settings are not valid")
    warning.wait_for(timeout=60_000)  # as soon as the value changes, before any click
    assert re.search(r"mmr: fetch_k \(20\) must be at least k \(30\)", warning.inner_text())
    start = page.get_by_role("button", name="Start the run")
    assert start.is_disabled()
    no_exception(page, "build page, mmr k above fetch_k")
    shot(page, "61-build-mmr-k-refused")
    fetch_k = page.get_by_label("fetch_k", exact=True).last
    fetch_k.fill("40")
    fetch_k.press("Enter")
    expect(page.locator('[data-testid="stAlert"]').filter(
        has_text="The settings are not valid")).to_have_count(0, timeout=60_000)
    expect(page.get_by_role("button", name="Start the run")).to_be_enabled(timeout=60_000)
