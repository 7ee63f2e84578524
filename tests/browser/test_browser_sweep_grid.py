"""The Build page's sweep in Chromium: upload a tiny dataset, vary BM25's k over two values, see
the two planned runs, start them, wait, and open them together on Compare runs. On the shared
server (tests/browser/conftest.py). A sweep over a value the config refuses, and the plan's
button, are checked without a browser: tests/test_build_page_checks.py."""

from __future__ import annotations

import json
import re

import pytest
from helpers import choose, goto, name_run, no_exception, pick_no_chunker, settle, shot, upload
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _tiny(tmp_path):
    rows = [{"id": f"t{i}", "question": f"What did person {i} build?", "answer": f"tower {i}",
             "relevant_parts": [f"Person {i} built tower {i} in {1900 + i}."]} for i in range(6)]
    dataset = tmp_path / "grid.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows))
    corpus = tmp_path / "grid_docs.jsonl"
    corpus.write_text("\n".join(json.dumps({
        "doc_id": f"d{i}", "title": f"Doc {i}",
        "text": f"Some intro about place {i}. Person {i} built tower {i} in {1900 + i}. "
                "It still stands."}) for i in range(6)))
    return dataset, corpus


def _values(pg, text: str) -> None:
    box = pg.get_by_label("Values of setting 1 (comma-separated)")
    box.fill(text)
    box.press("Enter")
    settle(pg)
    expect(box).to_have_value(text)


def test_vary_k_plan_start_and_compare(server, page, tmp_path):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "data")
    upload(page, *_tiny(tmp_path))
    page.get_by_text("Build a run from this dataset").click()
    expect(page).to_have_url(re.compile("/build"))
    pick_no_chunker(page)
    name_run(page, "grid")
    page.get_by_text("Vary one or two settings: one run per combination").click()
    choose(page, "Setting 1", "retrievers.params.bm25.k")
    _values(page, "2, 3")
    start = page.get_by_role("button", name="Start the 2 runs")
    expect(start).to_be_enabled()
    no_exception(page, "sweep planned")
    assert page.get_by_text("2 runs", exact=False).count() >= 1
    shot(page, "60-build-sweep-plan")
    start.click()
    page.get_by_text(re.compile(r"Sweep grid (finished|failed)")).wait_for(timeout=240_000)
    settle(page)
    no_exception(page, "sweep finished")
    assert page.get_by_text(re.compile(r"Sweep grid finished")).count() == 1
    shot(page, "61-build-sweep-done")
    root = server["root"] / "runs" / "grid"
    made = sorted(p.name for p in root.iterdir() if (p / "ir_scores.parquet").exists())
    assert len(made) == 2, made
    page.get_by_text("Compare the 2 runs of grid").click()
    expect(page.get_by_role("heading", name="Leaderboard", exact=True)).to_have_count(1)
    expect(page).to_have_url(re.compile(r"/runs\?"))
    settle(page)
    no_exception(page, "compare the sweep")
    assert page.url.count("rn_runs=") == 2
    shot(page, "62-sweep-compared")
