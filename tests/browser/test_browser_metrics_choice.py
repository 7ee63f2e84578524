"""Choosing RAGAS and RAGChecker metrics on the LLM page of the bundled SQuAD demo, as a user
would: tick one metric and read its estimate, tick every metric and see the estimate grow, then
in the signals panel pick two signals for the scatter and click an answer, landing on the
question browser at that question; then, on a copy of the demo and with the fake LLM server,
press the button for two metrics on one question and see the job end. On the shared server
(tests/browser/conftest.py); screenshots 48-metric-choice and 49-signal-scatter."""

from __future__ import annotations

import json
import re
import shutil
from urllib.parse import quote

import pytest
from fakes.llm_server import FakeLLMServer
from fixtures.metric_replies import scripted
from helpers import ROOT, expect_chosen, goto, no_exception, settle, shot
from playwright.sync_api import Page, expect

from ragdash.metrics import CATALOGUE
from ragdash.rundir import Run

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


def test_the_button_runs_the_ticked_metrics_as_a_job_on_one_question(server, page):
    """On a copy of the SQuAD demo (the bundled one stays as it is), with the fake LLM server:
    one question, two metrics, the button; the job ends and the signals table gains them."""
    run_dir = server["root"] / "runs" / "metrics-choice-squad"
    shutil.copytree(ROOT / "data" / "demo_squad", run_dir)
    manifest = json.loads((run_dir / "run.json").read_text())  # the reply cache of this test's
    manifest["config"]["runs_root"] = str(server["root"] / "runs")  # runs root, not the repo's
    (run_dir / "run.json").write_text(json.dumps(manifest))
    page.set_viewport_size({"width": 1400, "height": 1500})
    with FakeLLMServer(default=scripted) as llm:
        goto(page, server, f"llm?run={quote(str(run_dir.resolve()))}")
        page.get_by_text("Measure the answers with RAGAS and RAGChecker metrics").click()
        panel = page.get_by_test_id("stExpander").filter(
            has_text="Measure the answers with RAGAS and RAGChecker metrics")
        limit = panel.get_by_test_id("stNumberInput").locator("input")
        limit.fill("1")
        limit.press("Enter")
        settle(page)
        _pick(page, "Checker backend", "openai")
        for label, value in (("Checker model", "fake-model"), ("Server URL (optional)",
                                                                llm.openai_url)):
            box = panel.get_by_test_id("stTextInput").filter(has_text=label)
            box.locator("input").fill(value)
            box.locator("input").press("Enter")
            settle(page)
        key = panel.get_by_test_id("stTextInput").filter(has_text="OpenAI API key") \
            .locator("input")
        key.fill("sk-test")
        key.press("Enter")
        settle(page)
        _tick(page, "faithfulness")
        _tick(page, "claim_f1")
        expect(page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)) \
            .to_contain_text("2 metrics → ")
        expect(page.get_by_text("Dry-run estimate for the first question")).to_be_visible()
        assert not (run_dir / "metrics.parquet").exists()  # nothing before the button
        page.get_by_role("button", name="▶ Compute the ticked metrics").click()
        expect(page.get_by_text(re.compile(r"Run metrics-choice-squad finished in"))) \
            .to_be_visible(timeout=240_000)
        no_exception(page, "metrics job")
        asked = len(llm.chat_requests())
        assert asked, "the job asked the fake server nothing"
    table = Run(run_dir).read("metrics")
    assert table["qid"].nunique() == 1 and len(table) == 6  # one question, six systems
    assert table["error"].isna().all(), table["error"].tolist()
    assert list(table.columns[4:6]) == ["faithfulness", "claim_f1"]
    settle(page)
    signals = page.locator('[data-testid="stDataFrame"]').filter(has_text="LLM calls")
    expect(signals).to_contain_text("claim_f1")
    # asked again, the estimate is what a re-run sends: nothing, the cache answers every call
    line = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)
    expect(line).to_contain_text("2 metrics → 0 LLM calls")
    expect(line).to_contain_text(f"{asked:,} more answered by the reply cache")
    no_exception(page, "estimate after the job")
