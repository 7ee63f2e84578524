"""Documents in the question browser, without a browser (these were the first two tests of
tests/browser/test_browser_documents.py; the upload of a .zip stays there): a run over a folder
of PDF, HTML, DOCX and Markdown files, built with the real stages (BM25), whose chunk cards, as
the question browser draws them (`view.context.cut_context`, `ui.evidence.context_html`, at its
link's N = 60), say 'page 2 of handbook.pdf' or the section, with the relevant part
highlighted."""

from __future__ import annotations

import html
import re

import pytest
from fixtures.documents import corpus_files, write_corpus, write_questions

from ragdash.rundir import Run
from ragdash.ui.evidence import context_html
from ragdash.view import RunView
from ragdash.view.context import cut_context, part_matches

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def doc_run(tmp_path_factory) -> Run:
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    base = tmp_path_factory.mktemp("documents")
    corpus = write_corpus(base / "corpus", corpus_files())
    cfg = load_config(None, {
        "name": "documents",
        "dataset": {"path": str(write_questions(base / "qa.jsonl")), "corpus": str(corpus)},
        "chunker": {"method": "recursive", "params": {"chunk_size": 70, "chunk_overlap": 0}},
        "retrievers": {"use": ["bm25"]}, "budgets": [20, 40, 60],
        "runs_root": str(base / "runs")})
    return run_stages(cfg, base / "runs" / "documents")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def first_card(run: Run, qid: str) -> tuple[str, str]:
    """The first chunk card of BM25's context for `qid` at N = 60: its head's text and its
    body's HTML."""
    view = RunView(run)
    cut = cut_context(view, qid, "bm25", 60)
    assert cut is not None
    parts = [str(p) for p in
             run.read("examples").assign(qid=lambda e: e["qid"].astype(str))
             .set_index("qid").loc[qid, "parts"]]
    page = context_html(cut.chunks, part_matches(cut, parts), cut.cut, 60)
    card = page.split('<div class="rd-chunk', 2)[1]
    head = re.search(r'<div class="rd-head">(.*?)</div>', card).group(1)
    return _text(head), card


def test_pdf_chunks_say_their_page(doc_run):
    head, card = first_card(doc_run, "q1")
    assert "page 2 of handbook.pdf" in head, head
    marks = re.findall(r"<mark[^>]*>(.*?)</mark>", card)
    assert marks  # the relevant part is highlighted in it
    assert "Every employee has twenty-five days" in _text(marks[0]), marks


def test_the_question_browser_draws_the_pdf_question(doc_run, monkeypatch):
    """The page itself, as its link opens it (one AppTest render, no exception): the card's
    head as above."""
    from fixtures.apptest import open_app

    from ragdash.ui.state import run_key

    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(doc_run.path.parent))
    at = open_app("browser", run=run_key(doc_run.path), qb_q="q1", qb_ret="bm25", qb_cut="60")
    cards = [h.proto.body for h in at.get("html") if '<div class="rd-chunk' in h.proto.body]
    assert len(cards) == 1 and "page 2 of handbook.pdf" in cards[0]


def test_html_and_docx_chunks_say_their_section(doc_run):
    head, _ = first_card(doc_run, "q2")
    assert "§ Travel policy › Expenses" in head and "page" not in head, head
    head, _ = first_card(doc_run, "q3")
    assert "§ Laptops" in head, head
