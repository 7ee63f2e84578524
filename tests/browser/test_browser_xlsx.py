"""An Excel workbook on the Data page in a real browser: upload an .xlsx with two sheets and a
corpus, pick the sheet, map the columns (one is guessed from its name, one chosen), find
evidence, reload mid-review (the upload, its sheet, its column mapping and the review come
back, with nothing chosen again), and build a run from the workbook on the Build page (ingest
finds the evidence again). On the shared server (tests/browser/conftest.py); screenshots go to
test-artifacts/screenshots/ (40-*)."""

from __future__ import annotations

import json
import re

import openpyxl
import pytest
from fixtures.corpus import DOCS, QUESTIONS
from helpers import (
    choose,
    expect_chosen,
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

HOSTILE = '<b onmouseover="alert(1)">Anliegen</b>'  # a header is shown as text, never HTML


def _files(tmp_path):
    wb = openpyxl.Workbook()
    notes = wb.active
    notes.title = "Hinweise"
    notes.append(["Stand", "Autor"])
    notes.append(["2024", "Support"])
    sheet = wb.create_sheet("Fragen")
    sheet.append([HOSTILE, "Antwort", "Thema"])
    for _, question, answer, _ in QUESTIONS:
        sheet.append([question, answer, "computing"])
    qa = tmp_path / "support.xlsx"
    wb.save(qa)
    corpus = tmp_path / "pioneers.jsonl"
    corpus.write_text("\n".join(json.dumps({"doc_id": d, "title": t, "text": x})
                                for d, t, x in DOCS), encoding="utf-8")
    return qa, corpus


def test_workbook_sheet_mapping_evidence_reload_and_build(server, page, tmp_path):
    """One workbook upload and one "Find evidence" job: the page asks for the sheet, guesses
    the answer column and asks for the question column (a hostile header shown as text), loads
    the mapped sheet and finds its evidence; a reload mid-review asks nothing again (the URL
    names the upload: its sheet, mapping and review come back); the Build page then builds a
    run from the workbook's sheet and mapping, and ingest finds the evidence again."""
    qa, corpus = _files(tmp_path)
    page.set_viewport_size({"width": 1400, "height": 2200})
    goto(page, server, "data")
    upload(page, qa, corpus)
    # two sheets hold data: the page asks which, and loads nothing before
    expect(page.get_by_text("choose the one with the questions")).to_have_count(1)
    expect(page.get_by_text("Questions loaded")).to_have_count(0)
    no_exception(page, "workbook uploaded")
    shot(page, "40-xlsx-sheet-question")
    choose(page, "Sheet", "Fragen", exact=True)
    # the answer column is guessed from its name, the question column is asked for
    mapping = page.locator(".st-key-data_mapping")
    expect(mapping).to_contain_text("Which column holds what?")
    expect_chosen(page.locator('[data-testid="stSelectbox"]').filter(has_text="Answer column"),
                  "Antwort")
    expect(page.get_by_text("Choose the question and the answer columns")).to_have_count(1)
    assert page.locator("b[onmouseover]").count() == 0  # the header is not drawn as HTML
    no_exception(page, "mapping asked")
    shot(page, "41-xlsx-mapping-asked")
    choose(page, "Question column", HOSTILE, exact=True)
    expect(page.get_by_text("Questions loaded")).to_have_count(1)
    loaded = page.locator('[data-testid="stMetric"]').filter(has_text="Questions loaded")
    expect(loaded).to_contain_text("4")
    expect(mapping).to_contain_text("--columns 'question=")
    no_exception(page, "mapped workbook loaded")
    mapping.scroll_into_view_if_needed()
    shot(page, "42-xlsx-mapped")

    expect(page.get_by_text("This dataset has no relevant parts")).to_have_count(1)
    page.get_by_role("button", name="Find evidence").click()
    page.get_by_text("Questions with evidence").wait_for(timeout=180_000)
    settle(page)
    no_exception(page, "evidence found")
    found = page.locator('[data-testid="stMetric"]').filter(has_text="Questions with evidence")
    assert "4" in found.inner_text(), found.inner_text()
    shot(page, "43-xlsx-evidence")

    assert "upload=" in page.url  # the URL names the current upload
    page.reload()
    page.get_by_text("Questions with evidence").wait_for(timeout=120_000)
    settle(page)
    no_exception(page, "reloaded mid-review")
    # nothing asked again: the sheet, the mapping and the review are back
    expect(page.get_by_text("choose the one with the questions")).to_have_count(0)
    expect(page.get_by_text("Choose the question and the answer columns")).to_have_count(0)
    expect_chosen(page.locator('[data-testid="stSelectbox"]').filter(has_text="Sheet"),
                  "Fragen")
    expect_chosen(page.locator('[data-testid="stSelectbox"]').filter(
        has_text="Question column"), HOSTILE)
    expect(loaded).to_contain_text("4")
    assert "4" in found.inner_text(), found.inner_text()
    expect(page.get_by_text("Current upload: support.xlsx", exact=False)).to_have_count(1)
    shot(page, "45-xlsx-reloaded")

    page.get_by_text("Build a run from this dataset").click()
    expect(page).to_have_url(re.compile("/build"))
    settle(page)
    expect(page.get_by_text("4 valid questions in support.xlsx", exact=False)
           ).to_have_count(1)
    pick_no_chunker(page)
    name_run(page, "xlsx-built")
    no_exception(page, "build page with the workbook")
    page.get_by_role("button", name="Start the run").click()
    wait_built(page, "xlsx-built")
    shot(page, "44-xlsx-build-finished")
    run = Run(server["root"] / "runs" / "xlsx-built")
    assert run.manifest["source"]["sheet"] == "Fragen"
    examples = run.read("examples")
    assert examples["qid"].tolist() == ["row-2", "row-3", "row-4", "row-5"]
    assert examples["question"].tolist() == [q for _, q, _, _ in QUESTIONS]
    assert [list(p) for p in examples["parts"]][0] == QUESTIONS[0][3]  # found at ingest
    assert run.read("ir_scores")["score"].max() > 0
