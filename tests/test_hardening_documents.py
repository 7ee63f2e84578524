"""Corpus documents that would exhaust memory or time, lie about their type, or lead outside
their folder: each is skipped with its reason and the rest of the corpus loads. The large files
are written by the tests themselves and compress to a few hundred KB."""

from __future__ import annotations

import io
import itertools
import os
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.documents import (
    HANDBOOK_PAGES,
    NOTES,
    PAGE,
    file_issue,
    make_docx,
    make_pdf,
    write_corpus,
)

from ragdash.data import DataError, load_corpus, textfiles
from ragdash.data.readers import Unreadable, base, pdf, read_document, word

MIB = 1024**2
PARAGRAPH = b"<w:p><w:r><w:t>The refund policy gives thirty days.</w:t></w:r></w:p>"
TEXT_OP = b"BT /F1 12 Tf 72 720 Td (Hello world) Tj ET\n"


def big_docx(xml_bytes: int) -> bytes:
    """The fixture .docx with `xml_bytes` more of paragraphs in word/document.xml, written in
    blocks (never held whole): a few hundred KB on disk."""
    src = zipfile.ZipFile(io.BytesIO(make_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for info in src.infolist():
            if info.filename != "word/document.xml":
                zf.writestr(info, src.read(info))
                continue
            head, tail = src.read(info).split(b"<w:body>", 1)
            block = PARAGRAPH * (MIB // len(PARAGRAPH))
            with zf.open("word/document.xml", "w", force_zip64=True) as f:
                f.write(head + b"<w:body>")
                for _ in range(-(-xml_bytes // len(block))):
                    f.write(block)
                f.write(tail)
    return out.getvalue()


def understate(data: bytes, member: str, size: int) -> bytes:
    """The zip with the central directory claiming `size` bytes for `member` (CRC left as is)."""
    out = bytearray(data)
    pos = out.find(b"PK\x01\x02")
    while pos != -1:
        n = int.from_bytes(out[pos + 28 : pos + 30], "little")
        if out[pos + 46 : pos + 46 + n] == member.encode():
            out[pos + 24 : pos + 28] = size.to_bytes(4, "little")
            return bytes(out)
        pos = out.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(f"{member} not in the zip")


def shared_stream_pdf(pages: int, content_bytes: int) -> bytes:
    """A PDF whose `pages` pages all draw one Flate content stream of `content_bytes` (text
    operators), compressed in blocks: the shape of a small PDF that parses for minutes."""
    z, ops, per_block = zlib.compressobj(9), content_bytes // len(TEXT_OP), 20_000
    packed = b"".join(z.compress(TEXT_OP * min(per_block, ops - done))
                      for done in range(0, ops, per_block)) + z.flush()
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed),
                                                                                  packed)]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
                b"<< /F1 3 0 R >> >> /Contents 4 0 R >>"] * pages
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1,
                                                                                 xref)
    return bytes(out)


def peak_while(fn: Callable[[], object]) -> tuple[int, BaseException | None]:
    """(peak bytes Python allocated while `fn` ran, what it raised)."""
    tracemalloc.start()
    try:
        fn()
        raised = None
    except Exception as exc:
        raised = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, raised


issue = file_issue


def folder(tmp_path: Path, files: dict[str, bytes]) -> Path:
    return write_corpus(tmp_path / "docs", files)


@pytest.fixture(scope="module")
def docx_bomb() -> bytes:
    return big_docx(base.MAX_DOCUMENT_BYTES + 4 * MIB)


# --- one size limit per document -------------------------------------------------------------


def test_one_limit_governs_every_type():
    assert base.MAX_DOCUMENT_BYTES == 64 * MIB
    assert not hasattr(textfiles, "MAX_FILE_BYTES")  # the old per-loader copy is gone
    assert not hasattr(word, "MAX_UNPACKED_BYTES")  # and the .docx one (512 MB)


def test_a_docx_whose_xml_unpacks_past_the_limit_is_refused_before_parsing(docx_bomb):
    assert len(docx_bomb) < 2 * MIB  # small on disk
    start = time.process_time()
    peak, raised = peak_while(lambda: read_document("bomb.docx", docx_bomb))
    assert isinstance(raised, Unreadable) and raised.reason == "file too large"
    assert "XML parts unpack to more than 67,108,864 bytes" in str(raised)
    assert peak < 16 * MIB, f"{peak:,} bytes allocated reading a refused .docx"
    assert time.process_time() - start < 2


def test_a_docx_whose_zip_directory_understates_its_xml_is_not_unpacked_whole(docx_bomb):
    liar = understate(docx_bomb, "word/document.xml", 1000)
    peak, raised = peak_while(lambda: read_document("liar.docx", liar))
    assert isinstance(raised, Unreadable) and raised.reason == "corrupt file"
    assert "Bad CRC-32 for file 'word/document.xml'" in str(raised)
    assert peak < 16 * MIB, f"{peak:,} bytes allocated unpacking a lying .docx"


def test_the_docx_bomb_is_one_skipped_file_of_a_corpus(tmp_path, docx_bomb):
    docs, issues = load_corpus(folder(tmp_path, {"bomb.docx": docx_bomb,
                                                 "notes.md": NOTES.encode()}))
    assert [d.doc_id for d in docs] == ["notes.md"]
    assert "1 skipped (1 file too large)" in issues[0].message
    assert "XML parts unpack to more than" in issue(issues, "bomb.docx")


def with_image(docx: bytes, image: bytes) -> bytes:
    """The .docx with `image` as word/media/photo.png, referenced by the document's parts."""
    rel = (b'<Relationship Id="rIdPhoto" Target="media/photo.png" Type="http://schemas.'
           b'openxmlformats.org/officeDocument/2006/relationships/image"/></Relationships>')
    src, out = zipfile.ZipFile(io.BytesIO(docx)), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", rel)
            elif info.filename == "[Content_Types].xml" and b'Extension="png"' not in data:
                data = data.replace(b"<Default ", b'<Default Extension="png" ContentType='
                                                  b'"image/png"/><Default ', 1)
            zf.writestr(info, data)
        zf.writestr("word/media/photo.png", image)
    return out.getvalue()


def test_a_docx_with_a_large_image_is_read_without_unpacking_it(monkeypatch):
    """Only XML parts count and are unpacked: an image (or a bomb posing as one) never is."""
    data = with_image(make_docx(), b"\x89PNG\r\n\x1a\n" + b"\0" * (8 * MIB))
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 4 * MIB)
    peak, raised = peak_while(lambda: read_document("photo.docx", data))
    assert raised is None and peak < 4 * MIB, (raised, peak)
    assert "Laptops are replaced every four years" in read_document("photo.docx", data).text


def test_a_long_docx_looks_its_styles_up_once(monkeypatch):
    """python-docx scans every style for each paragraph (about 2 ms each: minutes for a long
    document); the reader maps style ids to names once."""
    from docx.styles.styles import Styles

    calls = []
    default = Styles.default
    monkeypatch.setattr(Styles, "default", lambda self, kind: calls.append(1) or default(self,
                                                                                        kind))
    data = big_docx(MIB)  # about 15,000 paragraphs: 15,000 scans before
    got = read_document("long.docx", data)
    assert got.text.count("The refund policy gives thirty days.") > 10_000
    assert [h.text for h in got.headings] == ["IT equipment", "Laptops", "Phones"]
    assert len(calls) < 10  # a few, whatever the length


def test_text_files_and_extracted_text_share_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 300)
    docs, issues = load_corpus(folder(tmp_path, {
        "big.txt": b"a" * 301, "big.md": b"# T\n" + b"b" * 300, "big.html": PAGE.encode(),
        "ok.txt": b"short enough"}))
    assert [d.doc_id for d in docs] == ["ok.txt"]
    for name in ("big.txt", "big.md", "big.html"):
        assert "is larger than 300 bytes, the limit of one document" in issue(issues, name)
    with pytest.raises(Unreadable, match="holds text longer than 300 characters"):
        read_document("direct.txt", b"c" * 301)  # the reader's own check, whatever the loader
    with pytest.raises(DataError, match=r"big\.txt is larger than 300 bytes"):
        load_corpus(tmp_path / "docs" / "big.txt")  # a corpus of one file


# --- PDFs: bounded decompression and time -----------------------------------------------------


def test_a_pdf_whose_pages_share_a_huge_stream_is_skipped_quickly():
    data = shared_stream_pdf(40, 70_000_000)  # about 9 s a page before: 6 minutes in all
    assert len(data) < 512 * 1024
    start = time.process_time()
    with pytest.raises(Unreadable, match=r"page content \(pages 1 to 1\) decompresses to more "
                                         r"than 67,108,864 bytes") as caught:
        read_document("shared.pdf", data)
    assert caught.value.reason == "file too large"
    assert time.process_time() - start < 5


def test_a_shared_stream_counts_for_every_page_that_draws_it(monkeypatch):
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 250_000)
    data = shared_stream_pdf(40, 100_000)
    with pytest.raises(Unreadable, match=r"pages 1 to 3\) decompresses to more than 250,000"):
        read_document("shared.pdf", data)


def test_a_pdf_past_its_time_budget_is_skipped(monkeypatch):
    clock = itertools.count(0, 10)  # each look at the clock: 10 s later
    monkeypatch.setattr(pdf, "monotonic", lambda: next(clock))
    monkeypatch.setattr(pdf, "MAX_SECONDS", 15)
    with pytest.raises(Unreadable, match=r"took more than 15 s to extract \(stopped before page "
                                         r"2 of 2\)") as caught:
        read_document("slow.pdf", make_pdf(HANDBOOK_PAGES))
    assert caught.value.reason == "PDF too slow to read"


def test_a_page_past_a_pypdf_limit_stops_the_pdf(monkeypatch):
    from pypdf import PageObject
    from pypdf.errors import LimitReachedError

    calls = []

    def limited(self, *args, **kwargs):
        calls.append(1)
        raise LimitReachedError("Reached maximum number of tokens per stream.")

    monkeypatch.setattr(PageObject, "extract_text", limited)
    with pytest.raises(Unreadable, match="page 1 goes past a limit of pypdf"):
        read_document("dense.pdf", make_pdf(HANDBOOK_PAGES * 5))
    assert calls == [1]  # not once per page


def test_the_pdf_bomb_is_one_skipped_file_of_a_corpus(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 250_000)
    docs, issues = load_corpus(folder(tmp_path, {"shared.pdf": shared_stream_pdf(5, 100_000),
                                                 "handbook.pdf": make_pdf(HANDBOOK_PAGES)}))
    assert [d.doc_id for d in docs] == ["handbook.pdf"]
    assert "decompresses to more than" in issue(issues, "shared.pdf")


# --- content that does not match the extension ------------------------------------------------


def test_files_whose_content_is_another_type_are_skipped_with_what_they_are(tmp_path):
    docs, issues = load_corpus(folder(tmp_path, {
        "report.html": make_docx(), "handbook.txt": make_pdf(HANDBOOK_PAGES),
        "blob.md": bytes(range(256)) * 4, "photo.pdf": b"\x89PNG\r\n\x1a\n" + b"\0" * 64,
        "letter.docx": make_pdf(["A letter."]), "notes.md": NOTES.encode()}))
    assert [d.doc_id for d in docs] == ["notes.md"]
    assert "5 skipped (5 mislabelled files)" in issues[0].message
    assert issue(issues, "report.html") == (
        "has the extension .html but is a zip file (a .docx, .xlsx, .pptx, .zip, ...); skipped: "
        "give it the extension of its type")
    assert "has the extension .txt but is a PDF file" in issue(issues, "handbook.txt")
    assert "has the extension .md but is binary data (it holds NUL bytes" in issue(issues,
                                                                                  "blob.md")
    assert "has the extension .pdf but is a PNG image" in issue(issues, "photo.pdf")
    assert "has the extension .docx but is a PDF file" in issue(issues, "letter.docx")


def test_near_misses_keep_their_own_reasons():
    utf16 = "Plain text in UTF-16.".encode("utf-16")  # a BOM, then NUL bytes
    with pytest.raises(Unreadable) as caught:
        read_document("wide.txt", utf16)
    assert caught.value.reason == "file not in UTF-8"
    with pytest.raises(Unreadable) as caught:
        read_document("old.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64)
    assert caught.value.reason == "encrypted or old Word file"
    with pytest.raises(Unreadable) as caught:
        read_document("half.pdf", b"not a pdf at all")
    assert caught.value.reason == "corrupt file"  # broken, not another known type
    junk_first = b"\n" * 10 + make_pdf(HANDBOOK_PAGES)  # a header after leading junk is a PDF
    assert "twenty-five days" in read_document("junk.pdf", junk_first).text


# --- file names and symbolic links in a folder ------------------------------------------------


def test_a_file_name_that_is_not_utf8_skips_that_file_only(tmp_path):
    root = folder(tmp_path, {"ok.txt": b"Alpha text.", "notes.md": NOTES.encode()})
    with open(os.path.join(os.fsencode(root), b"bad\xff.txt"), "wb") as f:
        f.write(b"Text under a bad name.")
    with open(os.path.join(os.fsencode(root), b"pic\xfe.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
    docs, issues = load_corpus(root)
    assert [d.doc_id for d in docs] == ["notes.md", "ok.txt"]
    assert issue(issues, "bad\\xff.txt").startswith("has a name that is not valid UTF-8")
    assert "1 file name not in UTF-8" in issues[0].message
    assert "ignored: pic\\xfe.png" in issues[0].message
    for i in issues:  # every string can be written out
        (i.record + i.message).encode("utf-8")


def test_a_zip_name_marked_utf8_that_is_not_is_a_located_error(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("badXname.txt", b"x")
    data = bytearray(buf.getvalue())
    for signature, flags in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        data[data.find(signature) + flags + 1] |= 0x08  # general purpose flag 0x800: UTF-8
    (tmp_path / "c.zip").write_bytes(bytes(data).replace(b"badXname", b"bad\xffname"))
    with pytest.raises(DataError, match=r"c\.zip.*file name marked UTF-8 that is not "
                                        r"\('bad\\\\xffname\.txt'\)"):
        load_corpus(tmp_path / "c.zip")


def test_symlinks_leading_outside_the_folder_are_refused(tmp_path):
    secret = tmp_path / "outside" / "passwd.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/bash")
    root = folder(tmp_path, {"a.txt": b"Alpha text.", "sub/b.md": b"# B\n\nBeta text.",
                             ".hid/h.txt": b"Hidden but linked."})
    (root / "passwd.txt").symlink_to(secret)
    (root / "etc").symlink_to(secret.parent, target_is_directory=True)
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)  # a loop
    (root / "sub" / "again.txt").symlink_to(root / "a.txt")
    (root / "h1.txt").symlink_to(".hid/h.txt")
    (root / "h2.txt").symlink_to(".hid/h.txt")
    (root / "c.txt").symlink_to("d.txt")
    (root / "d.txt").symlink_to("c.txt")  # a loop of file links
    docs, issues = load_corpus(root)
    assert [d.doc_id for d in docs] == ["a.txt", "h1.txt", "sub/b.md"]
    assert all("root:x" not in d.text for d in docs)
    outside = "symlink to outside the folder"
    assert issue(issues, "passwd.txt").startswith(f"is a symbolic link to {secret}, outside")
    assert issue(issues, "etc").startswith("is a symbolic link to ")
    assert "2 symlinks to outside the folder" in issues[0].message, outside
    assert issue(issues, "sub/again.txt") == ("is a symbolic link to a file already read, as "
                                              "a.txt; skipped (a file is read once)")
    assert "already read, as h1.txt" in issue(issues, "h2.txt")
    assert "cannot be read" in issue(issues, "c.txt")


def test_a_folder_of_outside_links_only_fails_naming_them(tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    root = tmp_path / "docs"
    root.mkdir()
    (root / "passwd.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(DataError, match=r"no file could be read.*file passwd\.txt is a "
                                        "symbolic link to .*outside the folder"):
        load_corpus(root)
