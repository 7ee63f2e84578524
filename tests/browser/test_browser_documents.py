"""Documents in the dashboard, in real Chromium: a run over a folder of PDF, HTML, DOCX and
Markdown files (built with the real stages, BM25) opened in the question browser, whose chunk
cards say 'page 2 of handbook.pdf' and the section; and a .zip of those files uploaded on the
Data page, with the bad files listed. On the shared server (tests/browser/conftest.py);
screenshots go to test-artifacts/screenshots/ (40-…)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fixtures.documents import corpus_files, write_corpus, write_questions, write_zip
from helpers import goto, no_exception, settle, shot, upload
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def files():
    return corpus_files()


@pytest.fixture(scope="module")
def doc_run(server, files):
    """A run over the document folder, under the server's runs root; its URL key."""
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    base = server["root"] / "documents"
    corpus = write_corpus(base / "corpus", files)
    cfg = load_config(None, {
        "name": "documents",
        "dataset": {"path": str(write_questions(base / "qa.jsonl")), "corpus": str(corpus)},
        "chunker": {"method": "recursive", "params": {"chunk_size": 70, "chunk_overlap": 0}},
        "retrievers": {"use": ["bm25"]}, "budgets": [20, 40, 60]})
    run = run_stages(cfg, server["root"] / "runs" / "documents")
    return str(run.path.resolve())


def open_question(pg, server, run_key: str, qid: str) -> None:
    pg.set_viewport_size({"width": 1400, "height": 2600})
    goto(pg, server, f"browser?run={quote(run_key)}&qb_q={qid}&qb_ret=bm25&qb_cut=60")
    pg.locator(".rd-chunk").first.wait_for()


def test_pdf_chunks_say_their_page(server, page, doc_run):
    open_question(page, server, doc_run, "q1")
    first = page.locator(".rd-chunk").first
    assert "page 2 of handbook.pdf" in first.locator(".rd-head").inner_text()
    assert first.locator("mark").count() >= 1  # the relevant part is highlighted in it
    assert "Every employee has twenty-five days" in first.locator("mark").first.inner_text()
    no_exception(page, "browser, PDF question")
    shot(page, "40-browser-pdf-page")


def test_html_and_docx_chunks_say_their_section(server, page, doc_run):
    open_question(page, server, doc_run, "q2")
    head = page.locator(".rd-chunk").first.locator(".rd-head").inner_text()
    assert "§ Travel policy › Expenses" in head and "page" not in head
    open_question(page, server, doc_run, "q3")
    head = page.locator(".rd-chunk").first.locator(".rd-head").inner_text()
    assert "§ Laptops" in head
    no_exception(page, "browser, HTML and DOCX questions")
    shot(page, "41-browser-docx-section")


def test_upload_a_zip_of_documents(server, page, files, tmp_path):
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "data")
    assert page.get_by_text(".pdf, .html or .docx files").count() >= 1  # the help says so
    upload(page, write_questions(tmp_path / "qa.jsonl"), write_zip(tmp_path / "handbooks.zip",
                                                                   files))
    documents = page.locator('[data-testid="stMetric"]').filter(has_text="Documents")
    expect(documents.locator('[data-testid="stMetricValue"]')).to_have_text("4")
    skipped = page.locator('[data-testid="stMetric"]').filter(has_text="Records skipped")
    expect(skipped.locator('[data-testid="stMetricValue"]')).to_have_text("4")
    no_exception(page, "data page, zip of documents")
    report = page.locator('[data-testid="stDataFrame"]').first
    report.wait_for()
    shot(page, "42-data-zip-of-documents")
    page.get_by_role("tab", name="Documents").click()
    expect(page.get_by_text("4 documents; text cut at 300 characters here.")).to_have_count(1)
    no_exception(page, "data page, documents preview")
    shot(page, "43-data-documents-preview")
    # one PDF alone is a corpus too
    corpus = page.get_by_test_id("stFileUploader").nth(1)
    corpus.locator('input[type="file"]').set_input_files(str(write_corpus(tmp_path / "one", {
        "handbook.pdf": files["handbook.pdf"]}) / "handbook.pdf"))
    expect(corpus).to_contain_text("handbook.pdf")
    documents = page.locator('[data-testid="stMetric"]').filter(has_text="Documents")
    expect(documents.locator('[data-testid="stMetricValue"]')).to_have_text("1")
    settle(page)
    no_exception(page, "data page, one PDF")
