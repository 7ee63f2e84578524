"""Malformed inputs through the command line, one case each: the run stops with one line that
names the file (and the record and field where there is one), or skips the bad record with a
warning that names them; never a traceback, and a finished run directory is never damaged."""

from __future__ import annotations

import gzip
import json
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from ragdash.cli import main

DOCS = [{"doc_id": "turing", "title": "Alan Turing",
         "text": "Alan Turing was an English mathematician. He was born in Maida Vale, London."},
        {"doc_id": "lovelace", "title": "Ada Lovelace",
         "text": "Ada Lovelace was an English writer. She was the daughter of the poet Lord "
                 "Byron."}]
GOOD = [{"id": "q1", "question": "Where was Turing born?", "answer": "London",
         "relevant_parts": ["He was born in Maida Vale, London."]},
        {"id": "q2", "question": "Whose daughter was Ada?", "answer": "Byron",
         "relevant_parts": ["She was the daughter of the poet Lord Byron."]}]


def jl(rows: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def write(d: Path, name: str, content: str | bytes) -> Path:
    p = d / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8", newline="")
    return p


def corpus(d: Path, rows: list | None = None) -> Path:
    return write(d, "corpus.jsonl", jl(DOCS if rows is None else rows))


def ingest(d: Path, dataset: Path, *extra: str, corp: Path | None = None) -> list[str]:
    return ["ingest", "--dataset", str(dataset), "--corpus", str(corp or corpus(d)),
            "--run-dir", str(d / "run"), "-q", *extra]


def with_config(d: Path, yaml: str, *extra: str) -> list[str]:
    conf = write(d, "c.yaml", yaml)
    return ["ingest", "--config", str(conf), *ingest(d, write(d, "qa.jsonl", jl(GOOD)))[1:],
            *extra]


def zipped(d: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    p = d / "corpus.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return p


def _symlink_zip(d: Path) -> Path:
    link = zipfile.ZipInfo("link.txt")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    return zipped(d, [("a.txt", b"Alan Turing was born in London."), (link, b"/etc/passwd")])


def _parquet(d: Path) -> Path:
    p = d / "qa.parquet"
    pd.DataFrame({"id": [1, 2], "question": [1.5, 2.5], "answer": [3, 4],
                  "relevant_parts": [[1.5], [2.5]]}).to_parquet(p)
    return p


def _gz_truncated(d: Path) -> Path:
    data = gzip.compress(jl(GOOD * 200).encode())
    return write(d, "qa.jsonl.gz", data[: len(data) // 2])


# (case id, build(dir) -> CLI args, exit code, substrings of the message, examples kept)
CASES: list[tuple[str, Callable[[Path], list[str]], int, tuple[str, ...], int | None]] = []


def case(cid: str, code: int, *needles: str, examples: int | None = None):
    """Register a case; `examples`: how many questions a run that goes on keeps."""
    def register(build):
        CASES.append((cid, build, code, needles, examples if code == 0 else None))
        return build
    return register


# --- the dataset file -----------------------------------------------------------------------


@case("empty-file", 2, "qa.jsonl", "holds no record")
def _(d):
    return ingest(d, write(d, "qa.jsonl", ""))


@case("whitespace-only", 2, "qa.jsonl", "holds no record")
def _(d):
    return ingest(d, write(d, "qa.jsonl", "  \n\n\t \n"))


@case("utf8-bom", 0, examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", "\ufeff" + jl(GOOD)))


@case("crlf-line-endings-csv", 0, examples=2)
def _(d):
    rows = ["id,question,answer,relevant_parts",
            "q1,Where was Turing born?,London,He was born in Maida Vale. London.",
            "q2,Whose daughter was Ada?,Byron,She was the daughter of the poet Lord Byron."]
    return ingest(d, write(d, "qa.csv", "\r\n".join(rows) + "\r\n"),
                  corp=corpus(d, [{**DOCS[0], "text": "He was born in Maida Vale. London."},
                                  DOCS[1]]))


@case("quoted-newline-in-csv", 0, examples=1)
def _(d):
    return ingest(d, write(d, "qa.csv", 'id,question,answer,relevant_parts\nq1,"Where was\nTuring '
                           'born?",London,He was born in Maida Vale. London.\n'))


@case("relevant-part-of-1-MB", 0, "q3", "relevant_parts[0]", "1,000,000 characters long",
      "50,000", examples=2)
def _(d):
    big = {"id": "q3", "question": "What is said?", "answer": "word", "relevant_parts":
           ["word " * 200_000]}
    return ingest(d, write(d, "qa.jsonl", jl([*GOOD, big])))


@case("question-too-long", 0, "q3", "question", "the question is 60,000 characters long",
      examples=2)
def _(d):
    big = {"id": "q3", "question": "why " * 15_000, "answer": "Byron",
           "relevant_parts": GOOD[1]["relevant_parts"]}
    return ingest(d, write(d, "qa.jsonl", jl([*GOOD, big])))


@case("answer-too-long", 0, "q3", "answer", "the answer is 100,000 characters long",
      examples=2)
def _(d):
    big = {"id": "q3", "question": "Who?", "answer": "Byron" * 20_000,
           "relevant_parts": GOOD[1]["relevant_parts"]}
    return ingest(d, write(d, "qa.jsonl", jl([*GOOD, big])))


@case("parts-as-bare-string", 0, examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "relevant_parts":
                                                GOOD[0]["relevant_parts"][0]}, GOOD[1]])))


@case("number-as-question", 0, examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "question": 42}, GOOD[1]])))


@case("null-question", 0,
      "qa.jsonl: record line 1 (id q1), field 'question': is missing", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "question": None}, GOOD[1]])))


@case("null-in-parts", 0,
      "record line 1 (id q1), field 'relevant_parts': item 0 is null", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "relevant_parts": [None]}, GOOD[1]])))


@case("empty-parts-list", 0, "field 'relevant_parts': has no relevant part", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "relevant_parts": []}, GOOD[1]])))


@case("answer-as-list", 0, "field 'answer': expected text, got a list", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "answer": ["a", "b"]}, GOOD[1]])))


@case("five-mb-single-line-field", 0, "the question is 5,000,000 characters long", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "question": "x" * 5_000_000},
                                              GOOD[1]])))


@case("invalid-json-line", 0, "record line 2, field '(json)': invalid JSON", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD[:1]) + "{not json\n" + jl(GOOD[1:])))


@case("json-array-in-a-jsonl-file", 2, "qa.jsonl", "record line 1", "expected a JSON o")
def _(d):
    return ingest(d, write(d, "qa.jsonl", json.dumps(GOOD)))


@case("duplicate-question-ids", 0,
      "record line 2 (id q1), field 'id': duplicate id 'q1'", examples=1)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([GOOD[0], {**GOOD[1], "id": "q1"}])))


@case("missing-column-csv", 2, "qa.csv", "question")
def _(d):
    return ingest(d, write(d, "qa.csv", "id,answer,relevant_parts\nq1,London,x\n"))


@case("csv-row-with-extra-fields", 0,
      "record row 2, field '(row)': has 6 fields, the header has 4", examples=1)
def _(d):
    return ingest(d, write(d, "qa.csv", "id,question,answer,relevant_parts\n"
                           "q1,Where was Turing born?,London,He was born in Maida Vale. London.\n"
                           "q2,a,b,c,d,e\n"))


@case("non-utf8-bytes", 0,
      "record line 3, field '(line)': holds bytes that are not valid UTF-8", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD).encode() + b'{"id": "q3", "question": "caf\xe9'
                           b'?", "answer": "x", "relevant_parts": ["y"]}\n'))


@case("truncated-gz", 2, "qa.jsonl.gz", "is not a valid gzip file")
def _(d):
    return ingest(d, _gz_truncated(d))


@case("gz-decompression-bomb", 2, "qa.jsonl.gz", "refused as a likely decompression bomb")
def _(d):
    return ingest(d, write(d, "qa.jsonl.gz", gzip.compress(b" " * 48 * 1024**2, 1)))


@case("parquet-wrong-column-types", 2, "qa.parquet", "record row 1 (id 1), field 'relevant_parts'")
def _(d):
    return ingest(d, _parquet(d))


@case("part-found-in-no-document", 0,
      "record line 1 (id q1), field 'relevant_parts': 1 of 1 relevant part(s) occur verbatim "
      "in no corpus document", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl([{**GOOD[0], "relevant_parts": ["Not in any doc."]},
                                              GOOD[1]])))


@case("dataset-does-not-exist", 2, "nope.jsonl", "file not found")
def _(d):
    return ingest(d, d / "nope.jsonl")


@case("dataset-is-a-folder", 2, "folder.jsonl", "is a folder, expected a file")
def _(d):
    (d / "folder.jsonl").mkdir()
    return ingest(d, d / "folder.jsonl")


@case("unknown-format-name", 2, "dataset.format must be one of auto, hotpotqa, squad")
def _(d):
    return [*ingest(d, write(d, "qa.jsonl", jl(GOOD))), "--format", "xml"]


@case("squad-format-for-a-jsonl-file", 2,
      "qa.jsonl", "read as 'squad' because the format was given")
def _(d):
    return [*ingest(d, write(d, "qa.jsonl", jl(GOOD))), "--format", "squad"]


# --- the corpus -------------------------------------------------------------------------------


@case("corpus-does-not-exist", 2, "missing.jsonl", "file not found")
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)), corp=d / "missing.jsonl")


@case("empty-corpus", 2, "c.jsonl", "the corpus holds no usable document")
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)), corp=write(d, "c.jsonl", ""))


@case("duplicate-doc-ids", 0,
      "corpus.jsonl: record line 3 (doc_id turing), field 'doc_id': duplicate doc id", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)), corp=corpus(d, [*DOCS, DOCS[0]]))


@case("corpus-without-text-column", 2,
      "corpus.jsonl", "field 'text': required column 'text' is missing")
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)),
                  corp=corpus(d, [{"doc_id": x["doc_id"], "body": x["text"]} for x in DOCS]))


@case("corpus-row-with-empty-text", 0,
      "record line 3 (doc_id e), field 'text': document 'e' has an empty text", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)),
                  corp=corpus(d, [*DOCS, {"doc_id": "e", "title": "E", "text": ""}]))


@case("zip-with-parent-path-entries", 0, "corpus.zip", "../evil.txt", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)), corp=zipped(d, [
        ("../evil.txt", b"He was born in Maida Vale, London."),
        ("ok.txt", b"She was the daughter of the poet Lord Byron.")]))


@case("zip-with-a-symlink", 0, "corpus.zip", "link.txt", examples=2)
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)), corp=_symlink_zip(d))


@case("highly-compressed-zip", 2, "corpus.zip", "uncompressed")
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)),
                  corp=zipped(d, [(f"big{i}.txt", b"a" * 60_000_000) for i in range(5)]))


@case("corrupt-zip", 2, "corpus.zip", "not a readable zip file")
def _(d):
    return ingest(d, write(d, "qa.jsonl", jl(GOOD)),
                  corp=write(d, "corpus.zip", b"PK\x03\x04 this is not a zip"))


# --- the configuration and the command line ---------------------------------------------------


@case("misspelled-nested-config-key", 2,
      "c.yaml", "unknown key 'retrievers.param'; did you mean 'retrievers.params'?")
def _(d):
    return with_config(d, "retrievers:\n  param:\n    bm25: {k: 3}\n")


@case("unknown-top-level-config-key", 2, "c.yaml", "unknown key 'chunkr'; did you mean 'chunker'?")
def _(d):
    return with_config(d, "chunkr: {method: none}\n")


@case("budgets-not-a-range", 2, "budgets: 'abc' is not a whole number of tokens")
def _(d):
    return with_config(d, "budgets: abc\n")


@case("budgets-zero", 2, "budgets must be positive integers")
def _(d):
    return with_config(d, "budgets: 0\n")


@case("too-many-budgets", 2, "gives 40,000,000 budgets; at most 200")
def _(d):
    return with_config(d, "budgets: '1:40000000:1'\n")


@case("negative-limit", 2, "dataset.limit must be a positive integer")
def _(d):
    return with_config(d, "dataset: {limit: -1}\n")


@case("limit-not-a-number", 2, "dataset.limit must be a whole number, not 'ten'")
def _(d):
    return with_config(d, "dataset: {limit: ten}\n")


@case("retrievers-use-a-number", 2, "retrievers.use must be a list of retriever names")
def _(d):
    return with_config(d, "retrievers: {use: 5}\n")


@case("chunker-a-string", 2, "c.yaml", "'chunker' must be a mapping")
def _(d):
    return with_config(d, "chunker: none\n")


@case("dataset-a-list", 2, "c.yaml", "'dataset' must be a mapping")
def _(d):
    return with_config(d, "dataset: [a, b]\n")


@case("relevance-share-not-a-number", 2, "scoring.relevance_share must be a number, not 'half'")
def _(d):
    return with_config(d, "scoring: {relevance_share: half}\n")


@case("unknown-chunker", 2, "chunker.method: unknown method 'paragraphs'")
def _(d):
    return [*ingest(d, write(d, "qa.jsonl", jl(GOOD))), "--chunker", "paragraphs"]


@case("unknown-retriever", 2, "retrievers.use: unknown ['colbert']")
def _(d):
    return [*ingest(d, write(d, "qa.jsonl", jl(GOOD))), "--retrievers", "bm25,colbert"]


@case("missing-tokenizer-path", 2, "tokenizer:", "tok.json", "is neither one of")
def _(d):
    return [*ingest(d, write(d, "qa.jsonl", jl(GOOD))), "--tokenizer", str(d / "tok.json")]


@case("yaml-syntax-error", 2, "c.yaml is not valid YAML (line 2, column 1)")
def _(d):
    return with_config(d, "budgets: [100, 200\n")


@case("config-not-a-mapping", 2, "c.yaml must hold a mapping at the top level")
def _(d):
    return with_config(d, "- a\n- b\n")


@case("config-file-missing", 2, "none.yaml does not exist")
def _(d):
    return ["ingest", "--config", str(d / "none.yaml")]


@case("run-dir-is-a-file", 2, "run: File exists")
def _(d):
    args = ingest(d, write(d, "qa.jsonl", jl(GOOD)))
    write(d, "run", "a file")
    return args


def test_there_are_at_least_forty_cases():
    assert len(CASES) >= 40 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(("cid", "build", "code", "needles", "examples"), CASES,
                         ids=[c[0] for c in CASES])
def test_malformed_input(tmp_path, capsys, cid, build, code, needles, examples):
    args = build(tmp_path)
    rc = main(args)
    out, err = capsys.readouterr()
    text = out + err
    assert "Traceback" not in text, text
    assert rc == code, text
    if code:
        lines = [x for x in err.splitlines() if x.startswith("ragdash: error:")]
        assert len(lines) == 1, err  # one line
        text = lines[0]
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    if examples is not None:
        assert len(pd.read_parquet(tmp_path / "run" / "examples.parquet")) == examples
