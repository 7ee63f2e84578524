"""Excel workbooks as datasets and column mapping: located errors (sheet, row, column), the
refusals of unsafe or broken files, made ids, and `ragdash run` on a mapped .xlsx end to end."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import openpyxl
import pytest
from fixtures.corpus import DOCS, QUESTIONS

from ragdash.config import ConfigError, load_config
from ragdash.data import DataError, load_dataset
from ragdash.data import spreadsheet as xl
from ragdash.data.columns import guess, parse_columns
from ragdash.data.generic import made_id
from ragdash.data.reading import read_file
from ragdash.rundir import Run

HEADER = ["Nr", "Frage", "Antwort"]
MAPPED = {"question": "Frage", "answer": "Antwort"}


def workbook(path, sheets: dict[str, list[list]], merge: str | None = None):
    """Write an .xlsx with one sheet per item (rows as given); `merge` merges cells of the
    first sheet."""
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    if merge:
        wb.worksheets[0].merge_cells(merge)
    wb.save(path)
    return path


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for doc_id, _, text in DOCS:
        (folder / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    return folder


def questions_sheet() -> list[list]:
    return [HEADER, *[[i, q, a] for i, (_, q, a, _) in enumerate(QUESTIONS, 1)]]


def load(path, corpus, **kw):
    return load_dataset(path, corpus=corpus, **kw)


def errors(dataset) -> list[tuple[str, str, str]]:
    return [(i.record, i.field, i.message) for i in dataset.issues if i.severity == "error"]


def test_mapped_sheet_loads_with_ids_made_from_the_row(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"Notes": [["about"]], "Fragen": [
        ["Title of the sheet"], [], HEADER[1:],  # a title line above the header is skipped
        *[[q, a] for _, q, a, _ in QUESTIONS]]})
    ds = load(path, corpus, sheet="Fragen", columns=MAPPED)
    assert [e.qid for e in ds.examples] == ["row-4", "row-5", "row-6", "row-7"]
    assert ds.examples[0].question == QUESTIONS[0][1] and ds.examples[0].answer == QUESTIONS[0][2]
    assert ds.source["sheet"] == "Fragen" and ds.source["columns"] == MAPPED
    assert ds.source["relevant_parts"] == "absent"
    assert any(i.field == "id" and "row-N" in i.message for i in ds.issues)
    # reading again gives the same ids; a given id column wins over made ones
    again = load(path, corpus, sheet="Fragen", columns=MAPPED)
    assert [e.qid for e in again.examples] == [e.qid for e in ds.examples]


def test_id_column_mapped_and_standard_names_need_no_mapping(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"S": questions_sheet()})
    ds = load(path, corpus, columns={**MAPPED, "id": "Nr"})
    assert [e.qid for e in ds.examples] == ["1", "2", "3", "4"]
    plain = workbook(tmp_path / "plain.xlsx", {"S": [["id", "question", "answer"],
                                                     ["a", "Q?", "A"]]})
    assert [e.qid for e in load(plain, corpus).examples] == ["a"]


def test_several_sheets_need_a_name_and_an_unknown_one_lists_them(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"A": questions_sheet(), "B": questions_sheet(),
                                          "Empty": []})
    with pytest.raises(DataError, match=r"2 sheets with data: \['A', 'B'\]; choose one with "
                                        "--sheet") as exc:
        load(path, corpus, columns=MAPPED)
    assert exc.value.issue.field == "(sheet)"
    with pytest.raises(DataError, match=r"no sheet named 'C'; its sheets: \['A', 'B', 'Empty'\]"):
        load(path, corpus, sheet="C", columns=MAPPED)
    with pytest.raises(DataError, match="sheet 'Empty' is empty"):
        load(path, corpus, sheet="Empty", columns=MAPPED)
    # the only sheet with data is taken without a name
    one = workbook(tmp_path / "one.xlsx", {"Empty": [], "Data": questions_sheet()})
    assert load(one, corpus, columns=MAPPED).source["sheet"] == "Data"
    assert xl.sheet_names(read_file(one)) == [("Empty", False), ("Data", True)]


def test_missing_column_names_what_to_map(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"S": questions_sheet()})
    with pytest.raises(DataError, match=r"required column 'question' is missing; columns found: "
                                        r"\['Nr', 'Frage', 'Antwort'\]; say which column holds "
                                        "what with --columns"):
        load(path, corpus)
    with pytest.raises(DataError, match=r"column 'Answer', given for the answer .* is not in the "
                                        "file"):
        load(path, corpus, columns={"question": "Frage", "answer": "Answer"})


def test_empty_rows_are_skipped_and_rows_keep_the_sheet_numbers(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"S": [
        HEADER, [1, "Where was Alan Turing born?", "Maida Vale, London"], [], [None, None, None],
        [2, "   ", "Lord Byron"], [3, "Whose daughter was Ada Lovelace?", "Lord Byron"]]})
    ds = load(path, corpus, columns=MAPPED)
    assert [e.qid for e in ds.examples] == ["row-2", "row-6"]
    assert errors(ds) == [("sheet 'S' row 5 (id row-5)", "Frage", "is empty")]


def test_formula_cached_value_is_read_and_one_without_value_is_located(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"S": [
        HEADER, [1, "What is two and two?", "=2+2"], [2, "Whose daughter was Ada Lovelace?",
                                                      "Lord Byron"]]})
    ds = load(path, corpus, columns=MAPPED)
    (record, field, message), = errors(ds)
    assert (record, field) == ("sheet 'S' row 2", "Antwort")
    assert "cell C2 holds a formula with no stored value (=2+2)" in message
    # the value Excel stored with the formula is what is read
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = next(n for n in parts if n.startswith("xl/worksheets/sheet"))
    parts[sheet] = parts[sheet].replace(b"<f>2+2</f><v></v>", b"<f>2+2</f><v>4</v>")
    assert b"<v>4</v>" in parts[sheet]
    stored = tmp_path / "stored.xlsx"
    with zipfile.ZipFile(stored, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    ds = load(stored, corpus, columns=MAPPED)
    assert not errors(ds) and ds.examples[0].answer == "4"


def test_cell_types_become_text_and_error_values_are_located(tmp_path, corpus):
    path = workbook(tmp_path / "q.xlsx", {"S": [
        [*HEADER, "Note"], [1, "When was it signed?", dt.datetime(1879, 3, 14), 2.5],
        [2, 1234, 3.0, True], [3, "At what time?", dt.datetime(2024, 1, 2, 14, 30), None],
        [4, "Share?", 0.1 + 0.2, "#DIV/0!"], [5, "Broken?", "#N/A", None]]})
    ds = load(path, corpus, columns=MAPPED)
    got = {e.qid: (e.question, e.answer, e.meta.get("Note")) for e in ds.examples}
    assert got["row-2"] == ("When was it signed?", "1879-03-14", "2.5")
    assert got["row-3"] == ("1234", "3", "TRUE")
    assert got["row-4"][1] == "2024-01-02 14:30:00"
    assert got["row-5"][1:] == ("0.3", None)  # 15 significant digits, as Excel shows it
    assert "row-6" not in got
    assert ("sheet 'S' row 6", "Antwort", "cell C6 holds the error value #N/A") in errors(ds)
    assert any(i.record == "sheet 'S' row 5" and i.field == "Note" and "#DIV/0!" in i.message
               and i.severity == "warning" for i in ds.issues)


def test_merged_empty_and_duplicate_headers_are_refused(tmp_path, corpus):
    merged = workbook(tmp_path / "m.xlsx", {"S": [["Frage", None, "Antwort"], ["Q?", "x", "A"]]},
                      merge="A1:B1")
    with pytest.raises(DataError, match="header cells A1:B1 are merged") as exc:
        load(merged, corpus, columns=MAPPED)
    assert exc.value.issue.record == "sheet 'S' row 1"
    empty = workbook(tmp_path / "e.xlsx", {"S": [["Frage", None, "Antwort"], ["Q?", "x", "A"]]})
    with pytest.raises(DataError, match="header cell B1 is empty but its column holds values"):
        load(empty, corpus, columns=MAPPED)
    gap = workbook(tmp_path / "g.xlsx", {"S": [["Frage", None, "Antwort"], ["Q?", None, "A"]]})
    assert load(gap, corpus, columns=MAPPED).examples[0].meta == {}  # an unused empty column
    beyond = workbook(tmp_path / "b.xlsx", {"S": [["Frage", "Antwort"], ["Q?", "A", "extra"]]})
    with pytest.raises(DataError, match="header cell C1 is empty"):
        load(beyond, corpus, columns=MAPPED)
    dupes = workbook(tmp_path / "d.xlsx", {"S": [["Frage", "Antwort", "Frage"], ["Q?", "A", "B"]]})
    with pytest.raises(DataError, match=r"column\(s\) \['Frage'\] appear more than once"):
        load(dupes, corpus, columns=MAPPED)


def test_broken_encrypted_and_bomb_files_are_refused(tmp_path, corpus):
    good = workbook(tmp_path / "good.xlsx", {"S": questions_sheet()}).read_bytes()
    cases = {
        "text.xlsx": (b"id,question,answer\n1,Q,A\n", "not a valid zip file"),
        "cut.xlsx": (good[: len(good) // 2], "not a valid zip file"),
        "ole.xlsx": (xl.OLE_MAGIC + b"\0" * 600, "encrypted .password-protected. workbook or "
                                                 "an old .xls"),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "not a workbook")
    cases["zip.xlsx"] = (buf.getvalue(), "no xl/workbook.xml")
    with zipfile.ZipFile(io.BytesIO(good)) as src:
        parts = {n: src.read(n) for n in src.namelist()}
    damaged = io.BytesIO()
    with zipfile.ZipFile(damaged, "w") as z:
        for n, data in parts.items():
            z.writestr(n, b"<not xml" if n == "xl/workbook.xml" else data)
    cases["damaged.xlsx"] = (damaged.getvalue(), "damaged .xlsx workbook")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in parts.items():
            z.writestr(n, data)
        z.writestr("xl/media/padding.bin", b"\0" * (64 * 1024**2))
    cases["bomb.xlsx"] = (bomb.getvalue(), "decompression bomb")
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DataError, match=message):
            load(tmp_path / name, corpus, columns=MAPPED)


def test_too_large_a_sheet_is_refused(tmp_path, corpus, monkeypatch):
    path = workbook(tmp_path / "q.xlsx", {"S": questions_sheet()})
    monkeypatch.setattr(xl, "MAX_CELLS", 10)
    with pytest.raises(DataError, match="sheet 'S' is too large: more than .* 10 cells"):
        load(path, corpus, columns=MAPPED)


def test_sheet_or_mapping_where_they_do_not_apply(tmp_path, corpus, generic):
    ds, _ = generic
    with pytest.raises(DataError, match="file is jsonl, not an .xlsx workbook"):
        load(ds, corpus, sheet="S")
    with pytest.raises(DataError, match="a corpus is"):
        load(ds, workbook(tmp_path / "c.xlsx", {"S": [["doc_id", "text"], ["d", "x"]]}))


def test_csv_columns_mapped_with_made_ids(tmp_path, corpus):
    path = tmp_path / "q.csv"
    path.write_text("Frage,Antwort,Thema\n" + "".join(
        f'"{q}","{a}",computing\n' for _, q, a, _ in QUESTIONS), encoding="utf-8")
    ds = load(path, corpus, columns=MAPPED)
    assert [e.qid for e in ds.examples] == ["row-1", "row-2", "row-3", "row-4"]
    assert ds.examples[1].answer == "Lord Byron" and ds.examples[1].meta == {"Thema": "computing"}
    assert made_id("line 7") == "line-7" and made_id("sheet 'x row 1' row 12") == "row-12"


def test_columns_config_key_parses_and_refuses_bad_mappings(tmp_path):
    assert parse_columns("question=Frage, answer = Antwort,id=Nr") == {
        "question": "Frage", "answer": "Antwort", "id": "Nr"}
    assert parse_columns({"question": "Q", "answer": "A"}) == {"question": "Q", "answer": "A"}
    assert parse_columns("") is None
    for bad, message in [("question=Q", "must name the answer column"),
                         ("question=Q,answer=Q", "'Q' is given for more than one role"),
                         ("question=Q,answer=A,topic=T", "unknown role 'topic'"),
                         ("Frage", "'Frage' is not ROLE=COLUMN")]:
        with pytest.raises(ConfigError, match=message):
            load_config(None, {"dataset.columns": bad})
    cfg = load_config(None, {"dataset.columns": "question=Frage,answer=Antwort",
                             "dataset.sheet": "Fragen"})
    assert cfg["dataset"]["columns"] == MAPPED and cfg["dataset"]["sheet"] == "Fragen"


def test_guess_reads_header_names():
    assert guess(["Nr", "Frage", "Antwort", "Datum"]) == {
        "question": "Frage", "answer": "Antwort", "id": "Nr"}
    assert guess(["Ticket ID", "Customer question", "Agent answer"]) == {
        "question": "Customer question", "answer": "Agent answer", "id": "Ticket ID"}
    assert guess(["Data", "Notes"]) == {"question": None, "answer": None, "id": None}


def test_cli_runs_a_mapped_workbook_end_to_end(tmp_path, corpus, capsys):
    from ragdash.cli import main

    path = workbook(tmp_path / "questions.xlsx", {"Notes": [["see the other sheet"]],
                                                  "Fragen": [HEADER[1:], *[
                                                      [q, a] for _, q, a, _ in QUESTIONS]]})
    run_dir = tmp_path / "run"
    args = ["run", "--dataset", str(path), "--corpus", str(corpus), "--retrievers", "bm25",
            "--chunker", "recursive", "--budgets", "20:60:20", "--run-dir", str(run_dir), "-q"]
    assert main([*args, "--columns", "question=Frage,answer=Antwort"]) == 2  # two sheets
    assert "choose one with --sheet" in capsys.readouterr().err
    assert main([*args, "--columns", "question=Frage,answer=Antwort", "--sheet", "Fragen"]) == 0
    run = Run(run_dir)
    assert run.manifest["source"]["sheet"] == "Fragen"
    examples = run.read("examples")
    assert examples["qid"].tolist() == ["row-2", "row-3", "row-4", "row-5"]
    gold = {q: p for q, _, _, p in QUESTIONS}
    found = dict(zip(examples["qid"], examples["parts"], strict=True))
    # the evidence stage found the sentence holding each verbatim answer
    assert list(found["row-2"]) == gold["q1"] and list(found["row-5"]) == gold["q4"]
    assert run.read("ir_scores")["score"].max() > 0


def test_sheet_and_columns_options_set_the_dataset_keys():
    import argparse

    from ragdash.cli import build_parser, overrides_from
    from ragdash.cli import evidence as command

    args = build_parser().parse_args(["run", "--dataset", "q.xlsx", "--sheet", "Fragen",
                                      "--columns", "question=Frage,answer=Antwort"])
    o = overrides_from(args)
    assert o["dataset.sheet"] == "Fragen"
    assert o["dataset.columns"] == "question=Frage,answer=Antwort"
    cfg = load_config(None, o)
    assert cfg["dataset"]["columns"] == MAPPED and cfg["dataset"]["sheet"] == "Fragen"
    sub = argparse.ArgumentParser().add_subparsers()
    ev = command.add_parser(sub).parse_args(["--dataset", "q.xlsx", "-o", "out.jsonl",
                                             "--sheet", "S", "--columns", "question=Q,answer=A"])
    assert {k: v for k, v in command._overrides(ev).items() if k.startswith("dataset.")} == {
        "dataset.path": "q.xlsx", "dataset.sheet": "S", "dataset.columns": "question=Q,answer=A",
        "dataset.format": "auto"}
