"""HotpotQA loader: the bundled 1,186-question sample and hand-made bad inputs."""

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from ragdash.data import DataError, load_dataset

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLE = DATA / "hotpot_dev_distractor_v1_subset1186.json.gz"
SHA256 = "bbabd98cbb10de84afc802d723d6ceaff32a5bfb9cc9d095099a9b104b326903"  # as in data/README.md


def record(qid="q1", question="Who?", answer="Ann", facts=(("A", 1),), context=None, **extra):
    context = context if context is not None else [
        ["A", ["Ann was born.", " She lives in Paris.", " She sings."]],
        ["B", ["Bob is a cat."]],
    ]
    return {"_id": qid, "question": question, "answer": answer,
            "supporting_facts": [list(f) for f in facts], "context": context,
            "type": "bridge", "level": "hard", **extra}


def write(tmp_path, records, name="h.json"):
    path = tmp_path / name
    data = json.dumps(records).encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def errors(ds):
    return [i for i in ds.issues if i.severity == "error"]


@pytest.fixture(scope="module")
def sample():
    return load_dataset(SAMPLE)


def test_bundled_sample_loads_verbatim(sample):
    raw = json.loads(gzip.decompress(SAMPLE.read_bytes()))
    assert len(sample.examples) == len(raw) == 1186
    assert sample.skipped == 0 and not errors(sample)
    assert sample.source["format"] == "hotpotqa" and sample.source["records"] == 1186
    assert sample.source["sha256"] == hashlib.sha256(SAMPLE.read_bytes()).hexdigest() == SHA256
    spaced = 0
    for ex, rec in zip(sample.examples, raw, strict=True):
        context = {title: sents for title, sents in rec["context"]}
        expected = list(dict.fromkeys(context[t][i] for t, i in rec["supporting_facts"]))
        assert ex.qid == rec["_id"] and ex.parts == expected
        assert ex.meta == {"type": rec["type"], "level": rec["level"]}
        spaced += sum(p.startswith(" ") for p in ex.parts)
    assert spaced > 500  # leading spaces of later sentences are kept
    # every part lies in the corpus: no 'relevant_parts' warning
    assert not [i for i in sample.issues if i.field == "relevant_parts"]
    texts = {d.doc_id: d.text for d in sample.documents}
    assert len(texts) == len(sample.documents) > 10_000
    first = raw[0]["context"][0]
    assert texts[first[0]] == "".join(first[1])


def test_limit_keeps_first_examples_and_their_documents():
    ds = load_dataset(SAMPLE, limit=5)
    raw = json.loads(gzip.decompress(SAMPLE.read_bytes()))[:5]
    assert [e.qid for e in ds.examples] == [r["_id"] for r in raw]
    assert {d.doc_id for d in ds.documents} == {t for r in raw for t, _ in r["context"]}
    assert ds.source["records"] == 5


def test_plain_and_gz_give_the_same_and_parts_keep_leading_space(tmp_path):
    recs = [record(facts=[("A", 1), ("B", 0), ("A", 1)])]
    plain = load_dataset(write(tmp_path, recs))
    packed = load_dataset(write(tmp_path, recs, "h.json.gz"))
    assert plain.examples == packed.examples
    assert plain.examples[0].parts == [" She lives in Paris.", "Bob is a cat."]  # repeat once
    assert plain.documents[0].text == "Ann was born. She lives in Paris. She sings."
    assert plain.documents[0].doc_id == plain.documents[0].title == "A"


@pytest.mark.parametrize(("facts", "needle"), [
    ([("A", 3)], "points at sentence 3 of 'A', which has 3 sentence(s)"),
    ([("A", -1)], "points at sentence -1"),
    ([("Zed", 0)], "points at title 'Zed', which is not among the context paragraphs"),
    ([("A", "0")], "is not [title, sentence index]"),
    ([], "has no relevant part"),
])
def test_bad_supporting_facts_skip_the_record(tmp_path, facts, needle):
    ds = load_dataset(write(tmp_path, [record("bad", facts=facts), record("good")]))
    assert [e.qid for e in ds.examples] == ["good"]
    (err,) = errors(ds)
    assert err.field == "supporting_facts" and needle in err.message
    assert err.record == "item 1 (id bad)" and err.file.endswith("h.json")
    assert ds.skipped == 1


def test_empty_question_missing_id_and_non_object(tmp_path):
    recs = [record("a", question="  "), record(None), 42, record("ok")]
    ds = load_dataset(write(tmp_path, recs))
    assert [e.qid for e in ds.examples] == ["ok"]
    got = [(i.record, i.field) for i in errors(ds)]
    assert got == [("item 1 (id a)", "question"), ("item 2", "_id"), ("item 3", "(record)")]
    assert "is empty" in errors(ds)[0].message


def test_duplicate_id_skips_the_second(tmp_path):
    ds = load_dataset(write(tmp_path, [record("x"), record("x", question="Again?")]))
    assert [e.question for e in ds.examples] == ["Who?"]
    (err,) = errors(ds)
    assert err.record == "item 2 (id x)" and "first used at item 1 (id x)" in err.message


def test_empty_supporting_sentence_is_dropped_or_skips(tmp_path):
    ctx = [["A", ["Ann was born.", "  "]]]
    recs = [record("some", facts=[("A", 0), ("A", 1)], context=ctx),
            record("none", facts=[("A", 1)], context=ctx)]
    ds = load_dataset(write(tmp_path, recs))
    assert [(e.qid, e.parts) for e in ds.examples] == [("some", ["Ann was born."])]
    warn = [i for i in ds.issues if i.field == "supporting_facts[1]"]
    assert warn and warn[0].severity == "warning"
    (err,) = errors(ds)
    assert err.record == "item 2 (id none)" and "no non-empty relevant part" in err.message


def test_repeated_titles_empty_paragraphs_and_malformed_context(tmp_path):
    same = record("a")
    other = record("b", context=[["A", ["Ann was born."]], ["B", ["Bob is a cat."]],
                                 ["E", ["", " "]]], facts=[("B", 0)])
    broken = record("c", context=[["A", "not a list"]])
    ds = load_dataset(write(tmp_path, [same, other, broken]))
    assert [d.doc_id for d in ds.documents] == ["A", "B"]
    assert ds.documents[0].text.endswith("She sings.")  # the first text is kept
    kinds = [(i.record, i.field, i.severity) for i in ds.issues]
    assert ("item 2 (id b)", "context[0]", "warning") in kinds
    assert ("item 2 (id b)", "context[2]", "warning") in kinds  # empty paragraph skipped
    assert ("item 3 (id c)", "context", "error") in kinds
    assert len(ds.examples) == 2


def test_malformed_json_is_fatal_with_line(tmp_path):
    path = tmp_path / "h.json"
    path.write_text('[{"_id": "a",\n "question": }]')
    with pytest.raises(DataError, match=r"h\.json: record line 2, field '\(json\)': invalid JSON"):
        load_dataset(path, "hotpotqa")


def test_wrong_top_level_and_missing_file(tmp_path):
    path = tmp_path / "h.json"
    path.write_text('{"data": []}')
    with pytest.raises(DataError, match="expected a JSON list of questions"):
        load_dataset(path, "hotpotqa")
    with pytest.raises(DataError, match="nope.json.*file not found"):
        load_dataset(tmp_path / "nope.json")


def test_non_utf8_bytes_skip_only_their_record(tmp_path):
    recs = [record("a", question="Café ✓?"), record("b", question="QQQ"), record("c"),
            record("d", answer="RRR")]
    data = json.dumps(recs, indent=1, ensure_ascii=False).encode()
    at_q, at_r = data.index(b"QQQ") + 1, data.index(b"RRR")
    data = data[:at_q] + b"\xff" + data[at_q + 1 : at_r] + b"\xc3\x28" + data[at_r + 2 :]
    path = tmp_path / "h.json"
    path.write_bytes(data)
    ds = load_dataset(path)
    assert [e.qid for e in ds.examples] == ["a", "c"]
    assert ds.examples[0].question == "Café ✓?"
    first, second = errors(ds)
    assert first.record == "item 2 (id b)" and first.field == "question"
    line_q, line_r = (data.count(b"\n", 0, at) + 1 for at in (at_q, at_r))
    assert f"byte {at_q} (line {line_q})" in first.message
    assert second.record == "item 4 (id d)" and second.field == "answer"
    assert f"byte {at_r} (line {line_r})" in second.message


def test_user_corpus_replaces_the_built_in_one(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"doc_id": "x", "text": "Bob is a cat. And more."}) + "\n")
    ds = load_dataset(write(tmp_path, [record("a", facts=[("B", 0)]), record("b")]), corpus=corpus)
    assert [d.doc_id for d in ds.documents] == ["x"]
    assert ds.source["corpus"] == str(corpus) and ds.source["corpus_sha256"]
    (warn,) = [i for i in ds.issues if i.field == "relevant_parts"]
    assert warn.severity == "warning" and warn.record == "item 2 (id b)"
    assert len(ds.examples) == 2  # kept
