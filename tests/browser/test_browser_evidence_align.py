"""The Data page's evidence review for answers written in other words: each aligned part shows
the answer sentence it supports and its scores, the unsupported answer sentences are listed,
and everything is escaped. Screenshot: test-artifacts/screenshots/33-evidence-aligned.png."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import goto, no_exception, settle, shot, upload
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE = '<img src=x onerror="alert(2)">'
DOCS = {
    "lighthouse": "The Harbour Lighthouse was built in 1872 by the engineer Thomas Gray. Its "
                  "lamp burned whale oil until 1901, when it was converted to electricity. The "
                  "tower stands 42 metres tall on a granite cliff.",
    "gray": "Thomas Gray was a Scottish engineer born in Aberdeen in 1831. He designed bridges "
            "and harbours along the east coast.",
    "bakery": "The village bakery opens at six every morning. Its sourdough is baked in a "
              "wood-fired oven.",
}
ANSWER = ("The Harbour Lighthouse was put up in 1872 by Thomas Gray. Gray was a Scottish "
          f"engineer who was born in Aberdeen. Its keeper kept a parrot {HOSTILE}.")


def test_aligned_parts_show_why(server, page, tmp_path):
    qa = tmp_path / "aligned_qa.csv"
    with open(qa, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        w.writerow(["long", "Who built the Harbour Lighthouse?", ANSWER])
    corpus = tmp_path / "aligned_docs.jsonl"
    corpus.write_text("\n".join(json.dumps({"doc_id": k, "title": k.title(), "text": v})
                                for k, v in DOCS.items()))
    page.set_viewport_size({"width": 1400, "height": 2200})
    goto(page, server, "data")
    upload(page, qa, corpus)
    page.get_by_role("button", name="Find evidence").click()
    page.get_by_text("Questions with evidence").wait_for(timeout=240_000)
    settle(page)
    no_exception(page, "evidence found")
    kept = page.locator(".ev-kept")
    expect(kept).to_have_count(2)
    expect(kept.first).to_contain_text("supports the answer sentence")
    expect(kept.first).to_contain_text("cosine with the answer sentence")
    assert "1872" in kept.nth(0).inner_text() + kept.nth(1).inner_text()
    assert "Aberdeen in 1831" in kept.nth(0).inner_text() + kept.nth(1).inner_text()
    expect(page.get_by_text("Answer sentences no corpus sentence supports")).to_have_count(1)
    assert page.get_by_text(HOSTILE, exact=False).count() > 0  # shown as text
    assert page.locator("img[src='x']").count() == 0
    page.get_by_role("heading", name="Find evidence").scroll_into_view_if_needed()
    shot(page, "33-evidence-aligned")
