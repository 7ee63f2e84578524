"""User datasets and corpora as JSONL, CSV and Parquet."""

import csv
import json

import pandas as pd
import pytest

from ragdash.data import DataError, load_corpus, load_dataset

DOCS = [{"doc_id": "d1", "title": "Paris", "text": "Paris is big. It is the capital of France."},
        {"doc_id": "d2", "title": "Lyon", "text": "Lyon is smaller."}]


def jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def write_csv(path, rows, header):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def corpus(tmp_path):
    return jsonl(tmp_path / "corpus.jsonl", DOCS)


def row(qid, question="Q?", answer="A", parts=("Paris is big.",), **extra):
    return {"id": qid, "question": question, "answer": answer, "relevant_parts": list(parts),
            **extra}


def errors(ds):
    return [i for i in ds.issues if i.severity == "error"]


def test_jsonl_dataset_with_meta_and_source(tmp_path, corpus):
    path = jsonl(tmp_path / "d.jsonl", [row("a", topic="geo"), row(7, parts=["Lyon is smaller."])])
    ds = load_dataset(path, corpus=corpus)
    assert [(e.qid, e.parts, e.meta) for e in ds.examples] == [
        ("a", ["Paris is big."], {"topic": "geo"}), ("7", ["Lyon is smaller."], {})]
    assert [d.doc_id for d in ds.documents] == ["d1", "d2"] and ds.issues == []
    src = ds.source
    assert src["format"] == "jsonl" and src["records"] == 2 and src["corpus"] == str(corpus)
    assert len(src["sha256"]) == len(src["corpus_sha256"]) == 64


def test_csv_dataset_json_list_and_pipe_parts(tmp_path, corpus):
    rows = [["a", "Q1?", "A1", json.dumps(["Paris is big.", " It is the capital of France."]), "x"],
            ["b", "Q2?", "A2", "Paris is big. || Lyon is smaller.", "y"],
            ["c", "Q3?", "A3", "[not json", "z"]]
    path = write_csv(tmp_path / "d.csv", rows, ["id", "question", "answer", "relevant_parts", "k"])
    ds = load_dataset(path, corpus=corpus)
    assert [e.parts for e in ds.examples] == [
        ["Paris is big.", " It is the capital of France."],
        ["Paris is big.", "Lyon is smaller."],
        ["[not json"]]
    assert [e.meta for e in ds.examples] == [{"k": "x"}, {"k": "y"}, {"k": "z"}]
    (warn,) = ds.issues  # '[not json' is in no document
    assert warn.record == "row 3 (id c)" and warn.field == "relevant_parts"


def test_parquet_dataset_and_corpus_with_ragdash_column_names(tmp_path):
    examples = pd.DataFrame({"qid": ["a", "b"], "question": ["Q?", "R?"], "answer": ["A", None],
                             "parts": [["Lyon is smaller."], ["Paris is big."]], "level": [1, 2]})
    examples.to_parquet(tmp_path / "e.parquet")
    pd.DataFrame(DOCS).to_parquet(tmp_path / "c.parquet")
    ds = load_dataset(tmp_path / "e.parquet", corpus=tmp_path / "c.parquet")
    assert [(e.qid, e.answer, e.parts, e.meta) for e in ds.examples] == [
        ("a", "A", ["Lyon is smaller."], {"level": 1}), ("b", "", ["Paris is big."], {"level": 2})]
    (warn,) = ds.issues
    assert (warn.record, warn.field, warn.severity) == ("row 2 (id b)", "answer", "warning")


def test_parquet_binary_cells_are_decoded_or_reported(tmp_path, corpus):
    frame = pd.DataFrame({"id": ["a", "b"], "question": [b"Caf\xc3\xa9?", b"Caf\xe9?"],
                          "answer": ["A", "A"], "relevant_parts": [["Lyon is smaller."]] * 2})
    frame.to_parquet(tmp_path / "d.parquet")
    ds = load_dataset(tmp_path / "d.parquet", corpus=corpus)
    assert [(e.qid, e.question) for e in ds.examples] == [("a", "Café?")]
    (err,) = errors(ds)
    assert (err.record, err.field) == ("row 2 (id b)", "question")
    assert "not valid UTF-8, first at byte 3 of the value" in err.message


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_missing_required_column_is_fatal(tmp_path, corpus, fmt):
    frame = pd.DataFrame({"id": ["a"], "query": ["Q?"], "answer": ["A"],
                          "relevant_parts": ["Paris is big."]})
    path = tmp_path / f"d.{fmt}"
    {"csv": lambda: frame.to_csv(path, index=False),
     "jsonl": lambda: frame.to_json(path, orient="records", lines=True),
     "parquet": lambda: frame.to_parquet(path)}[fmt]()
    with pytest.raises(DataError, match=rf"d\.{fmt}: record header, field 'question': required "
                                        "column 'question' is missing"):
        load_dataset(path, corpus=corpus)


def test_bad_records_are_skipped_and_counted(tmp_path, corpus):
    lines = [row("ok"), '{"id": "broken", ', "[1, 2]", row("noq", question=" "),
             row("noparts", parts=[]), row("blank", parts=["  "]), row("nonstr", parts=[3]),
             {"id": "", "question": "Q?", "answer": "A", "relevant_parts": ["x"]},
             row("ok", question="Again?"), row("someempty", parts=["Lyon is smaller.", ""]), ""]
    ds = load_dataset(jsonl(tmp_path / "d.jsonl", lines), corpus=corpus)
    assert [e.qid for e in ds.examples] == ["ok", "someempty"]
    assert ds.examples[1].parts == ["Lyon is smaller."]
    got = [(i.record, i.field) for i in errors(ds)]
    assert got == [("line 2", "(json)"), ("line 3", "(record)"), ("line 4 (id noq)", "question"),
                   ("line 5 (id noparts)", "relevant_parts"),
                   ("line 6 (id blank)", "relevant_parts"),
                   ("line 7 (id nonstr)", "relevant_parts"), ("line 8", "id"),
                   ("line 9 (id ok)", "id")]
    assert ds.skipped == 8 and ds.source["records"] == 10
    messages = [i.message for i in errors(ds)]
    assert "invalid JSON" in messages[0] and "first used at line 1 (id ok)" in messages[7]
    assert "has no relevant part" in messages[3] and "no non-empty" in messages[4]
    (warn,) = [i for i in ds.issues if i.severity == "warning"]
    assert warn.field == "relevant_parts[1]" and warn.record == "line 10 (id someempty)"


def test_limit_counts_valid_examples(tmp_path, corpus):
    path = jsonl(tmp_path / "d.jsonl", [row("a"), row("bad", question=""), row("b"), row("c")])
    ds = load_dataset(path, corpus=corpus, limit=2)
    assert [e.qid for e in ds.examples] == ["a", "b"] and ds.source["records"] == 3
    with pytest.raises(ValueError, match="limit"):
        load_dataset(path, corpus=corpus, limit=0)


def test_non_utf8_bytes_in_csv_and_jsonl(tmp_path, corpus):
    good = b'"Paris is big."'
    data = (b"id,question,answer,relevant_parts\na,Q?,A," + good + b"\nb,Caf\xe9?,A," + good
            + b"\nc,Q?,A," + good + b"\n")
    (tmp_path / "d.csv").write_bytes(data)
    ds = load_dataset(tmp_path / "d.csv", corpus=corpus)
    assert [e.qid for e in ds.examples] == ["a", "c"]
    (err,) = errors(ds)
    assert (err.record, err.field) == ("row 2", "question")
    at = data.index(b"\xe9")
    assert f"byte {at} (line 3)" in err.message
    lines = (json.dumps(row("a")) + "\n").encode() + b'{"id": "b\xff"}\n'
    (tmp_path / "d.jsonl").write_bytes(lines)
    ds = load_dataset(tmp_path / "d.jsonl", corpus=corpus)
    (err,) = errors(ds)
    at = lines.index(b"\xff")
    assert err.record == "line 2" and f"byte {at}" in err.message


def test_csv_row_with_wrong_field_count_and_empty_file(tmp_path, corpus):
    path = tmp_path / "d.csv"
    path.write_text('id,question,answer,relevant_parts\na,Q?,A,"Paris is big."\nb,Q?\n')
    ds = load_dataset(path, corpus=corpus)
    (err,) = errors(ds)
    assert err.record == "row 2" and "has 2 fields, the header has 4" in err.message
    path.write_text("")
    with pytest.raises(DataError, match="empty"):
        load_dataset(path, corpus=corpus)


def test_part_in_no_document_is_a_warning_and_kept(tmp_path, corpus):
    path = jsonl(tmp_path / "d.jsonl", [row("a", parts=["Paris is big.", "Rome is old.",
                                                         "big.\nLyon"])])
    ds = load_dataset(path, corpus=corpus)
    assert len(ds.examples) == 1 and ds.skipped == 0
    (warn,) = ds.issues
    assert warn.severity == "warning" and "2 of 3 relevant part(s)" in warn.message
    assert "parts 1, 2" in warn.message


def test_generic_dataset_needs_a_corpus(tmp_path):
    path = jsonl(tmp_path / "d.jsonl", [row("a")])
    with pytest.raises(DataError, match=r"d\.jsonl.*needs a corpus"):
        load_dataset(path)


def test_corpus_issues(tmp_path):
    rows = [["d1", "T", "Some text."], ["d2", "", "  "], ["d1", "T", "Other text."],
            ["d3", "T", "Third."], ["d3", "T", "Third."], ["", "T", "No id."]]
    path = write_csv(tmp_path / "c.csv", rows, ["doc_id", "title", "text"])
    docs, issues = load_corpus(path)
    assert [(d.doc_id, d.text) for d in docs] == [("d1", "Some text."), ("d3", "Third.")]
    got = [(i.record, i.field, i.severity) for i in issues]
    assert got == [("row 2 (doc_id d2)", "text", "warning"),
                   ("row 3 (doc_id d1)", "doc_id", "error"),
                   ("row 5 (doc_id d3)", "doc_id", "warning"),
                   ("row 6", "doc_id", "error")]
    assert "first is kept" in issues[1].message


def test_corpus_without_title_and_missing_text_column(tmp_path):
    docs, issues = load_corpus(jsonl(tmp_path / "c.jsonl", [{"doc_id": 1, "text": "One."}]))
    assert [(d.doc_id, d.title, d.text) for d in docs] == [("1", "", "One.")] and not issues
    with pytest.raises(DataError, match="required column 'text' is missing"):
        load_corpus(write_csv(tmp_path / "c.csv", [["1", "x"]], ["doc_id", "body"]))


def test_empty_corpus_is_fatal(tmp_path):
    corpus = write_csv(tmp_path / "c.csv", [["d1", "T", " "]], ["doc_id", "title", "text"])
    with pytest.raises(DataError, match="no usable document.*empty text"):
        load_dataset(jsonl(tmp_path / "d.jsonl", [row("a")]), corpus=corpus)


def test_unreadable_files_are_fatal_with_the_path(tmp_path, corpus):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match=r"bad\.parquet.*not a readable Parquet file"):
        load_dataset(tmp_path / "bad.parquet", corpus=corpus)
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(DataError, match=r"dir\.csv.*is a folder"):
        load_dataset(tmp_path / "dir.csv", corpus=corpus)
    with pytest.raises(DataError, match=r"missing\.csv.*file not found"):
        load_corpus(tmp_path / "missing.csv")
