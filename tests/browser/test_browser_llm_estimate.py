"""The LLM page's estimate in a real browser: before any call, a local model's time is given
(assumed from the bundled demos' calls and said so), a remote model never called has none. On
the shared server (tests/browser/conftest.py); screenshot 46-llm-estimate."""

from __future__ import annotations

import pytest
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_estimate_gives_the_local_model_a_time_before_its_first_call(server, page):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "llm")
    button = page.get_by_role("button", name="Estimate calls, tokens, cost and time")
    if not button.is_visible():  # the launcher is folded on a run that has answers
        page.get_by_text("Generate and judge answers for this run").click()
    expect(button).to_be_visible()
    judge = page.locator('[data-testid="stTextInput"]').filter(has_text="Judge model")
    judge.locator("input").fill("gpt-4o")
    judge.locator("input").press("Enter")
    settle(page)
    button.click()
    generation = page.locator('[data-testid="stMarkdownContainer"]').filter(
        has_text="generation:")
    expect(generation).to_contain_text("calls/min")
    text = generation.inner_text()
    assert "qwen2.5-coder-1.5b-instruct" in text and "time unknown" not in text, text
    assert "assumed from" in text or "measured on" in text, text
    remote = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="judge: gpt-4o")
    expect(remote).to_contain_text("time unknown")
    no_exception(page, "LLM estimate")
    button.scroll_into_view_if_needed()
    shot(page, "46-llm-estimate")


def test_the_build_page_prices_the_llm_stages_before_start(server, page):
    """Issue 33: the Build page gave no estimate before Start. Switching the LLM stages on shows
    calls, time and where the time comes from, for the default generator and judge."""
    page.set_viewport_size({"width": 1400, "height": 3000})
    goto(page, server, "build")
    page.get_by_test_id("stCheckbox").filter(has_text="Generate answers from C_N") \
        .locator("label").click()
    settle(page)
    expect(page.get_by_text("What the LLM stages would cost")).to_be_visible()
    lines = page.get_by_test_id("stMarkdownContainer")
    generation = lines.filter(has_text="generation: qwen2.5-coder-1.5b-instruct")
    expect(generation).to_contain_text("calls/min")
    text = generation.inner_text()
    assert "assumed from" in text or "measured on" in text, text
    expect(lines.filter(has_text="judge: qwen2.5-coder-1.5b-instruct")).to_be_visible()
    no_exception(page, "Build page LLM estimate")
    generation.scroll_into_view_if_needed()
    shot(page, "47-build-llm-estimate")
