"""Choosing RAGAS and RAGChecker metrics on the LLM page of (a copy of) the bundled SQuAD demo, as
a user would, in one visit: nothing ticked, nothing to run; tick one metric and read its
estimate for the first 20 questions; with the fake LLM server as the checker, two metrics on
one question, the button, the job ends and the signals table gains them; then click an answer
in the signals scatter and land on the question browser at that question. On the shared server
(tests/browser/conftest.py); screenshots 48-metric-choice and 49-signal-scatter. Every metric
ticked against one (the estimate grows) and the scatter's pair of signals are checked without
a browser: tests/test_metrics_choice_demo_model.py."""

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


def test_tick_metrics_run_them_as_a_job_then_open_an_answer_from_the_scatter(server, page):
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
        expect(page.get_by_text("Tick one or more metrics to see what they would cost")) \
            .to_be_visible()
        start = page.get_by_role("button", name="▶ Compute the ticked metrics")
        expect(start).to_be_disabled()  # nothing to run, nothing runs
        line = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=ESTIMATE)
        # one metric, the demo's own (local) checker, the first 20 questions by default
        _tick(page, "faithfulness")
        expect(line).to_contain_text("1 metric → ")
        assert _estimate(page)[1] > 0
        text = line.first.inner_text()
        assert "tokens in" in text and "calls/min" in text, text
        assert "assumed from" in text or "measured on" in text, text
        expect(page.get_by_text("Dry-run estimate for the first 20 questions")).to_be_visible()
        expect(start).to_be_enabled()
        no_exception(page, "metric choice")
        page.get_by_text("RAGAS (Es et al. 2024)").scroll_into_view_if_needed()
        page.mouse.wheel(0, -120)
        shot(page, "48-metric-choice")
        print(f"estimate, one metric, first 20 questions: {text}")

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
        _tick(page, "claim_f1")
        expect(line).to_contain_text("2 metrics → ")
        expect(page.get_by_text("Dry-run estimate for the first question")).to_be_visible()
        assert not (run_dir / "metrics.parquet").exists()  # nothing before the button
        start.click()
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
    expect(line).to_contain_text("2 metrics → 0 LLM calls")
    expect(line).to_contain_text(f"{asked:,} more answered by the reply cache")
    no_exception(page, "estimate after the job")

    # the scatter of two signals (its default pair: Score_IR across, the judge up); a click
    # opens the answer's question
    page.get_by_text("Two signals per answer.").scroll_into_view_if_needed()
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator(".legend")) \
        .filter(has_text="against Score_IR")
    expect(chart).to_be_visible()
    chart.scroll_into_view_if_needed()
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
