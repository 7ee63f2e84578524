"""Corpora of .txt/.md files in a folder or a .zip."""

import io
import json
import zipfile

import pytest

from ragdash.data import DataError, load_corpus, load_dataset, textfiles
from ragdash.data.readers import base

FILES = {"a.txt": b"Alpha text.", "sub/b.md": b"\xef\xbb\xbf# Beta\n\nBeta text.",
         "sub/empty.txt": b"  \n", "bad.txt": b"ok\nthen \xff here", "notes.xlsx": b"PK",
         ".hidden/x.txt": b"secret", "__MACOSX/a.txt": b"junk"}


def make_folder(tmp_path, files=FILES):
    root = tmp_path / "docs"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def make_zip(path, files=FILES):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def check(docs, issues, file):
    assert [(d.doc_id, d.title, d.text) for d in docs] == [
        ("a.txt", "a", "Alpha text."), ("sub/b.md", "b", "# Beta\n\nBeta text.")]
    got = {(i.record, i.severity): i.message for i in issues}
    assert "first at byte 8 (line 2)" in got[("file bad.txt", "error")]
    assert "empty text" in got[("file sub/empty.txt", "warning")]
    summary = got[("-", "warning")]
    assert ("2 of 4 file(s) read into documents; 2 skipped (1 empty file, 1 file not in UTF-8)"
            in summary)
    assert "1 file(s) of a type ragdash cannot read ignored: notes.xlsx" in summary
    assert issues[0].record == "-"  # the summary comes first
    assert all(i.file == str(file) for i in issues) and len(issues) == 3


def test_folder_corpus(tmp_path):
    root = make_folder(tmp_path)
    check(*load_corpus(root), root)


def test_zip_corpus_read_in_memory(tmp_path):
    path = make_zip(tmp_path / "docs.zip")
    check(*load_corpus(path), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.zip"]  # nothing extracted


def test_zip_size_guards(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 5)
    docs, issues = load_corpus(make_zip(tmp_path / "d.zip", {"s.txt": b"tiny", "l.txt": b"long!!"}))
    assert [d.doc_id for d in docs] == ["s.txt"]
    assert issues[1].record == "file l.txt" and "larger than 5 bytes" in issues[1].message
    assert "1 of 2 file(s) read into documents; 1 skipped (1 file too large)" in issues[0].message
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 100)
    monkeypatch.setattr(textfiles, "MAX_TOTAL_BYTES", 6)
    with pytest.raises(DataError, match="more than 6 bytes of documents"):
        load_corpus(tmp_path / "d.zip")


def test_zip_header_lying_about_size_is_caught(tmp_path, monkeypatch):
    buf = io.BytesIO()
    make_zip(buf, {"big.txt": b"x" * 1000})
    data = bytearray(buf.getvalue())
    # patch the uncompressed size in the central directory to claim 10 bytes
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    (tmp_path / "lie.zip").write_bytes(bytes(data))
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 100)
    # its only file cannot be read, so the corpus fails, naming the file and the reason
    with pytest.raises(DataError, match=r"no file could be read.*file big\.txt cannot be "
                                        "decompressed"):
        load_corpus(tmp_path / "lie.zip")


def test_bad_zip_and_empty_folder_are_fatal(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"PK not a zip")
    with pytest.raises(DataError, match=r"bad\.zip.*not a readable zip file"):
        load_corpus(tmp_path / "bad.zip")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "x.csv").write_text("a")
    with pytest.raises(DataError, match=r"empty.*holds no file ragdash can read \(\.txt, \.md, "
                                         r"\.pdf.*found e\.g\. 'x\.csv'"):
        load_corpus(tmp_path / "empty")
    with pytest.raises(DataError, match="folder not found"):
        load_corpus(tmp_path / "nothere", "folder")


def test_dataset_with_a_folder_corpus(tmp_path):
    root = make_folder(tmp_path, {"p/one.txt": b"Paris is big. It is the capital."})
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": 1, "question": "Q?", "answer": "A",
                                "relevant_parts": ["It is the capital."]}) + "\n")
    ds = load_dataset(data, corpus=root)
    assert [d.doc_id for d in ds.documents] == ["p/one.txt"] and ds.issues == []
    assert len(ds.source["corpus_sha256"]) == 64
