"""Semantic matching in the dashboard: a run whose relevant parts are paraphrases of its
documents (tests/fixtures/paraphrase.py), built with the real stages (BM25, whole documents as
chunks, `scoring.also: [semantic]`), once for this module. Without a browser, from the pages'
models: the question browser's cards underline each part's closest sentence window with its
cosine beside the exact match, and the Retrieval page's curves overlay both methods or show
one. In real Chromium, one visit (on the shared server, tests/browser/conftest.py): the
browser's "Semantic matches" toggle goes into the URL and takes the windows away; then, from the
sidebar, the Retrieval page's matching control goes into the URL and the page follows.
Screenshots go to test-artifacts/screenshots/ (50-…)."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from fixtures.corpus import write_jsonl
from fixtures.paraphrase import ITEMS
from helpers import goto, no_exception, open_from_sidebar, settle, shot
from playwright.sync_api import expect

pytestmark = pytest.mark.slow


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


def _cards(run_key: str, windows: bool) -> tuple[str, list]:
    """The question browser's cards for p05 by BM25 at N = 80 (its link's), as the page draws
    them (`cut_context`, `context_html`), with the semantic windows when `windows`."""
    from ragdash.analysis.matching import semantic_matches
    from ragdash.rundir import Run
    from ragdash.ui.evidence import context_html
    from ragdash.view import RunView
    from ragdash.view.context import cut_context, part_matches

    run = Run(run_key)
    cut = cut_context(RunView(run), "p05", "bm25", 80)
    assert cut is not None
    parts = [ITEMS[5].paraphrase]
    sem = semantic_matches(tuple(parts), cut.context, cut.cut) if windows else []
    return context_html(cut.chunks, part_matches(cut, parts), cut.cut, 80,
                        whole=not cut.reached, windows=sem), sem


def test_the_browsers_cards_show_the_closest_sentence_beside_the_exact_match(para_run):
    from ragdash.run_spec import run_spec
    from ragdash.rundir import Run
    from ragdash.ui.evidence import semantic_legend
    from ragdash.view import RunView
    from ragdash.view.browser import cut_score
    from ragdash.view.context import cut_context

    run = Run(para_run)
    assert "semantic" in RunView(run).score_methods()  # the toggle starts on
    cards, sem = _cards(para_run, windows=True)
    window = re.search(r'<span class="rd-sem"[^>]*>(.*?)</span>', cards)
    assert window and ITEMS[5].verbatim.split()[0] in window.group(1)  # the sentence meant
    cos = float(re.search(r'class="rd-semtag"[^>]*>[^<]*cos (\d\.\d\d)', cards).group(1))
    assert 0.5 < cos < 1
    cut = cut_context(RunView(run), "p05", "bm25", 80)
    scored = cut_score([ITEMS[5].paraphrase], cut.context, cut.cut, run_spec(run).scoring.method,
                       sem)
    assert scored.semantic is not None  # the page heads the legend "Semantic Score_IR …"
    assert f"cosine {cos:.2f}" in semantic_legend(sem)
    # switched off: the exact highlights stay, the semantic windows go
    cards, _ = _cards(para_run, windows=False)
    assert "rd-sem" not in cards and cards.count('<div class="rd-chunk') >= 1


def test_the_retrieval_pages_curves_overlay_the_methods_or_show_one(para_run):
    from ragdash.rundir import Run
    from ragdash.view import RunView
    from ragdash.viz.retrieval import method_curves, score_curves

    view = RunView(Run(para_run))
    methods = view.score_methods()
    assert len(methods) > 1 and "semantic" in methods  # the page offers the control
    overlaid = method_curves({m: view.bands(method=m) for m in methods}, ["bm25"])
    assert "BM25 · semantic" in {t.name for t in overlaid.data}  # the overlaid curve's legend
    one = score_curves(view.bands(method="semantic"), ["bm25"])
    assert not [t.name for t in one.data if t.name and "semantic" in t.name]
    assert "Mean Score_IR by token budget N" in one.layout.title.text


@pytest.mark.browser
def test_the_semantic_toggle_and_the_matching_control_follow_the_url(server, page, para_run):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, f"browser?run={quote(para_run)}&qb_q=p05&qb_ret=bm25&qb_cut=80")
    page.locator(".rd-chunk").first.wait_for()
    settle(page)
    toggle = page.get_by_test_id("stCheckbox").filter(has_text="Semantic matches")
    assert toggle.locator("input").is_checked()  # on: the run was scored semantically too
    assert page.locator(".rd-sem").count() >= 1
    shot(page, "50-browser-semantic")
    # switched off: in the URL, and the semantic windows go
    toggle.locator("label").click()
    expect(page).to_have_url(re.compile("qb_sem=false", re.I))
    expect(page.locator(".rd-sem")).to_have_count(0)
    settle(page)
    no_exception(page, "browser, semantic off")
    assert page.locator(".rd-chunk").count() >= 1
    # the Retrieval page of the same run: the matching method in the URL, the page follows
    open_from_sidebar(page, "retrieval")
    control = page.get_by_test_id("stButtonGroup").filter(has_text="semantic")
    assert control.count() == 1
    control.get_by_text("semantic").click()
    expect(page).to_have_url(re.compile("ret_method=semantic"))
    expect(page.get_by_text("Scored here by semantic matching")).to_have_count(1)
    settle(page)
    no_exception(page, "retrieval, semantic")
    shot(page, "51-retrieval-semantic")
