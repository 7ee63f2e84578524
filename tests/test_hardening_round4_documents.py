"""Issue 31, items 3, 4 and 5: documents and workbooks whose parse would take minutes or
gigabytes are refused with their reason before (or while, with a hard stop) they are parsed.
The adversarial files are written by the tests and stay small on disk."""

from __future__ import annotations

import io
import os
import re
import time
import zipfile
from pathlib import Path

import openpyxl
import pytest
from fixtures.documents import PAGE, file_issue, make_docx, write_corpus

from ragdash.data import DataError, load_corpus, load_dataset
from ragdash.data import spreadsheet as xl
from ragdash.data.readers import Unreadable, read_document, webpage
from ragdash.data.reading import RawFile

MIB = 1024**2


issue = file_issue


def folder(tmp_path: Path, files: dict[str, bytes]) -> Path:
    return write_corpus(tmp_path / "docs", files)


def tiny_paragraphs(size: int) -> bytes:
    """An HTML page of `size` bytes of one-letter paragraphs: trafilatura's time grows with
    the square of their number (1 MB took 28 s)."""
    head, tail = b"<html><body><article><h1>Title</h1>", b"</article></body></html>"
    return head + b"<p>a</p>" * ((size - len(head) - len(tail)) // 8) + tail


# --- item 3: HTML, bounded in size and in time --------------------------------------------------


def test_an_html_page_over_the_html_limit_is_skipped_unread(tmp_path):
    big = PAGE.encode().replace(b"</body>", b"<p>filler text</p>" * (
        (4 * MIB + 64 * 1024) // 18) + b"</body>")  # 4 MiB of paragraphs and a bit: 5 s
    root = folder(tmp_path, {"big.html": big, "travel.html": PAGE.encode()})
    started = time.monotonic()
    docs, issues = load_corpus(root)
    assert time.monotonic() - started < 3
    assert [d.doc_id for d in docs] == ["travel.html"]
    assert issue(issues, "big.html") == (
        "is an HTML page larger than 4 MiB (4,194,304 bytes), the limit of one page; skipped: "
        "save its main text as .txt or split it to include it")
    assert "1 HTML page too large" in issues[0].message  # the summary counts the reason


def test_a_slow_html_page_is_stopped_at_the_time_limit_and_the_next_page_reads(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setattr(webpage, "MAX_HTML_SECONDS", 1.0, raising=False)
    slow = tiny_paragraphs(MIB // 2)  # about 9 s of trafilatura
    root = folder(tmp_path, {"a-slow.html": slow, "b-travel.html": PAGE.encode()})
    started = time.monotonic()
    docs, issues = load_corpus(root)
    assert time.monotonic() - started < 6  # interrupted, not waited for
    assert [d.doc_id for d in docs] == ["b-travel.html"]  # read by a fresh parser
    assert issue(issues, "a-slow.html") == (
        "is an HTML page that took more than 1 s to parse (its parser was stopped); skipped: "
        "save its main text as .txt to include it")


def test_an_html_page_over_the_parser_memory_is_skipped(monkeypatch):
    monkeypatch.setattr(webpage, "MAX_HTML_MEMORY", 200 * MIB, raising=False)
    with pytest.raises(Unreadable, match="needs more than 200 MiB of memory to parse"):
        read_document("wide.html", tiny_paragraphs(3 * MIB))
    assert "Travel expenses" in read_document("travel.html", PAGE.encode()).text  # still reads


def test_the_parser_process_is_reused_and_never_shared_with_a_fork():
    read_document("travel.html", PAGE.encode())
    parser = webpage._take()  # noqa: SLF001
    try:
        assert parser.usable() and parser.ready  # the one that read the page, kept
        parser.pid = -1  # as seen from a forked copy of this process
        assert not parser.usable()
    finally:
        parser.pid = os.getpid()
        webpage._give(parser)  # noqa: SLF001


# --- item 5: each part of a workbook bounded ---------------------------------------------------

STRINGS_TYPE = (b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')


def strings_bomb(strings: int, text: bytes = b"a", stored: int = 0) -> bytes:
    """A one-sheet workbook whose cells are shared strings, with `strings` more <si> elements of
    `text` in xl/sharedStrings.xml (deflated, written in blocks) and a random part of `stored`
    bytes stored as is: it keeps the whole file's ratio low."""
    wb = openpyxl.Workbook()
    wb.active.append(["question", "answer"])
    wb.active.append(["What is the refund window?", "thirty days"])
    src = io.BytesIO()
    wb.save(src)
    cells = iter(range(4))
    out = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED,
                                                              compresslevel=1) as zout:
        for info in zin.infolist():
            body = zin.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", STRINGS_TYPE + b"</Types>")
            elif info.filename == "xl/worksheets/sheet1.xml":  # inline strings -> shared ones
                body = re.sub(rb'"inlineStr"><is><t>[^<]*</t></is>',
                              lambda _: b'"s"><v>%d</v>' % next(cells), body)
            zout.writestr(info.filename, body)
        item = b"<si><t>" + text + b"</t></si>"
        block, n = item * 10_000, strings
        with zout.open("xl/sharedStrings.xml", "w", force_zip64=True) as f:
            f.write(b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                    b"<si><t>question</t></si><si><t>answer</t></si>"
                    b"<si><t>What is the refund window?</t></si><si><t>thirty days</t></si>")
            while n > 0:
                f.write(block if n >= 10_000 else item * n)
                n -= 10_000
            f.write(b"</sst>")
        if stored:
            zout.writestr(zipfile.ZipInfo("xl/media/image1.bin"), os.urandom(stored),
                          zipfile.ZIP_STORED)
    return out.getvalue()


@pytest.fixture
def corpus(tmp_path):
    return folder(tmp_path, {"refund.txt": b"Refunds are paid within thirty days."})


def test_a_shared_strings_bomb_under_the_ratio_is_refused_by_its_part_size(tmp_path, corpus):
    data = strings_bomb(256 * MIB // 1000 + 1, b"x" * 984, stored=3 * MIB)  # 1,000 B each
    unpacked = sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert 256 * MIB < unpacked < 100 * len(data)  # under the whole file's ratio (100:1)
    path = tmp_path / "bomb.xlsx"
    path.write_bytes(data)
    started = time.monotonic()
    with pytest.raises(DataError) as exc:
        load_dataset(path, corpus=corpus)
    assert time.monotonic() - started < 3  # 256 MB of strings: 13 s and 340 MB before
    assert exc.value.issue.message == (
        "has a part, xl/sharedStrings.xml, that unpacks to more than 268,435,456 bytes, the "
        "limit of one part of a workbook: save the sheet as CSV or split the workbook")


def test_too_many_shared_strings_are_refused_before_openpyxl_reads_them(tmp_path, corpus):
    path = tmp_path / "strings.xlsx"
    path.write_bytes(strings_bomb(1000))
    ds = load_dataset(path, corpus=corpus)
    assert [(e.question, e.answer) for e in ds.examples] == [("What is the refund window?",
                                                              "thirty days")]
    path.write_bytes(strings_bomb(1_000_000))  # 17 MB of one-letter strings: 25 s before
    started = time.monotonic()
    with pytest.raises(DataError) as exc:
        load_dataset(path, corpus=corpus)
    assert time.monotonic() - started < 3
    assert exc.value.issue.message == (
        "has a part, xl/sharedStrings.xml, holding more than 1,000,000 shared strings (<si> "
        "elements), the limit of a workbook: save the sheet as CSV or split the workbook")


@pytest.mark.parametrize("prefix", [b"", b"x:"])
def test_shared_strings_are_counted_across_blocks(monkeypatch, prefix):
    monkeypatch.setattr(xl, "_BLOCK", 7)  # every tag split somewhere
    monkeypatch.setattr(xl, "MAX_SHARED_STRINGS", 99)
    xml = b"<x:sst>" + b"".join(b"<%ssi><t>%d</t></%ssi>" % (prefix, i, prefix)
                                for i in range(100)) + b"<sign/></x:sst>"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("xl/sharedStrings.xml", xml)
    raw = RawFile(Path("s.xlsx"), archive.getvalue(), "")
    with zipfile.ZipFile(archive) as z, pytest.raises(DataError, match="more than 99 shared"):
        xl._strings(raw, z, z.getinfo("xl/sharedStrings.xml"))  # noqa: SLF001
    monkeypatch.setattr(xl, "MAX_SHARED_STRINGS", 100)
    with zipfile.ZipFile(archive) as z:
        xl._strings(raw, z, z.getinfo("xl/sharedStrings.xml"))  # noqa: SLF001


def test_a_part_whose_directory_understates_it_is_refused_before_openpyxl(tmp_path, corpus,
                                                                        monkeypatch):
    data = bytearray(strings_bomb(200_000))
    pos = data.find(b"PK\x01\x02")  # the central directory's entries
    while data[pos + 46 : pos + 66] != b"xl/sharedStrings.xml":
        pos = data.find(b"PK\x01\x02", pos + 4)
    data[pos + 24 : pos + 28] = (1000).to_bytes(4, "little")  # the directory claims 1,000 bytes
    path = tmp_path / "lying.xlsx"
    path.write_bytes(bytes(data))

    def never(*args, **kw):
        raise AssertionError("openpyxl must not read this workbook")

    monkeypatch.setattr(openpyxl, "load_workbook", never)
    with pytest.raises(DataError) as exc:
        load_dataset(path, corpus=corpus)
    assert exc.value.issue.message.startswith(
        "is a damaged .xlsx workbook that cannot be read (part xl/sharedStrings.xml: ")


# --- item 4: a .docx of tiny elements ----------------------------------------------------------


def empty_paragraphs(count: int) -> bytes:
    """The fixture .docx with `count` empty paragraphs (6 bytes each) more: 8 MiB of them took
    28 s and 350 MB; 63 MiB, 1.5 GB."""
    src = zipfile.ZipFile(io.BytesIO(make_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "word/document.xml":
                head, tail = body.split(b"<w:body>", 1)
                body = head + b"<w:body>" + b"<w:p/>" * count + tail
            zf.writestr(info.filename, body)
    return out.getvalue()


def test_a_docx_of_too_many_elements_is_skipped_before_parsing(tmp_path):
    root = folder(tmp_path, {"many.docx": empty_paragraphs(1_000_000),
                             "it.docx": make_docx()})
    started = time.monotonic()
    docs, issues = load_corpus(root)
    assert time.monotonic() - started < 5  # 20 s before
    assert [d.doc_id for d in docs] == ["it.docx"]
    assert issue(issues, "many.docx") == (
        "is a .docx file whose XML holds more than 1,000,000 elements, the limit of one Word "
        "document; skipped: split it to include it")
