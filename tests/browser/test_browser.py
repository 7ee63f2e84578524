"""The dashboard in a real browser (tests/browser/conftest.py: the shared server, pointed at a
synthetic run, and Chromium): visits every page, and on the way follows the Compare page's link
into the question browser and back, drags the k slider; opens a question; shows the two bundled
demos. Uploading a dataset, building a run from it and opening it: test_browser_path.py (CSV with
an invalid record) and test_browser_systems.py (JSONL beside a system); eight sessions at once:
test_browser_sessions.py. Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import json
import re
import time

import pytest
from helpers import (
    ROOT,
    SHOTS,
    expect_chosen,
    goto,
    no_exception,
    open_from_sidebar,
    settle,
    shot,
)
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ("overview", "retrieval", "browser", "compare", "llm", "thresholds", "report", "data",
         "build")


def test_every_page(server, page):
    """Every page, opened from the sidebar as a user does after the first (the overview at
    "/"), draws with no exception; the overview has a path of its own too. On the way, as the
    same user goes on: the Compare page's link opens the question browser, and one Back returns
    to Compare; the k slider on Thresholds is dragged and set back to the fit."""
    headings = {"overview": "Run demo", "llm": "Can the judge be trusted?"}
    goto(page, server, "")  # the default page lives at /
    for i, name in enumerate(PAGES):
        if i:
            open_from_sidebar(page, name)
        if name in headings:
            assert page.get_by_role("heading", name=headings[name]).count() == 1, name
        shot(page, f"{PAGES.index(name) + 1:02d}-{name}")
        if name == "compare":
            _compare_links_to_browser(page)
        elif name == "thresholds":
            _drag_k_slider_redraws(page)
    goto(page, server, "overview")  # the default page has a path of its own too
    assert page.get_by_role("heading", name="Run demo").count() == 1


def _compare_links_to_browser(page) -> None:
    """On Compare: its link opens the largest difference in the question browser; the link and
    the browser's first run make one history entry, so one Back returns to Compare."""
    link = page.get_by_text("Open the largest difference")
    link.click()
    expect(page).to_have_url(re.compile(r"/browser\?.*qb_q="))
    expect(page.get_by_role("heading", name="Question browser")).to_have_count(1)
    settle(page)
    no_exception(page, "browser from compare")
    shot(page, "13-browser-from-compare")
    page.go_back()
    expect(page).to_have_url(re.compile("/compare"))
    expect(page.get_by_role("heading", name="Compare retrievers")).to_have_count(1)
    settle(page)
    no_exception(page, "compare after Back")


def _slider_thumb(pg, label: str):
    box = pg.locator('[data-testid="stSlider"]').filter(has_text=label)
    return box.locator('input[type="range"]').first.locator("xpath=../..")


def _drag_k_slider_redraws(page) -> None:
    """On Thresholds: dragging k redraws the page with the new k (in the URL too), within a
    time written to timings.json; "Back to the fit" returns to the fitted k."""
    caption = page.get_by_text(re.compile(r"Sliders now: h = [0-9.]+, k = [0-9.]+"))
    before = caption.inner_text()
    thumb = _slider_thumb(page, "k (correct above)")
    thumb.scroll_into_view_if_needed()
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
    settle(page)


def test_bundled_demos_show_what_retrieval_predicts(server, page):
    """Each bundled demo: the headline says how sure the prediction is, and the Thresholds
    page shows the evidence (verdict, ROC, reliability) with no exception. The first demo by
    its link, then its Thresholds page from the sidebar; the second chosen in the sidebar's
    run picker there, then its Overview from the sidebar (HotpotQA: the paper's Table 3.1
    beside ragdash's, explained)."""
    for demo in ("data/demo_squad", "data/demo_run"):
        if not (ROOT / demo / "calibration.json").exists():
            pytest.fail(f"{demo} has no calibration.json: rebuild it (see README)")
    goto(page, server, "?run=data/demo_squad")
    _demo_overview(page, "demo_squad")
    open_from_sidebar(page, "thresholds")
    _demo_thresholds(page, "demo_squad")
    sliders = page.get_by_text(re.compile(r"Sliders now: h = [0-9.]+, k = [0-9.]+"))
    fitted = sliders.inner_text()  # demo_squad's fit
    picker = page.get_by_test_id("stSidebar").locator('[data-testid="stSelectbox"]').first
    picker.click()
    page.get_by_role("option", name=re.compile(r"^demo_run \(demo\)")).click()
    expect_chosen(picker, "demo_run")
    expect(page).to_have_url(re.compile(r"run=data(/|%2F)demo_run"))
    expect(sliders).not_to_have_text(fitted)  # drawn for demo_run
    settle(page)
    no_exception(page, "thresholds of demo_run")
    _demo_thresholds(page, "demo_run")
    open_from_sidebar(page, "overview")
    _demo_overview(page, "demo_run")
    # HotpotQA: the paper's Table 3.1 beside ragdash's, explained
    page.get_by_text("The paper's Table 3.1 beside ragdash's").click()
    cell = page.get_by_role("columnheader", name="paper BM25")
    expect(cell).to_be_visible()
    expect(page.get_by_text("What explains the difference, measured")).to_be_visible()
    cell.scroll_into_view_if_needed()
    shot(page, "22-demo_run-paper-table")


def _demo_overview(page, name: str) -> None:
    assert page.get_by_role("heading", name=f"Run {name}").count() == 1
    assert page.get_by_text("Does retrieval predict answer quality here?").count() >= 1
    assert page.get_by_text(re.compile(r"AUC \d\.\d\d")).count() >= 1
    assert page.get_by_text("Judged 5 (RAG answers)").count() == 1
    shot(page, f"20-{name}-overview")


def _demo_thresholds(page, name: str) -> None:
    assert page.get_by_role("heading", name=re.compile("Does retrieval predict answer "
                                                      "quality here")).count() == 1
    assert page.locator(".js-plotly-plot").count() >= 4
    shot(page, f"21-{name}-thresholds")


def test_open_question_in_browser(server, page):
    """A link with two retrievers and a cut opens the question browser; a question chosen by
    typing its id shows MLQ's sub-questions and the evidence highlighted; the first question,
    chosen next, shows its hostile document as text, never executed or rendered."""
    goto(page, server, "browser?qb_ret=bm25&qb_ret=mlq&qb_cut=300")
    _choose_question(page, "q005")
    expect(page.get_by_text("MLQ sub-questions")).to_have_count(1)
    expect(page.locator("mark").first).to_be_attached()  # highlighted evidence
    settle(page)
    no_exception(page, "browser q005")
    shot(page, "11-browser-question")
    cut = page.locator(".rd-cut").first
    if cut.count():  # the end of C_N, inside a chunk list
        cut.scroll_into_view_if_needed()
        shot(cut.locator("xpath=ancestor::div[contains(@class,'rd-ctx')]").first,
             "11b-browser-cut-marker")
    # the hostile document (retrieved for q000 by every retriever) is shown as text; q000 is
    # the first question, so the URL drops qb_q: the document's text is what to wait for
    _choose_question(page, "q000")
    expect(page.get_by_text('<script>alert("xss")</script>', exact=False).first).to_be_attached()
    settle(page)
    no_exception(page, "browser q000")
    assert page.locator("img[src='x']").count() == 0
    shot(page, "12-browser-hostile-document")


def _choose_question(page, qid: str) -> None:
    """Type `qid` into the question picker; but for the first question (the default, left out
    of the URL), wait until the URL names it."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Question").last
    box.click()
    page.keyboard.type(qid)
    page.keyboard.press("Enter")
    if qid != "q000":
        expect(page).to_have_url(re.compile(f"qb_q={qid}"))
