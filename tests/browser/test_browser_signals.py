"""The LLM page's "Which signal agrees with the truth here?" panel in a real browser, on the
bundled SQuAD demo (its labels are stand-ins, so the truth is the reference metric `contains`):
the best signal with its AUC and interval, no exception. On the shared server
(tests/browser/conftest.py); screenshot 47-llm-signals."""

from __future__ import annotations

import re

import pytest
from helpers import goto, no_exception, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_panel_ranks_the_signals_against_the_reference_truth(server, page):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "llm?run=data/demo_squad")
    heading = page.get_by_role("heading", name="Which signal agrees with the truth here?")
    expect(heading).to_be_visible(timeout=60_000)
    heading.scroll_into_view_if_needed()
    expect(page.get_by_text("Truth: reference metric: contains")).to_be_visible()
    best = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="Best here:")
    expect(best).to_contain_text("token F1 (vs gold answer)")
    text = best.inner_text()
    assert re.search(r"AUC 0\.\d\d \(95 % CI 0\.\d\d–0\.\d\d\)", text), text
    assert "agrees well" in text, text
    no_exception(page, "signals panel")
    shot(page, "47-llm-signals")
