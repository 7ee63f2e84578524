"""Documents uploaded in real Chromium: a .zip of PDF, HTML, DOCX and Markdown files (and files
ragdash cannot read) put into the Data page's uploader, with the bad files listed, then one PDF
alone as the corpus. On the shared server (tests/browser/conftest.py); screenshots go to
test-artifacts/screenshots/ (42-…). What the question browser's chunk cards say of a document
run ('page 2 of handbook.pdf', the section) needs no browser:
tests/test_document_chunks_model.py."""

from __future__ import annotations

import pytest
from fixtures.documents import corpus_files, write_corpus, write_questions, write_zip
from helpers import goto, no_exception, settle, shot, upload
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def files():
    return corpus_files()


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
