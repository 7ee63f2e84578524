"""Corpora of PDF, HTML, DOCX and Markdown files: text and layout (pages, headings), chunks that
know their page and section, and located issues for encrypted, scanned, corrupt and unknown
files. Every file is written by the test itself (tests/fixtures/documents.py)."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest
from fixtures.documents import (
    HANDBOOK_PAGES,
    QUESTIONS,
    corpus_files,
    encrypt_pdf,
    make_pdf,
    write_corpus,
    write_questions,
    write_zip,
)

from ragdash.chunking import chunk_documents
from ragdash.data import DataError, layout, load_corpus, load_dataset, readers, textfiles
from ragdash.data.layout import Heading, Layout, TextBuilder, from_columns, page_at, to_columns
from ragdash.data.readers import read_document
from ragdash.data.readers.plain import markdown_headings

READABLE = ["handbook.pdf", "it.docx", "notes.md", "web/travel.html"]


@pytest.fixture(scope="module")
def files():
    return corpus_files()


@pytest.fixture
def folder(tmp_path, files):
    return write_corpus(tmp_path / "corpus", files)


def by_id(docs):
    return {d.doc_id: d for d in docs}


# --- reading each format ----------------------------------------------------------------------

def test_every_readable_file_becomes_a_document_with_its_layout(folder):
    docs, _ = load_corpus(folder)
    assert sorted(d.doc_id for d in docs) == READABLE
    d = by_id(docs)
    pdf = d["handbook.pdf"]
    assert pdf.title == "handbook" and pdf.headings == ()
    assert pdf.pages[0] == 0 and len(pdf.pages) == 2
    assert pdf.text[pdf.pages[1]:].startswith("Holidays\nEvery employee")  # page 2 starts there
    assert "Welcome to the company." in pdf.text[:pdf.pages[1]]

    html = d["web/travel.html"]
    for boilerplate in ("About us", "Careers", "Main menu", "Copyright", "Privacy policy"):
        assert boilerplate not in html.text  # navigation, menu and footer removed
    assert "Travel expenses are refunded within thirty days" in html.text
    assert [(h.level, h.text) for h in html.headings] == [
        (1, "Travel policy"), (2, "Expenses"), (3, "Meals"), (2, "Booking")]
    for h in html.headings:  # each heading's offset is where its text is
        assert html.text[h.start:h.start + len(h.text)] == h.text

    word = d["it.docx"]
    assert [(h.level, h.text) for h in word.headings] == [
        (1, "IT equipment"), (1, "Laptops"), (2, "Phones")]  # Title, Heading 1, Heading 2
    assert "Laptops are replaced every four years by the IT desk." in word.text
    assert "Laptop | 1200 euros" in word.text  # the table, row by row

    md = d["notes.md"]
    assert md.text.startswith("# Office notes")  # Markdown text is kept verbatim
    assert [(h.level, h.text) for h in md.headings] == [(1, "Office notes"), (2, "Parking")]


def test_bad_and_unknown_files_are_located_issues_and_counted(folder):
    docs, issues = load_corpus(folder)
    errors = {i.record: i.message for i in issues if i.severity == "error"}
    assert set(errors) == {"file locked.pdf", "file scan.pdf", "file broken.pdf",
                           "file broken.docx"}
    assert "encrypted PDF (it needs a password)" in errors["file locked.pdf"]
    assert "no text layer" in errors["file scan.pdf"] and "OCR" in errors["file scan.pdf"]
    assert "is not a readable PDF file (PdfStreamError" in errors["file broken.pdf"]
    assert errors["file broken.docx"] == ("is not a readable Word file (BadZipFile: File is not "
                                          "a zip file); skipped")
    assert all(i.file == str(folder) and i.field in ("(file)", "(files)") for i in issues)
    summary = issues[0]  # first: the counts
    assert summary.severity == "warning" and summary.record == "-"
    assert summary.message.startswith(
        "4 of 8 file(s) read into documents; 4 skipped (2 corrupt files, 1 PDF without a text "
        "layer, 1 encrypted PDF)")
    assert "2 file(s) of a type ragdash cannot read ignored: budget.xlsx, logo.png" in \
        summary.message
    assert len(docs) == 4  # nothing readable was lost to the bad files


def test_a_zip_reads_like_the_folder(tmp_path, files, folder):
    path = write_zip(tmp_path / "corpus.zip", files)
    docs, issues = load_corpus(path)
    fdocs, fissues = load_corpus(folder)
    assert sorted(docs, key=lambda d: d.doc_id) == sorted(fdocs, key=lambda d: d.doc_id)
    assert sorted((i.record, i.message) for i in issues) == \
        sorted((i.record, i.message) for i in fissues)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "corpus.zip"]  # not unpacked


def test_a_pdf_encrypted_with_an_empty_password_is_read(files):
    got = read_document("open.pdf", encrypt_pdf(files["handbook.pdf"], ""))
    assert "twenty-five days" in got.text and len(got.pages) == 2


def test_blank_pages_keep_their_place_and_are_reported():
    got = read_document("x.pdf", make_pdf(["First page text.", "", "Third page text."]))
    assert got.text == "First page text.\n\nThird page text."
    assert got.pages == (0, 18, 18)  # page 2 is empty: page 3 starts where it would
    assert got.warnings == ("page(s) 2 of 3 have no text layer (blank, or scanned images); "
                            "nothing is read from them",)
    assert [page_at(got.pages, o) for o in (0, 17, 18, 33)] == [1, 1, 3, 3]


def test_a_corpus_of_one_document_file(tmp_path, files):
    (tmp_path / "handbook.pdf").write_bytes(files["handbook.pdf"])
    docs, issues = load_corpus(tmp_path / "handbook.pdf")
    assert [d.doc_id for d in docs] == ["handbook.pdf"] and issues == []
    (tmp_path / "locked.pdf").write_bytes(files["locked.pdf"])
    with pytest.raises(DataError, match=r"locked\.pdf.*no file could be read.*encrypted PDF"):
        load_corpus(tmp_path / "locked.pdf")


def test_a_corpus_where_no_file_can_be_read_fails_with_the_first_reasons(tmp_path, files):
    bad = {k: files[k] for k in ("locked.pdf", "scan.pdf", "broken.pdf", "logo.png")}
    with pytest.raises(DataError) as err:
        load_corpus(write_corpus(tmp_path / "bad", bad))
    msg = str(err.value)
    assert "no file could be read (3 tried)" in msg
    for name in ("broken.pdf", "locked.pdf", "scan.pdf"):
        assert f"file {name}" in msg
    with pytest.raises(DataError, match=r"holds no file ragdash can read.*found e\.g\. "
                                        r"'logo\.png'"):
        load_corpus(write_corpus(tmp_path / "images", {"logo.png": files["logo.png"]}))


def test_a_reader_crash_is_one_corrupt_file(monkeypatch, folder):
    def boom(data):
        raise RuntimeError("parser exploded")

    monkeypatch.setitem(readers.READERS, ".html", ("HTML", boom))
    docs, issues = load_corpus(folder)
    assert "web/travel.html" not in by_id(docs) and len(docs) == 3
    msg = next(i.message for i in issues if i.record == "file web/travel.html")
    assert msg == "is not a readable HTML file (RuntimeError: parser exploded); skipped"


def test_a_docx_zip_bomb_is_refused(monkeypatch, files):
    from ragdash.data.readers import Unreadable, base

    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 1000)
    with pytest.raises(Unreadable, match="XML parts unpack to more than 1,000 bytes"):
        read_document("it.docx", files["it.docx"])


def test_an_encrypted_zip_member_is_skipped(tmp_path, files):
    path = write_zip(tmp_path / "c.zip", {"handbook.pdf": files["handbook.pdf"],
                                          "notes.md": files["notes.md"]})
    data = bytearray(path.read_bytes())
    cd = data.rfind(b"PK\x01\x02")  # mark the last entry encrypted in the central directory
    data[cd + 8] |= 0x1
    path.write_bytes(bytes(data))
    docs, issues = load_corpus(path)
    assert [d.doc_id for d in docs] == ["handbook.pdf"]
    assert any(i.record == "file notes.md" and "encrypted in the zip" in i.message
               for i in issues)


# --- layout ----------------------------------------------------------------------------------

def test_layout_pages_and_section_paths():
    layout = Layout([0, 10, 10, 25], [Heading(0, 1, "A"), Heading(5, 2, "B"), Heading(12, 3, "C"),
                                      Heading(20, 2, "D"), Heading(30, 1, "E")])
    assert [layout.page(o) for o in (0, 9, 10, 24, 25, 99)] == [1, 1, 3, 3, 4, 4]
    assert Layout().page(5) is None and Layout().heading(5) is None
    assert [layout.heading(o) for o in (0, 6, 12, 21, 31)] == [
        "A", "A › B", "A › B › C", "A › D", "E"]
    assert Layout(headings=[Heading(4, 1, "late")]).heading(2) is None  # before any heading


def test_text_builder_offsets():
    b = TextBuilder()
    b.new_page()
    b.add("  Title ", 1)
    b.add("Body text.")
    b.new_page()
    b.add("   ")  # blank blocks are dropped
    b.add("Deep", 4)  # below h3: text, not a heading
    b.new_page()  # a trailing empty page
    assert b.text() == "Title\n\nBody text.\n\nDeep"
    assert b.headings == [Heading(0, 1, "Title")]
    assert b.page_starts() == (0, 19, 23)  # clamped to the end of the text


def test_markdown_headings_skip_code_blocks():
    text = "# One\n\ntext\n\n```python\n# comment\n```\n\n## Two ##\n#### Four\n#nospace\n~~~\n# x"
    assert markdown_headings(text) == (Heading(0, 1, "One"), Heading(38, 2, "Two"))


def test_layout_columns_round_trip(tmp_path):
    pages, heads = [(0, 98), ()], [(), (Heading(0, 1, "T"),)]
    cols = to_columns(pages, heads)
    frame = pd.DataFrame({"doc_id": ["a", "b"], **cols})
    frame.to_parquet(tmp_path / "d.parquet")
    back = pd.read_parquet(tmp_path / "d.parquet")
    assert [from_columns(r.pages, r.headings) for r in back.itertuples()] == list(
        zip(pages, heads, strict=True))
    assert to_columns([(), ()], [(), ()]) == {}  # plain corpora keep their three columns
    assert from_columns(None, float("nan")) == ((), ())  # a table from before layouts


def test_readable_layout_for_previews(folder):
    from dataclasses import asdict

    docs, _ = load_corpus(folder)
    shown = layout.readable(pd.DataFrame([asdict(d) for d in docs])).set_index("doc_id")
    assert shown.loc["handbook.pdf", "pages"] == 2 and pd.isna(shown.loc["it.docx", "pages"])
    assert shown.loc["web/travel.html", "headings"] == "Travel policy · Expenses · Meals · Booking"
    plain = pd.DataFrame({"doc_id": ["a"], "pages": [[]], "headings": [[]], "text": ["x"]})
    assert list(layout.readable(plain).columns) == ["doc_id", "text"]


def test_chunk_cards_say_where_they_come_from():
    from ragdash.ui import evidence

    chunks = pd.DataFrame({
        "rank": [0, 1, 2], "chunk_id": ["h.pdf#0", "w.html#1", "plain#0"],
        "title": ["h", "w", "Plain <b>title</b>"], "text": ["one", "two", "three"],
        "score": [3.0, 2.0, 1.0], "doc_id": ["h.pdf", "w.html", "plain"],
        "page": pd.array([2, None, None], dtype="Int64"),
        "last_page": pd.array([3, None, None], dtype="Int64"),
        "heading": [None, "Travel <script>x</script> › Meals", None]})
    page = evidence.context_html(chunks, [], 100, 100)
    assert "pages 2–3 of h.pdf" in page
    assert "§ Travel &lt;script&gt;x&lt;/script&gt; › Meals" in page and "<script>" not in page
    assert "Plain &lt;b&gt;title&lt;/b&gt;" in page and "of plain" not in page
    one = evidence.source_line(chunks.assign(last_page=chunks["page"]).iloc[0])
    assert "page 2 of h.pdf" in one


# --- chunks and datasets -----------------------------------------------------------------------

def test_chunks_know_their_page_and_section(folder):
    docs, _ = load_corpus(folder)
    chunks = chunk_documents(docs, "recursive", chunk_size=70, chunk_overlap=0)
    d = by_id(docs)
    for c in chunks:
        assert d[c.doc_id].text[c.start:c.end] == c.text  # offsets are the extracted text's
    pdf = [c for c in chunks if c.doc_id == "handbook.pdf"]
    page2 = d["handbook.pdf"].pages[1]
    assert [c.page for c in pdf] == [1 if c.start < page2 else 2 for c in pdf]
    assert {c.page for c in pdf} == {1, 2}
    assert next(c for c in pdf if c.page == 2).text.startswith("Holidays")
    assert all(c.heading is None for c in pdf)
    meals = next(c for c in chunks if c.text.startswith("Meals on the road"))
    assert meals.heading == "Travel policy › Expenses › Meals" and meals.page is None
    laptops = next(c for c in chunks if "replaced every four years" in c.text)
    assert laptops.heading == "Laptops"  # Heading 1 after the Title closes the Title's section
    whole = chunk_documents(docs, "none")
    pdf_whole = next(c for c in whole if c.doc_id == "handbook.pdf")
    assert (pdf_whole.page, pdf_whole.last_page) == (1, 2)  # runs over the page break


def test_a_dataset_quoting_the_documents_finds_every_part(tmp_path, folder):
    ds = load_dataset(write_questions(tmp_path / "qa.jsonl"), corpus=folder)
    assert [e.qid for e in ds.examples] == [q for q, *_ in QUESTIONS]
    assert not [i for i in ds.issues if i.field == "relevant_parts"]  # every part is found
    assert ds.skipped == 4 and ds.source["corpus_sha256"] and len(ds.documents) == 4


def test_only_corpora_with_new_document_types_get_a_new_ingest_key(tmp_path, files):
    from ragdash.config import load_spec
    from ragdash.stages import ingest

    plain = write_corpus(tmp_path / "plain", {"notes.md": files["notes.md"]})
    mixed = write_corpus(tmp_path / "mixed", {"notes.md": files["notes.md"],
                                              "handbook.pdf": files["handbook.pdf"]})
    zipped = write_zip(tmp_path / "m.zip", {"a.htm": b"<p>x</p>"})
    data = write_questions(tmp_path / "qa.jsonl")
    keys = {}
    for name, corpus in (("plain", plain), ("mixed", mixed), ("zip", zipped)):
        keys[name] = ingest.settings(load_spec(None, {"dataset": {"path": str(data),
                                                                  "corpus": str(corpus)}}))
    assert len(keys["plain"]) == 3  # as before: runs of .txt/.md corpora keep their key
    assert keys["mixed"][-1] == keys["zip"][-1] == "documents-v1"
    assert not textfiles.holds_layout_files(tmp_path / "missing.zip")


@pytest.mark.slow
def test_cli_run_over_a_folder_of_documents(tmp_path, folder, capsys):
    from ragdash.cli import main
    from ragdash.rundir import Run

    run_dir = tmp_path / "run"
    assert main(["run", "--dataset", str(write_questions(tmp_path / "qa.jsonl")),
                 "--corpus", str(folder), "--chunker", "recursive", "--retrievers", "bm25",
                 "--budgets", "20:100:20", "--run-dir", str(run_dir), "-q"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "4 record(s) skipped" in captured.out
    assert "locked.pdf" in captured.err and "encrypted PDF" in captured.err
    run = Run(run_dir)
    docs = run.read("documents").set_index("doc_id")
    assert list(docs.loc["handbook.pdf", "pages"]) == [0, 98]
    chunks = run.read("chunks")
    assert {"page", "heading", "last_page"} <= set(chunks.columns)
    assert chunks.set_index("doc_id").loc["handbook.pdf", "page"] == 1
    issues = pd.read_csv(run.file("issues"))
    assert set(issues.loc[issues.severity == "error", "record"]) == {
        "file locked.pdf", "file scan.pdf", "file broken.pdf", "file broken.docx"}
    summary = pd.read_csv(run_dir / "ir_summary.csv").set_index("budget")
    assert summary.loc[100, "bm25"] == 1.0  # every quoted part is found in the documents
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["issues"]["skipped"] == 4


def test_old_tables_without_layout_columns_still_chunk(tmp_path):
    """A documents table from before layouts (three columns) chunks as before, no page column."""
    from ragdash.config import RunSpec, load_config
    from ragdash.rundir import Run
    from ragdash.stages import chunk as chunk_stage
    from ragdash.stages.base import StageContext
    from ragdash.stages.runner import stage_keys

    cfg = load_config(None, {"dataset": {"path": "x.jsonl"}, "chunker": {"method": "none"}})
    run = Run(tmp_path / "run")
    run.create(cfg)
    run.write("documents", pd.DataFrame({"doc_id": ["a"], "title": ["a"], "text": ["Hello."]}))
    counts = chunk_stage.run(StageContext(run, RunSpec.from_config(cfg), stage_keys(cfg)["chunk"],
                                          lambda *a: None, None))
    assert counts["chunks"] == 1
    assert list(run.read("chunks").columns) == ["chunk_id", "doc_id", "title", "text", "start",
                                                "end"]


def test_zip_of_the_documents_via_load_dataset(tmp_path, files):
    path = write_zip(tmp_path / "docs.zip", files)
    ds = load_dataset(write_questions(tmp_path / "qa.jsonl"), corpus=path)
    assert sorted(d.doc_id for d in ds.documents) == READABLE
    with zipfile.ZipFile(path) as zf:
        assert len(zf.namelist()) == len(files)
    assert HANDBOOK_PAGES[1].split("\n")[0] in by_id(ds.documents)["handbook.pdf"].text
