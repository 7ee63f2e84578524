"""Format detection, argument checks and the corpus cross-check."""

import gzip
import json

import pytest

from ragdash.data import (
    CORPUS_FORMATS,
    FORMATS,
    DataError,
    Document,
    Example,
    detect_format,
    load_corpus,
    load_dataset,
    validate,
)

HOTPOT = [{"_id": "a", "question": "Q?", "answer": "A", "supporting_facts": [["T", 0]],
           "context": [["T", ["Some sentence."]]]}]
SQUAD = {"version": "1.1", "data": [{"title": "T", "paragraphs": [
    {"context": "Some sentence.", "qas": [{"id": "a", "question": "Q?",
                                           "answers": [{"answer_start": 0, "text": "Some"}]}]}]}]}


def test_formats_constant():
    assert FORMATS == ("hotpotqa", "squad", "crag", "jsonl", "csv", "parquet", "xlsx")
    assert set(CORPUS_FORMATS) >= {"jsonl", "csv", "parquet"}


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("h.json", HOTPOT, "hotpotqa"), ("h.json.gz", HOTPOT, "hotpotqa"),
    ("s.json", SQUAD, "squad"), ("s.JSON.GZ", SQUAD, "squad"),
    ("d.jsonl", None, "jsonl"), ("d.jsonl.gz", None, "jsonl"), ("d.csv", None, "csv"),
    ("d.parquet", None, "parquet"),
])
def test_detect_format(tmp_path, name, content, expected):
    path = tmp_path / name
    data = json.dumps(content).encode() if content is not None else b""
    path.write_bytes(gzip.compress(data) if name.lower().endswith(".gz") else data)
    assert detect_format(path) == expected


def test_detect_falls_back_to_a_full_parse(tmp_path, monkeypatch):
    import ragdash.data as data

    monkeypatch.setattr(data, "_PEEK_BYTES", 10)  # too short to tell
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": "2.0", **SQUAD}))
    assert detect_format(path) == "squad"


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("x.txt", "hello", "unknown file type"),
    ("x.parquet.gz", "", "unknown file type"),
    ("x.json", '{"questions": []}', "neither HotpotQA"),
    ("x.json", '[{"question": "Q?"}]', "neither HotpotQA"),
    ("x.json", '{"a": 1}\n{"a": 2}\n', "name the file .jsonl"),
])
def test_unknown_inputs_are_fatal_and_named(tmp_path, name, text, needle):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=needle) as info:
        load_dataset(path)
    assert info.value.issue.file == str(path)
    with pytest.raises(DataError, match=needle):
        detect_format(path)


def test_explicit_format_and_bad_arguments(tmp_path):
    path = tmp_path / "data.txt"  # extension says nothing; the format is given
    path.write_text(json.dumps(SQUAD))
    ds = load_dataset(path, "squad")
    assert ds.source["format"] == "squad" and [e.qid for e in ds.examples] == ["a"]
    with pytest.raises(ValueError, match="unknown dataset format"):
        load_dataset(path, "xml")
    with pytest.raises(ValueError, match="unknown corpus format"):
        load_corpus(path, "xml")
    with pytest.raises(DataError, match="a corpus is a JSONL"):
        load_corpus(tmp_path / "c.json")
    with pytest.raises(DataError, match="is a folder"):
        detect_format(tmp_path)


def test_hotpotqa_dataset_with_squad_format_is_refused(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(HOTPOT))
    with pytest.raises(DataError, match="expected a SQuAD object"):
        load_dataset(path, "squad")


@pytest.mark.parametrize("scan_limit", [100, 0])  # 0: the word index answers at once
def test_corpus_index_is_exact(monkeypatch, scan_limit):
    monkeypatch.setattr(validate.CorpusIndex, "SCAN_LIMIT", scan_limit)
    docs = [Document("1", "", "Alpha beta. Gamma delta.\nMore words here"),
            Document("2", "", "Epsilon zeta eta theta.")]
    index = validate.CorpusIndex(docs)
    assert "Gamma delta." in index and " Gamma" in index and "beta. Gamma" in index
    assert "ta. Gamma delta.\nMore wo" in index and "silon zeta eta th" in index
    assert "delta.Epsilon" not in index and "here Epsilon zeta" not in index  # never across docs
    assert "delta.\x00Epsilon" not in index and "alpha" not in index
    assert "Alpha beta. Gamma  delta." not in index and "zeta eta theta. " not in index
    assert (index._words is None) == (scan_limit > 0)  # the path under test was taken
    with_nul = validate.CorpusIndex([Document("1", "", "a\x00b"), Document("2", "", "c")])
    assert "a\x00b" in with_nul and "\x00b" in with_nul
    assert "b\x01c" not in with_nul and "bc" not in with_nul


def test_check_parts_found_warns_once_per_example():
    from ragdash.data.common import IssueLog

    examples = [Example("q1", "Q", "A", ["Alpha beta.", "missing one", "also missing"]),
                Example("q2", "Q", "A", ["Epsilon zeta."]), Example("q3", "Q", "", [])]
    log = IssueLog("d.jsonl")
    docs = [Document("1", "", "Alpha beta."), Document("2", "", "Epsilon zeta.")]
    validate.check_parts_found(examples, ["line 1", "line 2", "line 3"], docs, log)
    (issue,) = log.issues
    assert str(issue).startswith("d.jsonl: record line 1, field 'relevant_parts': 2 of 3")
    assert issue.severity == "warning"
