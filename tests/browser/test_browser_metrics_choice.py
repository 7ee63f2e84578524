"""Choosing RAGAS and RAGChecker metrics on the LLM page of the bundled SQuAD demo, as a user
would: tick one metric and read its estimate, tick every metric and see the estimate grow, then
in the signals panel pick two signals for the scatter and click an answer, landing on the
question browser at that question. Nothing is run (no button pressed). On the shared server
(tests/browser/conftest.py); screenshots 48-metric-choice and 49-signal-scatter."""

from __future__ import annotations

import re

import pytest
from helpers import expect_chosen, goto, no_exception, settle, shot
from playwright.sync_api import Page, expect

from ragdash.metrics import CATALOGUE

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ESTIMATE = re.compile(r"(\d+) metrics? → ([\d,]+) LLM calls")


def _estimate(page: Page) -> tuple[int, int]:
    box = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)
    found = ESTIMATE.search(box.first.inner_text())
    assert found, box.first.inner_text()
    return int(found.group(1)), int(found.group(2).replace(",", ""))


def _tick(page: Page, name: str) -> None:
    page.get_by_test_id("stCheckbox").filter(has_text=re.compile(f"^{name}$")) \
        .locator("label").click()


def _pick(page: Page, label: str, option: str) -> None:
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect_chosen(box, option)
    settle(page)


def test_tick_metrics_read_the_estimate_then_open_an_answer_from_the_scatter(server, page):
    page.set_viewport_size({"width": 1400, "height": 1500})
    goto(page, server, "llm?run=data/demo_squad")
    page.get_by_text("Measure the answers with RAGAS and RAGChecker metrics").click()
    expect(page.get_by_text("Tick one or more metrics to see what they would cost")) \
        .to_be_visible()
    start = page.get_by_role("button", name="▶ Compute the ticked metrics")
    expect(start).to_be_disabled()  # nothing to run, nothing runs
    _tick(page, "faithfulness")
    expect(page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)) \
        .to_contain_text("1 metric → ")
    one = _estimate(page)
    for m in CATALOGUE[1:]:
        _tick(page, m.name)
    expect(page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)) \
        .to_contain_text(f"{len(CATALOGUE)} metrics → ")
    every = _estimate(page)
    assert 0 < one[1] < every[1], (one, every)
    text = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE) \
        .first.inner_text()
    assert "tokens in" in text and "calls/min" in text, text
    assert "assumed from" in text or "measured on" in text, text
    expect(page.get_by_text("Dry-run estimate for the first 20 questions")).to_be_visible()
    expect(start).to_be_enabled()
    no_exception(page, "metric choice")
    page.get_by_text("RAGAS (Es et al. 2024)").scroll_into_view_if_needed()
    page.mouse.wheel(0, -120)
    shot(page, "48-metric-choice")
    print(f"estimate, every metric, first 20 questions: {text}")

    # the scatter of two signals: Score_IR across, F1 up; a click opens the answer's question
    heading = page.get_by_text("Two signals per answer.")
    heading.scroll_into_view_if_needed()
    _pick(page, "Signal up (y)", "token F1 (vs gold answer)")
    _pick(page, "Signal across (x)", "Score_IR (retrieval, no LLM)")
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator(".legend")) \
        .filter(has_text="token F1 (vs gold answer) against Score_IR")
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
    no_exception(page, "signal scatter")
    shot(page, "49-signal-scatter")
    point = chart.locator(".scatterlayer .trace").first.locator("path.point").first
    box = point.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x - 20, y - 20)
    page.mouse.move(x, y, steps=5)  # plotly clicks the point it hovers
    expect(chart.locator(".hoverlayer .hovertext")).to_contain_text("click to open")
    page.mouse.click(x, y)
    expect(page).to_have_url(re.compile(r"/browser\?.*qb_q="), timeout=60_000)
    qid = re.search(r"qb_q=([^&]+)", page.url).group(1)
    settle(page)
    expect(page.get_by_role("heading", name="Question browser")).to_be_visible()
    question = page.locator('[data-testid="stSelectbox"]').filter(has_text="Question").last
    expect_chosen(question, qid)
    no_exception(page, "question browser from the scatter")
