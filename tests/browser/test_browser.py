"""The dashboard in a real browser (tests/browser/conftest.py: the shared server, pointed at a
synthetic run, and Chromium): visits every page, drags the k slider, opens a question, uploads a
tiny dataset and builds a run from it (BM25, no chunking). Eight sessions at once:
test_browser_sessions.py. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import json
import re
import time

import pytest
from helpers import (
    BUNDLED,
    ROOT,
    SHOTS,
    goto,
    name_run,
    no_exception,
    open_from_sidebar,
    pick_no_chunker,
    settle,
    shot,
    upload,
)
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ("overview", "retrieval", "browser", "compare", "llm", "thresholds", "report", "data",
         "build")


def test_every_page(server, page):
    """Every page, opened from the sidebar as a user does after the first (the overview at
    "/"), draws with no exception; the overview has a path of its own too."""
    headings = {"overview": "Run demo", "llm": "Can the judge be trusted?"}
    goto(page, server, "")  # the default page lives at /
    for i, name in enumerate(PAGES):
        if i:
            open_from_sidebar(page, name)
        if name in headings:
            assert page.get_by_role("heading", name=headings[name]).count() == 1, name
        shot(page, f"{i + 1:02d}-{name}")
    goto(page, server, "overview")  # the default page has a path of its own too
    assert page.get_by_role("heading", name="Run demo").count() == 1


def _slider_thumb(pg, label: str):
    box = pg.locator('[data-testid="stSlider"]').filter(has_text=label)
    return box.locator('input[type="range"]').first.locator("xpath=../..")


@pytest.mark.parametrize("demo", BUNDLED)
def test_bundled_demos_show_what_retrieval_predicts(server, page, demo):
    """Each bundled demo: the headline says how sure the prediction is, and the Thresholds
    page shows the evidence (verdict, ROC, reliability) with no exception."""
    if not (ROOT / demo / "calibration.json").exists():
        pytest.fail(f"{demo} has no calibration.json: rebuild it (see README)")
    name = demo.split("/")[-1]
    goto(page, server, f"?run={demo}")
    assert page.get_by_role("heading", name=f"Run {name}").count() == 1
    assert page.get_by_text("Does retrieval predict answer quality here?").count() >= 1
    assert page.get_by_text(re.compile(r"AUC \d\.\d\d")).count() >= 1
    assert page.get_by_text("Judged 5 (RAG answers)").count() == 1
    shot(page, f"20-{name}-overview")
    if demo == "data/demo_run":  # HotpotQA: the paper's Table 3.1 beside ragdash's, explained
        page.get_by_text("The paper's Table 3.1 beside ragdash's").click()
        cell = page.get_by_role("columnheader", name="paper BM25")
        expect(cell).to_be_visible()
        expect(page.get_by_text("What explains the difference, measured")).to_be_visible()
        cell.scroll_into_view_if_needed()
        shot(page, "22-demo_run-paper-table")
    goto(page, server, f"thresholds?run={demo}")
    assert page.get_by_role("heading", name=re.compile("Does retrieval predict answer "
                                                      "quality here")).count() == 1
    assert page.locator(".js-plotly-plot").count() >= 4
    shot(page, f"21-{name}-thresholds")


def test_drag_k_slider_redraws(server, page):
    goto(page, server, "thresholds")
    caption = page.get_by_text(re.compile(r"Sliders now: h = [0-9.]+, k = [0-9.]+"))
    before = caption.inner_text()
    thumb = _slider_thumb(page, "k (correct above)")
    b = thumb.bounding_box()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2 + 45, b["y"] + b["height"] / 2, steps=8)
    t0 = time.perf_counter()
    page.mouse.up()
    page.wait_for_function(
        "(before) => [...document.querySelectorAll('[data-testid=\"stCaptionContainer\"]')]"
        ".some(e => e.innerText.includes('Sliders now') && !e.innerText.includes(before))",
        arg=before.split("Sliders now:")[1].strip(), timeout=20_000, polling=100)
    redraw = time.perf_counter() - t0
    expect(page).to_have_url(re.compile("thr_k="))  # the view is in the URL
    settle(page)
    after = caption.inner_text()
    assert after != before
    k = float(re.search(r"Sliders now: h = [0-9.]+, k = (\d+\.\d+)", after).group(1))
    assert 0.6 < k < 1
    shot(page, "10-thresholds-k-dragged")
    (SHOTS / "timings.json").write_text(json.dumps({"k_drag_redraw_s": round(redraw, 3),
                                                    "k": k}))
    page.get_by_role("button", name="Back to the fit").click()
    expect(page).not_to_have_url(re.compile("thr_k="))
    expect(caption).to_have_text(before)


def test_open_question_in_browser(server, page):
    goto(page, server, "browser?qb_ret=bm25&qb_ret=mlq&qb_cut=300")
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Question").last
    box.click()
    page.keyboard.type("q005")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile("qb_q=q005"))
    expect(page.get_by_text("MLQ sub-questions")).to_have_count(1)
    expect(page.locator("mark").first).to_be_attached()  # highlighted evidence
    settle(page)
    no_exception(page, "browser q005")
    shot(page, "11-browser-question")
    cut = page.locator(".rd-cut").first
    if cut.count():  # the end of C_N, inside a chunk list
        cut.scroll_into_view_if_needed()
        cut.locator("xpath=ancestor::div[contains(@class,'rd-ctx')]").first.screenshot(
            path=str(SHOTS / "11b-browser-cut-marker.png"))
    # the hostile document is shown as text, never executed or rendered
    goto(page, server, "browser?qb_q=q000&qb_ret=bm25&qb_ret=sim")
    expect(page.get_by_text('<script>alert("xss")</script>', exact=False).first).to_be_attached()
    assert page.locator("img[src='x']").count() == 0
    shot(page, "12-browser-hostile-document")


def test_compare_links_to_browser(server, page):
    goto(page, server, "compare")
    link = page.get_by_text("Open the largest difference")
    link.click()
    expect(page).to_have_url(re.compile(r"/browser\?.*qb_q="))
    expect(page.get_by_role("heading", name="Question browser")).to_have_count(1)
    settle(page)
    no_exception(page, "browser from compare")
    shot(page, "13-browser-from-compare")
    # the link and the page's first run make one history entry: one Back leaves the browser
    page.go_back()
    expect(page).to_have_url(re.compile("/compare"))
    expect(page.get_by_role("heading", name="Compare retrievers")).to_have_count(1)


def test_upload_and_build_a_run(server, page, tmp_path):
    rows = [
        {"id": f"t{i}", "question": f"What did person {i} build?", "answer": f"tower {i}",
         "relevant_parts": [f"Person {i} built tower {i} in {1900 + i}."]}
        for i in range(6)]
    rows.append({"id": "bad", "question": "", "answer": "x", "relevant_parts": ["y"]})
    dataset = tmp_path / "tiny.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows))
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps({
        "doc_id": f"d{i}", "title": f"Doc {i}",
        "text": f"Some intro about place {i}. Person {i} built tower {i} in {1900 + i}. "
                f"It still stands."}) for i in range(6)))
    goto(page, server, "data")
    upload(page, dataset, corpus)
    expect(page.get_by_text("Questions loaded")).to_have_count(1)
    expect(page.get_by_text("Validation report")).to_have_count(1)
    no_exception(page, "data upload")
    shot(page, "14-data-uploaded")

    page.get_by_text("Build a run from this dataset").click()
    expect(page).to_have_url(re.compile("/build"))
    pick_no_chunker(page)
    name_run(page, "browser-built")
    page.get_by_role("button", name="Start the run").click()
    page.get_by_text(re.compile(r"Run browser-built (finished|failed)")).wait_for(
        timeout=240_000)
    settle(page)
    shot(page, "15-build-finished")
    no_exception(page, "build page after the run finished")  # one key per Open button
    assert page.get_by_text("Run browser-built finished").count() == 1, \
        page.locator('[data-testid="stAlert"]').all_inner_texts()
    run_dir = server["root"] / "runs" / "browser-built"
    assert (run_dir / "ir_scores.parquet").exists()
    page.get_by_role("button", name="Open run browser-built").click()
    expect(page.get_by_role("heading", name="Run browser-built")).to_have_count(1)
    settle(page)
    no_exception(page, "overview of the built run")
    shot(page, "16-built-run-overview")
