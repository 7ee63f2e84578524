"""SQuAD loader: the real v1.1 dev file and hand-made v1/v2 inputs."""

import json
from pathlib import Path

import pytest

from ragdash.data import load_dataset

# shared/ sits beside the checkout (in CI too); /work/shared on a developer machine
SHARED = next((p for p in (Path(__file__).resolve().parents[2] / "shared",
                           Path("/work/shared"))
               if (p / "data/squad_v1.1/dev-v1.1.json.gz").exists()),
              Path("/work/shared")) / "data/squad_v1.1/dev-v1.1.json.gz"

CONTEXT = "Paris is big. It is the capital of France. Lyon is smaller."


def qa(qid, start, text, question="Q?", **extra):
    return {"id": qid, "question": question,
            "answers": [{"answer_start": start, "text": text}], **extra}


def write(tmp_path, qas, context=CONTEXT, more=(), version="1.1"):
    articles = [{"title": "France", "paragraphs": [{"context": context, "qas": qas}, *more]}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"data": articles, "version": version}))
    return path


def errors(ds):
    return [i for i in ds.issues if i.severity == "error"]


@pytest.mark.skipif(not SHARED.exists(), reason="shared SQuAD file absent")
def test_real_dev_file():
    ds = load_dataset(SHARED)
    assert ds.source["format"] == "squad"
    assert len(ds.examples) == ds.source["records"] == 10_570
    assert len(ds.documents) == 2_067 and ds.skipped == 0
    assert sum(e.answer in e.parts[0] for e in ds.examples) >= 0.99 * len(ds.examples)
    doc = ds.documents[0]
    assert doc.doc_id == f"{doc.title}#0"
    assert all(e.meta == {"title": e.meta["title"], "paragraph": e.meta["paragraph"]}
               for e in ds.examples)
    assert all(e.meta["paragraph"].startswith(e.meta["title"] + "#") for e in ds.examples)
    assert not [i for i in ds.issues if i.field == "relevant_parts"]


def test_part_is_the_sentence_holding_the_answer(tmp_path):
    start = CONTEXT.index("capital")
    ds = load_dataset(write(tmp_path, [qa("a", start, "capital")]))
    (ex,) = ds.examples
    assert ex.parts == ["It is the capital of France."]
    assert ex.answer == "capital" and ex.meta == {"title": "France", "paragraph": "France#0"}
    assert [(d.doc_id, d.title, d.text) for d in ds.documents] == [("France#0", "France", CONTEXT)]


def test_span_across_a_sentence_break_gives_the_touched_sentences(tmp_path):
    start = CONTEXT.index("big")
    ds = load_dataset(write(tmp_path, [qa("a", start, "big. It")]))
    assert ds.examples[0].parts == ["Paris is big. It is the capital of France."]


def test_unanswerable_left_out_or_kept(tmp_path):
    qas = [qa("a", 0, "Paris"),
           {"id": "u", "question": "Why?", "answers": [], "is_impossible": True,
            "plausible_answers": [{"answer_start": 0, "text": "Paris"}]}]
    path = write(tmp_path, qas, version="v2.0")
    ds = load_dataset(path)
    assert [e.qid for e in ds.examples] == ["a"]
    (warn,) = ds.issues
    assert warn.field == "is_impossible" and "1 unanswerable" in warn.message
    assert ds.source["unanswerable_left_out"] == 1
    both = load_dataset(path, include_unanswerable=True)
    assert [(e.qid, e.parts, e.meta["is_impossible"]) for e in both.examples] == [
        ("a", ["Paris is big."], False), ("u", [], True)]
    assert both.issues == [] and both.skipped == 0


def test_wrong_offset_is_repaired_or_skipped(tmp_path):
    qas = [qa("near", 2, "Lyon"), qa("absent", 0, "Berlin"), qa("nostart", None, "Paris"),
           {"id": "noans", "question": "Q?", "answers": []}, qa("empty", 0, " ")]
    ds = load_dataset(write(tmp_path, qas))
    assert [(e.qid, e.parts) for e in ds.examples] == [("near", ["Lyon is smaller."])]
    warn = [i for i in ds.issues if i.severity == "warning"]
    assert warn[0].record == "id near" and "used its occurrence at" in warn[0].message
    got = {i.record: (i.field, i.message) for i in errors(ds)}
    assert "does not occur in the paragraph" in got["id absent"][1]
    assert "answer_start is null" in got["id nostart"][1]
    assert got["id noans"][0] == "answers"
    assert "is empty" in got["id empty"][1]
    assert ds.skipped == 4


def test_empty_question_and_duplicate_id(tmp_path):
    ds = load_dataset(write(tmp_path, [qa("a", 0, "Paris", question=""), qa("b", 0, "Paris"),
                                       qa("b", 0, "Paris", question="Again?")]))
    assert [e.qid for e in ds.examples] == ["b"] and ds.examples[0].question == "Q?"
    assert [(i.record, i.field) for i in errors(ds)] == [("id a", "question"), ("id b", "id")]


def test_limit_keeps_only_the_paragraphs_of_kept_examples(tmp_path):
    other = {"context": "Rome is old.", "qas": [qa("r", 0, "Rome")]}
    path = write(tmp_path, [qa("a", 0, "Paris"), qa("b", 0, "Paris")], more=[other])
    assert [d.doc_id for d in load_dataset(path).documents] == ["France#0", "France#1"]
    ds = load_dataset(path, limit=1)
    assert [e.qid for e in ds.examples] == ["a"] and ds.source["records"] == 1
    assert [d.doc_id for d in ds.documents] == ["France#0"]


def test_malformed_paragraph_and_non_utf8_article(tmp_path):
    good = {"title": "Good", "paragraphs": [{"context": "Yes it is.", "qas": [qa("g", 0, "Yes")]}]}
    bad = {"title": "BadBytes", "paragraphs": [{"context": "XXX.", "qas": [qa("x", 0, "XXX")]}]}
    odd = {"title": "Odd", "paragraphs": [{"context": 5, "qas": []}]}
    data = json.dumps({"data": [good, bad, odd]}, indent=1).encode()
    at = data.index(b"XXX.")
    path = tmp_path / "s.json"
    path.write_bytes(data[:at] + b"\xe9" + data[at + 1:])
    ds = load_dataset(path, "squad")
    assert [e.qid for e in ds.examples] == ["g"]
    got = [(i.record, i.field) for i in errors(ds)]
    assert got == [("article 2", "paragraphs[0].context"), ("article 3 paragraph 1", "context")]
    line = data.count(b"\n", 0, at) + 1
    assert f"byte {at} (line {line})" in errors(ds)[0].message
