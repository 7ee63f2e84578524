"""A folder corpus with a file name that is not UTF-8, or a file far over the document limit,
runs through `ragdash run`: the file is skipped with its reason, the run's input hash never reads
it whole, and run.json records the ingest stage as done."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl

from ragdash.cli import main
from ragdash.data.readers.base import MAX_DOCUMENT_BYTES
from ragdash.stages.ingest import file_sha256


def folder_corpus(tmp_path: Path) -> tuple[Path, Path]:
    """The generic dataset, its documents as .txt files of a folder (doc_id = file name)."""
    root = tmp_path / "c8"
    root.mkdir()
    for doc_id, _title, text in DOCS:
        (root / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    ds = write_jsonl(tmp_path / "qa.jsonl", [
        {"id": q, "question": t, "answer": a, "relevant_parts": p}
        for q, t, a, p in QUESTIONS])
    return ds, root


def bad_name(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), b"bad\xff\xfename.txt"), "wb") as f:
        f.write(b"Text under a name that is not UTF-8.")


def sparse(root: Path, name: str, size: int) -> Path:
    """A file of `size` bytes that takes no room on disk."""
    path = root / name
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def run(tmp_path: Path, ds: Path, corpus: Path) -> tuple[int, dict]:
    out = tmp_path / "run"
    code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--chunker", "none",
                 "--retrievers", "bm25", "--budgets", "20:60:20", "--run-dir", str(out), "-q"])
    return code, json.loads((out / "run.json").read_text())


def test_a_name_that_is_not_utf8_skips_that_file_and_the_run_goes_on(tmp_path, capsys):
    ds, root = folder_corpus(tmp_path)
    bad_name(root)
    code, meta = run(tmp_path, ds, root)
    assert code == 0, capsys.readouterr().err
    assert meta["stages"]["ingest"]["status"] == "done"
    assert meta["stages"]["score"]["status"] == "done"
    said = " ".join(meta["issues"]["first"])
    assert "bad\\xff\\xfename.txt" in said and "not valid UTF-8" in said


def test_a_file_far_over_the_limit_is_never_read_whole(tmp_path, capsys):
    ds, root = folder_corpus(tmp_path)
    sparse(root, "huge.txt", 3 * 1024**3)  # 3 GB, no room on disk
    tracemalloc.start()
    try:
        code, meta = run(tmp_path, ds, root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, capsys.readouterr().err
    assert meta["stages"]["ingest"]["status"] == "done"
    assert "huge.txt" in " ".join(meta["issues"]["first"])
    assert peak < 400 * 1024**2  # the 3 GB file was neither read nor hashed whole


def test_the_hash_streams_and_names_bad_bytes_without_failing(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.txt").write_text("alpha")
    before = file_sha256(root)
    bad_name(root)
    with_bad = file_sha256(root)
    assert with_bad is not None and with_bad != before
    big = sparse(root, "big.txt", MAX_DOCUMENT_BYTES + 1)
    unread = file_sha256(root)
    assert unread != with_bad
    with open(big, "r+b") as f:  # the same size, a later change: a new key
        f.write(b"x")
    os.utime(big, ns=(1, 10**18))
    assert file_sha256(root) != unread


@pytest.mark.parametrize("text", ["alpha", "x" * 3_000_000])
def test_a_small_folder_keeps_the_hash_it_had(tmp_path, text):
    """Runs made before keep their ingest key: name, then content, for every file."""
    import hashlib

    root = tmp_path / "c"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text(text)
    (root / "b.md").write_text("beta")
    h = hashlib.sha256()
    for name, body in (("b.md", "beta"), ("sub/a.txt", text)):
        h.update(name.encode())
        h.update(body.encode())
    assert file_sha256(root) == h.hexdigest()
