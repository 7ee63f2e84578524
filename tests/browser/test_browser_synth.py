"""The Data page's "Generate questions" panel in a real browser: upload a corpus alone, open the
panel, read the estimate, generate against a scripted OpenAI-compatible server, and see the
acceptance rate, the rejects with their reason and the kept pairs; then make the result the
current dataset. Screenshots go to test-artifacts/screenshots/ (40-*)."""

from __future__ import annotations

import json

import pytest
from fakes.llm_server import FakeLLMServer
from test_browser import (  # noqa: F401 (page and server are fixtures)
    goto,
    no_exception,
    page,
    server,
    settle,
    shot,
)
from test_synth import TEXTS, _json, scripted

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _metric(pg, label: str) -> str:
    return pg.locator('[data-testid="stMetric"]').filter(has_text=label).first.inner_text()


def _pick(pg, label: str, value: str) -> None:
    pg.locator('[data-testid="stSelectbox"]').filter(has_text=label).click()
    pg.keyboard.type(value)
    pg.keyboard.press("Enter")
    settle(pg)


def test_generate_questions_from_a_corpus(server, page, tmp_path):  # noqa: F811 (fixtures)
    corpus = tmp_path / "landmarks.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": k, "title": k, "text": v}) + "\n"
                              for k, v in TEXTS.items()))
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "data")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(1).set_input_files(
        str(corpus))  # a corpus alone, no dataset
    settle(page)
    body = page.inner_text("body")  # the upload is acknowledged, never "Nothing uploaded"
    assert "Nothing uploaded" not in body and "uploaded without a dataset" in body
    page.get_by_text("Generate questions from the corpus").click()
    settle(page)
    no_exception(page, "panel opened")
    calls = _metric(page, "LLM calls (estimate)")
    assert "5" in calls  # 20 asked for by default, but 5 documents of one chunk each
    assert "5 chunks from 5 of 5 documents, at most 1 per document" in page.inner_text("body")
    assert "free" in _metric(page, "Cost")  # the local model, before one is chosen

    with FakeLLMServer(default=scripted(
            louvre=_json("When was the Louvre built?", "1850", "Napoleon built it in 1850."),
            rhine="I cannot help with that.")) as llm:
        _pick(page, "Backend", "openai")
        page.get_by_label("Model (empty: the backend's default)").fill("fake-model")
        page.get_by_label("Base URL (empty: default)").fill(llm.openai_url)
        page.keyboard.press("Enter")
        settle(page)
        assert "price unknown" in page.inner_text("body")  # fake-model is in no price table
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
    assert rejects.count() >= 1
    page.get_by_text("Why pairs were rejected").scroll_into_view_if_needed()
    shot(page, "41-synth-results")
    saved = sorted((server["root"] / "runs" / "_datasets").glob("landmarks-synth-*.jsonl"))
    assert [p.name.endswith(".rejects.jsonl") for p in saved] == [False, True]
    assert len(saved[0].read_text().splitlines()) == 3
    assert len(saved[1].read_text().splitlines()) == 2
    page.get_by_role("button", name="Use these questions as the current dataset").click()
    settle(page)
    no_exception(page, "use the questions")
    assert "Current upload" in page.inner_text("body")
    assert "3" in _metric(page, "Questions loaded")
