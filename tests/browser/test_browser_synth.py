"""The Data page's "Generate questions" panel in a real browser: upload a corpus alone, open the
panel, read the estimate, generate against a scripted OpenAI-compatible server, and see the
acceptance rate, the rejects with their reason and the kept pairs; then make the result the
current dataset. On the shared server (tests/browser/conftest.py); screenshots go to
test-artifacts/screenshots/ (40-*)."""

from __future__ import annotations

import json

import pytest
from fakes.llm_server import FakeLLMServer
from fixtures.synth import TEXTS, reply_json, scripted
from helpers import choose, goto, new_files, no_exception, open_until, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _metric(pg, label: str) -> str:
    return pg.locator('[data-testid="stMetric"]').filter(has_text=label).first.inner_text()


def test_generate_questions_from_a_corpus(server, page, tmp_path):
    corpus = tmp_path / "landmarks.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": k, "title": k, "text": v}) + "\n"
                              for k, v in TEXTS.items()))
    datasets = server["root"] / "runs" / "_datasets"
    before = set(datasets.glob("landmarks-synth-*.jsonl"))
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "data")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(1).set_input_files(
        str(corpus))  # a corpus alone, no dataset
    # the upload is acknowledged, never "Nothing uploaded"
    expect(page.get_by_text("uploaded without a dataset", exact=False)).not_to_have_count(0)
    settle(page)
    assert "Nothing uploaded" not in page.inner_text("body")
    open_until(page, "Generate questions from the corpus",
               page.locator('[data-testid="stMetric"]').filter(has_text="LLM calls (estimate)"))
    settle(page)
    no_exception(page, "panel opened")
    calls = _metric(page, "LLM calls (estimate)")
    assert "5" in calls  # 20 asked for by default, but 5 documents of one chunk each
    assert "5 chunks from 5 of 5 documents, at most 1 per document" in page.inner_text("body")
    assert "free" in _metric(page, "Cost")  # the local model, before one is chosen

    with FakeLLMServer(default=scripted(
            louvre=reply_json("When was the Louvre built?", "1850", "Napoleon built it in 1850."),
            rhine="I cannot help with that.")) as llm:
        choose(page, "Backend", "openai", exact=True)
        # a model name of this attempt's own: the shared runs root's reply cache holds the
        # replies of an earlier attempt (a rerun), which would answer without a request
        page.get_by_label("Model (empty: the backend's default)").fill(
            f"fake-model-{tmp_path.name}")
        page.get_by_label("Base URL (empty: default)").fill(llm.openai_url)
        page.keyboard.press("Enter")
        # fake-model is in no price table
        expect(page.get_by_text("price unknown", exact=False)).not_to_have_count(0)
        settle(page)
        shot(page, "40-synth-estimate")
        page.get_by_role("button", name="Generate 5 questions").click()
        page.get_by_text("Acceptance rate").wait_for(timeout=120_000)  # MiniLM loads cold
        settle(page)
        assert len(llm.chat_requests()) == 5
    no_exception(page, "generated")
    assert "60%" in _metric(page, "Acceptance rate")
    assert "3" in _metric(page, "Kept") and "2" in _metric(page, "Rejected")
    body = page.inner_text("body")
    assert "Why pairs were rejected" in body
    rejects = page.locator('[data-testid="stDataFrame"]').filter(has_text="reason")
    expect(rejects).not_to_have_count(0)  # the grid draws its header after the page settles
    page.get_by_text("Why pairs were rejected").scroll_into_view_if_needed()
    shot(page, "41-synth-results")
    saved = new_files(datasets, "landmarks-synth-*.jsonl", before)
    assert [p.name.endswith(".rejects.jsonl") for p in saved] == [False, True]
    assert len(saved[0].read_text().splitlines()) == 3
    assert len(saved[1].read_text().splitlines()) == 2
    page.get_by_role("button", name="Use these questions as the current dataset").click()
    loaded = page.locator('[data-testid="stMetric"]').filter(has_text="Questions loaded")
    expect(loaded.first).to_contain_text("3")
    expect(page.get_by_text("Current upload", exact=False)).not_to_have_count(0)
    settle(page)
    no_exception(page, "use the questions")
