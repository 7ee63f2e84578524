"""Issue 46, items 5, 6, 8 and 10 and the minor items about inputs: a workbook's sheets are read
within one sheet's bounds (a row numbered far past the limit is refused by its number, the
sheets examined for data share the bounds, openpyxl no longer parses every sheet to size it); a
CSV header is bounded and checked for duplicates in linear time; JSON nested too deeply is one
record's or one reply's located error; a labels CSV's columns are bounded before pandas parses
it; `label export` checks --n and --seed; pipes and devices are refused by name (a dataset, a
labels file) or listed as skipped (a folder corpus); zips are bounded in entries before their
directory is read, CRAG files in pages; exported cells are neutralised behind blanks and
invisible characters too. Every workbook is written by hand, a few KB on disk."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import openpyxl.worksheet._reader as openpyxl_reader
import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings

from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.data import DataError, crag, generic, load_corpus, load_dataset, textfiles
from ragdash.data import spreadsheet as xl
from ragdash.data.common import IssueLog
from ragdash.data.readers import Unreadable, read_document, word
from ragdash.data.reading import decode, loads, read_file
from ragdash.data.rgb import load_fact
from ragdash.labels import exchange, store
from ragdash.llm.generate import generate
from ragdash.llm.judge import Candidate, JudgeItem, ScoreParseError, judge, parse_scores
from ragdash.rundir import Run

NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
RNS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
DEEP = 5_000  # levels of nesting: past the JSON parser's recursion limit
DEMO = PROJECT_ROOT / "data" / "demo_squad"


def xlsx(path: Path, parts: dict[str, str], sheets: list[tuple[str, str]] | None = None,
         extra: int = 0) -> Path:
    """A workbook written by hand: `parts` {worksheet part: the XML inside its <sheetData>},
    `sheets` (title, part) in order (default: one sheet per part; several may name one part),
    `extra` more empty zip entries."""
    sheets = sheets or [(f"S{i}", p) for i, p in enumerate(parts, 1)]
    rid = {p: f"rId{i}" for i, p in enumerate(parts, 1)}
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/>' + "".join(
                f'<Override PartName="/xl/{p}" ContentType="application/vnd.openxmlformats-'
                'officedocument.spreadsheetml.worksheet+xml"/>' for p in parts) + "</Types>"))
        z.writestr("_rels/.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>"))
        z.writestr("xl/workbook.xml", f"<workbook {NS} {RNS}><sheets>" + "".join(
            f'<sheet name="{t}" sheetId="{i}" r:id="{rid[p]}"/>'
            for i, (t, p) in enumerate(sheets, 1)) + "</sheets></workbook>")
        z.writestr("xl/_rels/workbook.xml.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            + "".join(f'<Relationship Id="{rid[p]}" Type="{rel}/worksheet" Target="{p}"/>'
                      for p in parts) + "</Relationships>"))
        for p, rows in parts.items():
            z.writestr(f"xl/{p}", f"<worksheet {NS}><sheetData>{rows}</sheetData></worksheet>")
        for i in range(extra):
            z.writestr(f"xl/media/extra{i}.bin", b"")
    return path


def cells(r: int, *values: str) -> str:
    """A row of inline-string cells."""
    return f'<row r="{r}">' + "".join(
        f'<c r="{chr(65 + i)}{r}" t="inlineStr"><is><t>{v}</t></is></c>'
        for i, v in enumerate(values)) + "</row>"


def within(seconds: float, fn: Callable[[], object]) -> tuple[object, float]:
    """(what `fn` returned or raised, seconds taken), run in a thread; fails the test when it
    is still running after `seconds` (the thread is left behind, a daemon)."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            out["value"] = exc

    t0 = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert "value" in out, f"still running after {seconds} s"
    return out["value"], time.monotonic() - t0


def deep(levels: int = DEEP) -> str:
    return "[" * levels + "]" * levels


# --- item 5: a workbook is read within one sheet's bounds ---------------------------------------

def test_a_row_numbered_far_past_the_limit_is_refused_by_its_number_at_once(tmp_path):
    """`<row r="1000000000000"/>` in a 1 KB workbook: openpyxl would yield an empty row per
    skipped number (a core pinned for ever). Finding the sheets with data (the Data page's
    sheet choice) stops at it at once and offers the sheet; reading it refuses it by its number,
    naming the sheet, the row and the limit."""
    path = xlsx(tmp_path / "gap.xlsx", {"worksheets/sheet1.xml": '<row r="1000000000000"/>'})
    assert path.stat().st_size < 2048
    raw = read_file(path)
    got, _ = within(10, lambda: xl.sheet_names(raw))
    assert got == [("S1", True)]
    for read in (lambda: xl.read_sheet(raw, "S1"),
                 lambda: generic.read_table(raw, "xlsx")):  # the loader: the only sheet
        got, _ = within(10, read)
        assert isinstance(got, DataError), got
        assert got.issue.record == "sheet 'S1' row 1000000000000"
        assert "row numbered 1,000,000,000,000, past 1,048,576" in got.issue.message


def test_a_sheet_with_data_above_a_far_row_is_refused_too(tmp_path):
    path = xlsx(tmp_path / "gap.xlsx", {"worksheets/sheet1.xml": (
        cells(1, "question", "answer") + cells(2, "Q?", "A") + '<row r="3000000"/>')})
    got, _ = within(10, lambda: xl.read_sheet(read_file(path), "S1"))
    assert isinstance(got, DataError) and got.issue.record == "sheet 'S1' row 3000000"


def test_the_sheets_examined_for_data_share_one_sheets_bounds(tmp_path, monkeypatch):
    """Sheets pointing at one part of empty rows: finding the sheets with data reads at most one
    sheet's rows in all; the sheets it could not examine are offered, to be named."""
    monkeypatch.setattr(xl, "MAX_ROWS", 1_000)
    rows = "".join(f'<row r="{i}"/>' for i in range(1, 301))
    path = xlsx(tmp_path / "many.xlsx", {"worksheets/sheet1.xml": rows},
                [(f"S{i}", "worksheets/sheet1.xml") for i in range(1, 6)])
    raw = read_file(path)
    parsed = Counter()
    parse_row = openpyxl_reader.WorkSheetParser.parse_row

    def counted(self, row):
        parsed["rows"] += 1
        return parse_row(self, row)

    monkeypatch.setattr(openpyxl_reader.WorkSheetParser, "parse_row", counted)
    assert xl.sheet_names(raw) == [("S1", False), ("S2", False), ("S3", False), ("S4", True),
                                   ("S5", True)]
    assert parsed["rows"] == 1_001
    with pytest.raises(DataError, match=r"has 2 sheets with data: \['S4', 'S5'\]; choose one "
                                        "with --sheet"):
        xl.choose_sheet(raw, None)
    # a sheet named is read alone, within its own bounds
    assert xl.choose_sheet(raw, "S5") == "S5"
    with pytest.raises(DataError, match="sheet 'S5' is empty"):
        xl.read_sheet(raw, "S5")


def test_the_cells_of_a_sheet_are_bounded_on_every_path(tmp_path, monkeypatch):
    monkeypatch.setattr(xl, "MAX_CELLS", 50)
    path = xlsx(tmp_path / "wide.xlsx", {"worksheets/sheet1.xml": '<row r="1"><c r="ZZ1"/></row>'})
    raw = read_file(path)
    assert xl.sheet_names(raw) == [("S1", True)]
    with pytest.raises(DataError, match="more than 1,048,576 rows or 50 cells read") as exc:
        xl.read_sheet(raw, "S1")
    assert exc.value.issue.record == "sheet 'S1' row 1"


def test_a_damaged_sheet_is_a_located_error(tmp_path):
    path = xlsx(tmp_path / "bad.xlsx", {"worksheets/sheet1.xml": (
        cells(1, "question", "answer") + '<row r="x2"/>')})
    raw = read_file(path)
    assert xl.sheet_names(raw) == [("S1", True)]
    with pytest.raises(DataError, match=r"sheet 'S1' is damaged and cannot be read "
                                        r"\(ValueError: .*'x2'\)") as exc:
        xl.read_sheet(raw, "S1")
    assert exc.value.issue.record == "sheet 'S1' after row 1"


def test_opening_a_workbook_parses_no_sheet_to_size_it(tmp_path, monkeypatch):
    """openpyxl sizes every sheet without a <dimension> by parsing its XML to the end of its
    data, each time the workbook is opened (1,000 sheets pointing at one of 1M rows: 1G rows);
    ragdash sets sheets up without it."""
    calls = Counter()
    size = openpyxl_reader.WorkSheetParser.parse_dimensions

    def counted(self):
        calls["sized"] += 1
        return size(self)

    monkeypatch.setattr(openpyxl_reader.WorkSheetParser, "parse_dimensions", counted)
    rows = cells(1, "question", "answer") + cells(2, "Q?", "A")
    path = xlsx(tmp_path / "named.xlsx", {"worksheets/sheet1.xml": rows},
                [(f"S{i}", "worksheets/sheet1.xml") for i in range(1, 51)])
    raw = read_file(path)
    assert xl.choose_sheet(raw, "S7") == "S7"
    assert xl.read_sheet(raw, "S7").rows == [(2, ["Q?", "A"])]
    assert calls["sized"] == 0


def test_a_workbook_of_too_many_sheets_is_refused_before_any_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(xl, "MAX_SHEETS", 5)
    path = xlsx(tmp_path / "sheets.xlsx", {"worksheets/sheet1.xml": cells(1, "a", "b")},
                [(f"S{i}", "worksheets/sheet1.xml") for i in range(6)])
    for read in (xl.sheet_names, lambda raw: xl.choose_sheet(raw, "S1")):
        with pytest.raises(DataError, match="has 6 sheets, more than 5, the limit of a "
                                            "workbook") as exc:
            read(read_file(path))
        assert exc.value.issue.field == "(sheet)"


def test_a_workbook_of_too_many_parts_is_refused_before_its_directory_is_read(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setattr(xl, "MAX_PARTS", 20)
    path = xlsx(tmp_path / "parts.xlsx", {"worksheets/sheet1.xml": cells(1, "a", "b")},
                extra=20)
    with pytest.raises(DataError, match=r"has 25 parts \(zip entries\), more than 20"):
        xl.sheet_names(read_file(path))


def test_a_sheet_still_reads_as_before(tmp_path):
    """Rows keep their numbers (a gap is no row), a title line is skipped, a row numbered below
    one before it is dropped as openpyxl drops it."""
    path = xlsx(tmp_path / "ok.xlsx", {"worksheets/sheet1.xml": (
        cells(1, "Title") + cells(3, "question", "answer") + cells(7, "Q1?", "A1")
        + cells(5, "dropped", "x") + cells(9, "Q2?", "A2"))})
    raw = read_file(path)
    assert xl.sheet_names(raw) == [("S1", True)]
    got = xl.read_sheet(raw, "S1")
    assert (got.header_row, got.header) == (3, ["question", "answer"])
    assert got.rows == [(7, ["Q1?", "A1"]), (9, ["Q2?", "A2"])]


# --- item 6: a CSV header is bounded, its duplicates found in linear time ----------------------

def test_a_csv_header_over_the_column_limit_is_refused_with_its_place(tmp_path):
    n = generic.MAX_COLUMNS + 1
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("x" * n) + "\n")
    with pytest.raises(DataError) as exc:
        generic.read_table(read_file(path), "csv")
    issue = exc.value.issue
    assert (issue.file, issue.record, issue.field) == (str(path), "header", "(header)")
    assert f"the header has {n:,} columns, more than {generic.MAX_COLUMNS:,}" in issue.message


def test_a_header_at_the_limit_is_read_and_its_duplicates_named(tmp_path):
    n = generic.MAX_COLUMNS
    names = [f"c{i}" for i in range(n - 2)] + ["c7", "c9"]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(names) + "\n" + ",".join("x" * n) + "\n")
    t0 = time.monotonic()
    with pytest.raises(DataError, match=r"column\(s\) \['c7', 'c9'\] appear more than once"):
        generic.read_table(read_file(path), "csv")
    assert time.monotonic() - t0 < 10
    names[-2:] = ["last1", "last2"]
    path.write_text(",".join(names) + "\n" + ",".join("x" * n) + "\n")
    assert len(generic.read_table(read_file(path), "csv").columns) == n


# --- item 8: JSON nested too deeply is one record's or one reply's error ----------------------

def test_loads_turns_deep_nesting_into_a_located_value_error():
    with pytest.raises(ValueError, match=r"line 3: nested too deeply \(more than about"):
        loads(deep(), "line 3")
    with pytest.raises(json.JSONDecodeError):
        loads("[1,")
    assert loads(deep(10)) == json.loads(deep(10))


@pytest.mark.parametrize("backend", ["openai", "ollama"])
def test_a_deeply_nested_reply_is_that_questions_error(backend):
    """A 400 KB reply of nested lists: the generate stage goes on, the question has the error."""
    body = deep(200_000).encode()
    with FakeLLMServer(default=Reply(raw=body, content_type="application/json")) as srv:
        out = generate([("q1", "llm_only", None, "Capital of France?", None)],
                       fast_settings(srv, backend, retries=0, timeout_s=30.0))
    assert out["answer"].isna().all()
    assert "not a chat response (its JSON is nested too deeply to parse)" in out["error"][0]


def test_a_deeply_nested_judge_reply_is_that_calls_error():
    with pytest.raises(ScoreParseError, match="the reply's JSON is nested too deeply"):
        parse_scores('{"scores": ' + deep() + "}", 1)
    item = JudgeItem("q1", "Who wrote Hamlet?", "Shakespeare", ["Hamlet is by Shakespeare."],
                     [Candidate("llm_only", "Shakespeare")])
    with FakeLLMServer(default='{"scores": ' + deep() + "}") as srv:
        out = judge([item], fast_settings(srv, retries=0, max_tokens=20_000), shuffle=False,
                    max_corrections=0)
    assert out["score"].isna().all()
    assert "nested too deeply" in out["error"][0]


def test_a_deeply_nested_relevant_parts_cell_is_that_rows_error(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "turing.txt").write_text("He was born in Maida Vale, London.", encoding="utf-8")
    path = tmp_path / "q.csv"
    path.write_text("id,question,answer,relevant_parts\n"
                    f'q1,Where?,London,"{deep()}"\n'
                    'q2,Where?,London,"[""He was born in Maida Vale, London.""]"\n')
    ds = load_dataset(path, corpus=folder)
    assert [e.qid for e in ds.examples] == ["q2"]
    (issue,) = [i for i in ds.issues if i.severity == "error"]
    assert (issue.record, issue.field) == ("row 1 (id q1)", "relevant_parts")
    assert "looks like a JSON list but is not valid JSON: nested too deeply" in issue.message


def test_a_deeply_nested_crag_line_is_that_lines_error():
    good = {"interaction_id": "b", "query": "Q?", "answer": "A", "search_results": [],
            "alternative_answers": deep()}
    log = IssueLog("crag.jsonl")
    loaded = crag.load(decode(f"{deep()}\n{json.dumps(good)}\n".encode()), log)
    assert [e.qid for e in loaded.examples] == ["b"]
    assert loaded.examples[0].answers == ("A", deep())  # kept as one answer, as text
    (issue,) = [i for i in log.issues if i.severity == "error"]
    assert (issue.record, issue.field) == ("line 1", "(record)")
    assert "is not valid JSON: nested too deeply" in issue.message


def test_a_deeply_nested_rgb_line_is_that_lines_error(tmp_path):
    good = {"id": 1, "query": "Q?", "answer": ["A"], "fakeanswer": "B",
            "positive_wrong": ["B it is."], "positive": ["A it is."], "negative": []}
    path = tmp_path / "fact.json"
    path.write_text(f"{deep()}\n{json.dumps(good)}\n", encoding="utf-8")
    records, issues = load_fact(path)
    assert [r.qid for r in records] == ["1"]
    (issue,) = issues
    assert (issue.file, issue.record) == (str(path), "line 1")
    assert "nested too deeply" in issue.message


# --- item 10: a labels CSV's columns are bounded before pandas parses it ----------------------

def test_a_labels_file_over_the_column_limit_is_refused_from_its_header(tmp_path):
    """The header alone is read (2M empty columns took 72 s and 4 GB in pandas)."""
    path = tmp_path / "wide.csv"
    n = exchange.MAX_IMPORT_COLUMNS - 2
    path.write_text("qid,system,label" + "," * n + "\nq1,s,correct" + "," * n + "\n")
    with pytest.raises(exchange.LabelFileError) as exc:
        exchange._read(path, 100)
    (issue,) = exc.value.issues
    assert (issue.record, issue.field) == ("header", "columns")
    assert f"the header has {n + 3:,} columns, over the limit of 1,000" in issue.message
    path.write_text("qid;system;label" + ";" * n + "\n")  # the same with ; as the separator
    with pytest.raises(exchange.LabelFileError, match="columns, over the limit"):
        exchange._read(path, 100)
    path.write_text("qid,system,label,comment\nq1,s,correct,fine\n")
    assert exchange._read(path, 100).to_dict("records") == [
        {"qid": "q1", "system": "s", "label": "correct", "comment": "fine"}]


def test_a_labels_file_that_is_not_utf8_names_the_byte(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"\xef\xbb\xbfqid,system,label\nq\xe9,s,correct\n")
    with pytest.raises(exchange.LabelFileError, match=r"not UTF-8 text \(a bad byte at offset "
                                                      r"21\)"):
        exchange._read(path, 100)


# --- minor: pipes, devices, --n and --seed ------------------------------------------------------

@pytest.fixture
def fifo(tmp_path):
    """A named pipe no one writes to (opening it to read would wait for ever); released after
    the test, so that a reader left waiting ends."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    made: list[Path] = []

    def make(path: Path) -> Path:
        os.mkfifo(path)
        made.append(path)
        return path

    yield make
    for path in made:  # a reader still blocked in open() gets an end of file
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_a_pipe_or_a_device_as_a_dataset_is_refused_by_name(tmp_path, fifo):
    pipe = fifo(tmp_path / "questions.jsonl")
    for path in (pipe, Path("/dev/zero")):
        got, took = within(10, lambda p=path: load_dataset(p, fmt="jsonl"))
        assert isinstance(got, DataError), got
        assert got.issue.file == str(path)
        assert "is not a regular file (a pipe, a device or a socket)" in got.issue.message
    got, _ = within(10, lambda: load_dataset(pipe))  # the format detected from its name first
    assert isinstance(got, DataError) and "not a regular file" in got.issue.message


def test_a_labels_file_that_is_a_pipe_is_refused_by_name(tmp_path, fifo):
    got, _ = within(10, lambda: exchange._read(fifo(tmp_path / "labels.csv"), 100))
    assert isinstance(got, exchange.LabelFileError)
    assert "is not a regular file" in str(got)


def test_a_pipe_in_a_folder_corpus_is_listed_as_skipped(tmp_path, fifo):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Alan Turing was born in Maida Vale.", encoding="utf-8")
    fifo(folder / "pipe.txt")
    fifo(folder / "pipe")
    (folder / "link.txt").symlink_to(folder / "pipe")
    got, _ = within(10, lambda: load_corpus(folder))
    docs, issues = got
    assert [d.doc_id for d in docs] == ["a.txt"]
    skipped = {i.record: i.message for i in issues if i.severity == "error"}
    assert set(skipped) == {"file link.txt", "file pipe", "file pipe.txt"}
    assert all("is not a regular file (a pipe, a socket or a device)" in m
               for m in skipped.values())
    assert "1 of 4 file(s) read into documents; 3 skipped (3 special files)" in issues[0].message


def test_two_names_not_in_utf8_are_counted_in_good_grammar():
    said = textfiles._summary(3, Counter({"file name not in UTF-8": 2}), [])
    assert "2 skipped (2 file names not in UTF-8)" in said


@pytest.fixture
def run(tmp_path) -> Run:
    if not (DEMO / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    copy = Run(shutil.copytree(DEMO, tmp_path / "demo"))
    for name in ("labels", "label_sample"):
        copy.file(name).unlink(missing_ok=True)
    return copy


@pytest.mark.parametrize(("option", "value"), [("--n", "0"), ("--n", "-3"),
                                               ("--seed", str(10**29)), ("--seed", "-5")])
def test_label_export_refuses_a_bad_size_or_seed_by_name(run, tmp_path, capsys, option, value):
    out = tmp_path / "sample.csv"
    with pytest.raises(SystemExit) as exc:
        main(["label", "export", "--run-dir", str(run.path), "-o", str(out), option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}:" in err and "Traceback" not in err
    assert not out.exists() and not run.has("label_sample")


def test_the_library_refuses_a_seed_it_cannot_store(run):
    with pytest.raises(ValueError, match="the seed must be a whole number from 0 to"):
        store.draw_sample(run, 5, seed=10**29)
    with pytest.raises(ValueError, match="the sample size must be a positive whole number, "
                                         "got 0"):
        exchange.ensure_sample(run, 0)


# --- minor: zips bounded in entries, CRAG files in pages ---------------------------------------

def test_a_corpus_zip_of_too_many_entries_is_refused_before_its_directory_is_read(
        tmp_path, monkeypatch):
    monkeypatch.setattr(textfiles, "MAX_ZIP_ENTRIES", 10)
    path = tmp_path / "docs.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(11):
            z.writestr(f"d{i}/", "")
    with pytest.raises(DataError, match=r"holds 11 entries \(files and folders\), more than "
                                        "10, the most a corpus zip may hold"):
        load_corpus(path)


def test_a_docx_of_too_many_parts_is_skipped_before_its_directory_is_read(monkeypatch):
    monkeypatch.setattr(word, "MAX_PARTS", 10)
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        for i in range(11):
            z.writestr(f"word/media/i{i}.png", b"")
    with pytest.raises(Unreadable, match=r"is a \.docx file of 11 parts \(zip entries\), more "
                                         "than 10"):
        read_document("a.docx", data.getvalue())


def test_a_crag_file_is_read_with_a_bounded_number_of_pages(monkeypatch):
    monkeypatch.setattr(crag, "MAX_PAGES", 3)
    page = {"page_name": "P", "page_result": ""}  # counted, never parsed
    lines = [json.dumps({"interaction_id": f"q{i}", "query": "Q?", "answer": "A",
                         "search_results": [page, page]}) for i in range(3)]
    log = IssueLog("crag.jsonl")
    with pytest.raises(DataError) as exc:
        crag.load(decode("\n".join(lines).encode()), log)
    issue = exc.value.issue
    assert (issue.file, issue.record, issue.field) == ("crag.jsonl", "line 2",
                                                       "search_results[1]")
    assert "more than 3 pages (search_results) in all" in issue.message
    # no corpus built (a corpus is given): no page is read, none counted
    assert len(crag.load(decode("\n".join(lines).encode()), IssueLog("c"),
                         build_corpus=False).examples) == 3


def test_a_crag_page_that_is_not_text_is_a_warning():
    record = {"interaction_id": "q", "query": "Q?", "answer": "A",
              "search_results": [{"page_name": "P", "page_result": 5}]}
    log = IssueLog("crag.jsonl")
    crag.load(decode(json.dumps(record).encode()), log)
    assert any(i.field == "search_results[0].page_result" and "not text" in i.message
               for i in log.issues)


# --- minor: formulas behind blanks and invisible characters -----------------------------------

@pytest.mark.parametrize("lead", [" ", "  ", "\u00a0", "\u200b", "\ufeff", "\u2060", " \u200b",
                                  "\u3000"])
def test_a_formula_behind_blanks_or_invisible_characters_is_neutralised(lead):
    for text in (f"{lead}=HYPERLINK(\"http://evil.example\")", f"ok;{lead}+1", f"{lead}@SUM(A1)"):
        out = exchange.cell(text)
        assert exchange.uncell(out) == text
        for segment in exchange._segments(out):
            body = segment.lstrip(" \u00a0\u200b\ufeff\u2060\u3000")
            assert not body.startswith(exchange.FORMULA_START), (text, out)
    assert exchange.cell(" plain") == " plain" and exchange.cell("\u00a0x") == "\u00a0x"


# --- minor: a .docx with one huge text node; a redirect to file:// --------------------------------


def test_a_docx_with_one_huge_run_of_text_is_too_large_not_corrupt():
    import docx

    small = io.BytesIO()
    doc = docx.Document()
    doc.add_paragraph("PLACEHOLDER")
    doc.save(small)
    big = io.BytesIO()
    with zipfile.ZipFile(small) as src, zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"PLACEHOLDER", b"x" * 10_100_000)
            out.writestr(info, data)
    with pytest.raises(Unreadable) as exc:
        read_document("big.docx", big.getvalue())
    assert exc.value.reason == "file too large", exc.value
    assert "10,000,000 characters in one piece" in str(exc.value)
    assert "corrupt" not in str(exc.value)


def test_a_redirect_to_file_is_named_as_such_not_a_server_that_is_down():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ragdash.llm.factory import raw_backend
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import LLMError

    class ToFile(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", "file:///etc/passwd")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), ToFile)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        backend = raw_backend(LLMSettings(
            backend="openai", model="m", retries=0,
            base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1"))
        with pytest.raises(LLMError) as exc:
            backend.chat([{"role": "user", "content": "hi"}])
    finally:
        srv.shutdown()
    assert "not http(s)" in str(exc.value) and "file://" in str(exc.value)
    assert "is the server running" not in str(exc.value)
    assert exc.value.kind == "bad_request" and not exc.value.retryable
