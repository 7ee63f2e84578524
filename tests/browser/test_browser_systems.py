"""Your own RAG system in a real browser: on the Data page, upload a dataset and its corpus, then
a system's results (a Phoenix spans export) under a name; the Build page lists the system beside
the built-in retrievers; build; build it again alone (the retrievers taken out); the system is on
Compare retrievers (with "N of M questions") and the Overview, with no exception box. On the
shared server (tests/browser/conftest.py); screenshots in test-artifacts/screenshots/ (90-*)."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from fixtures import systems as sy
from fixtures.corpus import DOCS, QUESTIONS
from helpers import (
    goto,
    name_run,
    no_exception,
    pick_no_chunker,
    settle,
    shot,
    upload,
    wait_built,
)
from playwright.sync_api import expect

from ragdash.rundir import Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _files(tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps({"id": q, "question": t, "answer": a, "relevant_parts": p})
                          + "\n" for q, t, a, p in QUESTIONS), encoding="utf-8")
    corpus = tmp_path / "pioneers.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": d, "title": t, "text": x}) + "\n"
                              for d, t, x in DOCS), encoding="utf-8")
    return qa, corpus, sy.spans_parquet(tmp_path / "phoenix-spans.parquet")


def test_upload_a_system_build_and_compare_it(server, page, tmp_path):
    qa, corpus, spans = _files(tmp_path)
    page.set_viewport_size({"width": 1400, "height": 2400})
    goto(page, server, "data")
    upload(page, qa, corpus)
    expect(page.get_by_text("Results of your own system (optional)")).to_have_count(1)
    # a name with markup is refused and drawn as text
    box = page.get_by_test_id("stTextInputField").and_(page.get_by_label("System name"))
    box.fill("<b>prod</b>")
    box.press("Enter")
    settle(page)
    system_file = page.locator("[class*='st-key-sys_file_']").locator('input[type="file"]')
    system_file.set_input_files(str(spans))
    expect(page.get_by_text("Name the system first", exact=False)).to_have_count(1)
    assert page.locator("b", has_text="prod").count() == 0  # not drawn as HTML
    box.fill("prod")
    box.press("Enter")
    settle(page)
    expect(page.get_by_text("phoenix-spans.parquet: spans, 3 records", exact=False)
           ).to_have_count(1, timeout=60_000)
    expect(page.get_by_text("matches 3 of the 4 questions loaded", exact=False)).to_have_count(1)
    no_exception(page, "system uploaded")
    shot(page, "90-systems-data-page")

    page.get_by_text("Build a run from this dataset").click()
    expect(page).to_have_url(re.compile("/build"))
    settle(page)
    chosen = page.locator(".st-key-build_systems")
    expect(chosen).to_contain_text("prod")  # beside the built-in retrievers, chosen
    pick_no_chunker(page)
    name_run(page, "systems-built")
    no_exception(page, "build page with a system")
    shot(page, "91-systems-build-page")
    page.get_by_role("button", name="Start the run").click()
    wait_built(page, "systems-built")
    path = server["root"] / "runs" / "systems-built"
    run = Run(path)
    assert set(run.read("ir_scores")["retriever"]) == {"bm25", "prod"}
    assert run.manifest["systems"]["prod"]["matched"] == 3
    # the system alone: the built-in retrievers taken out, the run starts all the same
    rets = page.locator(".st-key-build_rets")
    rets.get_by_role("button", name=re.compile("Clear all", re.I)).or_(
        rets.get_by_title(re.compile("Clear all", re.I))).first.click()
    expect(rets.get_by_text("BM25")).to_have_count(0)
    settle(page)
    expect(page.get_by_text("Pick at least one retriever")).to_have_count(0)  # prod is chosen
    name_run(page, "system-alone")
    page.get_by_role("button", name="Start the run").click()
    wait_built(page, "system-alone")
    alone = Run(server["root"] / "runs" / "system-alone")
    assert set(alone.read("ir_scores")["retriever"]) == {"prod"}
    assert alone.manifest["config"]["retrievers"]["use"] == []

    from ragdash.ui.state import run_key

    goto(page, server, f"compare?run={quote(run_key(path))}")
    expect(page.get_by_text("prod vs BM25", exact=False).or_(
        page.get_by_text("BM25 vs prod", exact=False)).first).to_be_visible()
    expect(page.get_by_text("prod: 3 of 4 questions", exact=False)).to_have_count(1)
    no_exception(page, "compare retrievers with the system")
    shot(page, "92-systems-compare")
    goto(page, server, f"?run={quote(run_key(path))}")
    expect(page.get_by_text("Your own systems", exact=False)).to_have_count(1)
    expect(page.get_by_text("scored on 3 of 4 questions", exact=False)).to_have_count(1)
    no_exception(page, "overview with the system")
    shot(page, "93-systems-overview")
