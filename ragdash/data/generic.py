"""A user's own data as JSONL, CSV, Parquet or an Excel workbook (.xlsx, one sheet).

Dataset columns: `id`, `question`, `answer`, `relevant_parts` (`qid` and `parts` are accepted
too, as ragdash writes them), and optionally `answers`, every gold answer (a list, a JSON list in
a string, or a '||'-separated string; `answer` is kept first); every other column goes to
`Example.meta`. A dataset without a `relevant_parts` column at all loads with no parts (its
source says PARTS_ABSENT; ingest then finds evidence with `ragdash.evidence`); a column present
with a bad value still skips the record. Corpus columns: `doc_id`, `title` (optional), `text`.
Records are named `line N` (JSONL, 1-based line number), `row N` (CSV/Parquet, 1-based data
row) or `sheet 'S' row R` (.xlsx, the row number Excel shows), with `(id X)` added when the id is
known. Columns named otherwise are mapped with `columns` ({role: column},
`ragdash.data.columns`); without an id column each record's id is made from its place
(`row-N`, `line-N`, as the record is named), so it stays the same when the file is read again.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ragdash.data import spreadsheet
from ragdash.data.common import (
    BadValue,
    DocumentSet,
    IssueLog,
    Loaded,
    SeenIds,
    as_id,
    as_text,
    clean_parts,
    kind,
    non_empty,
    optional_text,
    parse_parts,
)
from ragdash.data.reading import SURROGATE, RawFile, decode, fatal
from ragdash.data.schema import PARTS_NONE, Document, Example
from ragdash.terminal import name as shown_name
from ragdash.terminal import names as shown_names

TABULAR = ("jsonl", "csv", "parquet", "xlsx")
MAX_COLUMNS = 16_384
"""The most columns a CSV header may name (Excel's own limit)."""
EXAMPLE_COLUMNS = {"id": ("id", "qid"), "question": ("question",), "answer": ("answer",),
                   "relevant_parts": ("relevant_parts", "parts"), "answers": ("answers",)}
DOCUMENT_COLUMNS = {"doc_id": ("doc_id",), "text": ("text",)}
PARTS = "relevant_parts"
ANSWERS = "answers"
PARTS_ABSENT = "absent"
"""`Dataset.source[PARTS]` of a dataset that has no relevant_parts column."""


@dataclass
class Table:
    """Rows of a tabular file: (record label, values) or (record label, BadValue(field, msg))."""

    columns: list[str]
    rows: list[tuple[str, dict | BadValue]] = field(default_factory=list)
    sheet: str | None = None  # the sheet read, for a workbook


def read_table(raw: RawFile, fmt: str, sheet: str | None = None) -> Table:
    """The rows of a JSONL/CSV/Parquet file, or of one sheet of an .xlsx workbook (`sheet`, or
    its only sheet with data)."""
    if fmt == "xlsx":
        return _xlsx(raw, sheet)
    if sheet is not None:
        raise fatal(raw.path, f"a sheet ({sheet!r}) is given but the file is {fmt}, not an .xlsx "
                              "workbook; leave out --sheet (dataset.sheet)", field="(sheet)")
    return {"jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[fmt](raw)


def _xlsx(raw: RawFile, sheet: str | None) -> Table:
    name = spreadsheet.choose_sheet(raw, sheet)
    found = spreadsheet.read_sheet(raw, name)
    table = Table(found.header, sheet=name)
    for r, cells in found.rows:
        table.rows.append((f"sheet {name!r} row {r}", dict(zip(found.header, cells,
                                                                strict=True))))
    return table


def _jsonl(raw: RawFile) -> Table:
    table, columns, pos = Table([]), {}, 0
    for n, line in enumerate(raw.data.split(b"\n"), 1):
        start, pos = pos, pos + len(line) + 1
        if n == 1 and line.startswith(b"\xef\xbb\xbf"):
            line, start = line[3:], start + 3
        label = f"line {n}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            table.rows.append((label, BadValue("(line)", "holds bytes that are not valid UTF-8, "
                                                         f"first at byte {start + exc.start}")))
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            table.rows.append((label, BadValue("(json)", f"invalid JSON: {exc.msg} "
                                                         f"(column {exc.colno})")))
            continue
        except RecursionError:
            table.rows.append((label, BadValue("(json)", "invalid JSON: nested too deeply")))
            continue
        if not isinstance(obj, dict):
            table.rows.append((label, BadValue("(record)", f"expected a JSON object, got "
                                                           f"{kind(obj)}")))
            continue
        columns.update(dict.fromkeys(obj))
        table.rows.append((label, obj))
    table.columns = list(columns)
    return table


def _csv(raw: RawFile) -> Table:
    text = decode(raw.data)
    reader = csv.reader(io.StringIO(text.text, newline=""))
    # documents can exceed the default 128 KiB cell limit; raised for good (it is process-wide,
    # and restoring it could race with another thread's read)
    csv.field_size_limit(2**31 - 1)
    n = 0
    try:
        header = next(reader, None)
        if header is None:
            raise fatal(raw.path, "the file is empty; expected a header row", "header")
        if any(SURROGATE.search(c) for c in header):
            raise fatal(raw.path, f"holds bytes that are not valid UTF-8 at "
                                  f"{text.where(sum(len(SURROGATE.findall(c)) for c in header))}",
                        "header")
        if len(header) > MAX_COLUMNS:
            raise fatal(raw.path, f"the header has {len(header):,} columns, more than "
                                  f"{MAX_COLUMNS:,}, the limit of a table: keep the columns "
                                  "you need", "header", "(header)")
        header = [c.strip() for c in header]
        dupes = sorted(c for c, n in Counter(header).items() if n > 1)
        if dupes:
            raise fatal(raw.path, f"column(s) {dupes} appear more than once", "header", dupes[0])
        table = Table(header)
        for cells in reader:
            if not cells:
                continue
            n += 1
            label = f"row {n}"
            bad = [i for i, c in enumerate(cells) if SURROGATE.search(c)]
            if bad:
                count = sum(len(SURROGATE.findall(cells[i])) for i in bad)
                col = header[bad[0]] if bad[0] < len(header) else "(row)"
                table.rows.append((label, BadValue(col, "holds bytes that are not valid UTF-8, "
                                                        f"first at {text.where(count)}")))
            elif len(cells) != len(header):
                table.rows.append((label, BadValue("(row)", f"has {len(cells)} fields, the "
                                                            f"header has {len(header)}")))
            else:
                table.rows.append((label, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise fatal(raw.path, f"not valid CSV: {exc}", f"row {n + 1}") from None
    return table


def _parquet(raw: RawFile) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        arrow = pq.read_table(pa.BufferReader(raw.data))
        records = arrow.to_pylist()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise fatal(raw.path, f"not a readable Parquet file: {exc}") from None
    return Table(list(arrow.column_names),
                 [(f"row {n}", rec) for n, rec in enumerate(records, 1)])


def _columns(table: Table, wanted: dict[str, tuple[str, ...]], file: str,
             optional: tuple[str, ...] = (), given: Mapping[str, str] | None = None
             ) -> dict[str, str]:
    """Map each required column to the name the file uses (`given` {role: column} first);
    DataError naming a missing one (an `optional` one that is missing is left out of the
    map)."""
    found = {}
    for name, column in (given or {}).items():
        if column not in table.columns:
            raise fatal(file, f"column {shown_name(column)}, given for the {name} (--columns, "
                              f"dataset.columns), is not in the file; columns found: "
                              f"{shown_names(table.columns)}", "header", name)
        found[name] = column
    for name, aliases in wanted.items():
        if name in found:
            continue
        hit = next((a for a in aliases if a in table.columns), None)
        if hit is None and name in optional:
            continue
        if hit is None:
            also = f" (or {', '.join(repr(a) for a in aliases[1:])})" if aliases[1:] else ""
            hint = ("; say which column holds what with --columns question=COLUMN,"
                    "answer=COLUMN (dataset.columns), or map them on the Data page"
                    if wanted is EXAMPLE_COLUMNS else "")
            raise fatal(file, f"required column {name!r}{also} is missing; columns found: "
                              f"{shown_names(table.columns)}{hint}", "header", name)
        found[name] = hit
    return found


def made_id(label: str) -> str:
    """The id of a record of a file without an id column, from its place as its label names
    it: `row 7` and `sheet 'S' row 7` give `row-7`, `line 3` gives `line-3`."""
    m = re.search(r"\b(line|row) (\d+)$", label)
    if m is None:
        raise ValueError(f"no row or line number in the record label {label!r}")
    return f"{m.group(1)}-{m.group(2)}"


def _cell_problem(values: dict, cols: dict[str, str], log: IssueLog, label: str) -> bool:
    """Log the first unreadable cell (a workbook's formula without a value or error value) of
    a used column as the record's error (True); one of another column is kept empty, with a
    warning."""
    for column, value in list(values.items()):
        if not isinstance(value, BadValue):
            continue
        if column in cols.values():
            log.error(label, column, str(value))
            return True
        log.warn(label, column, f"{value}; the cell is read as empty")
        values[column] = None
    return False


def load_examples(raw: RawFile, fmt: str, log: IssueLog, *, limit: int | None = None,
                  sheet: str | None = None, columns: Mapping[str, str] | None = None) -> Loaded:
    """The examples of a JSONL/CSV/Parquet/.xlsx dataset file (the first `limit` valid ones),
    its columns mapped by `columns` ({role: column}) where given."""
    table = read_table(raw, fmt, sheet)
    if not table.rows:
        raise fatal(raw.path, "holds no record" + (f" in sheet {table.sheet!r}"
                                                   if table.sheet else ""))
    usable = any(isinstance(values, dict) for _, values in table.rows)
    cols = (_columns(table, EXAMPLE_COLUMNS, log.file, optional=("id", PARTS, ANSWERS),
                     given=columns) if usable else {})
    out, seen = Loaded(), SeenIds()
    if table.sheet is not None:
        out.extra["sheet"] = table.sheet
    if columns:
        out.extra["columns"] = dict(columns)
    if usable and "id" not in cols:
        log.warn("-", "id", "the dataset has no id column: each question's id is made from "
                            "its row (row-N, as the validation report names the record)")
    if usable and PARTS not in cols:
        out.extra[PARTS] = PARTS_ABSENT
        log.warn("-", PARTS, "the dataset has no relevant_parts column: ragdash finds evidence "
                             "in the corpus for each question (`ragdash evidence`, or "
                             "automatically at ingest)")
    for label, values in table.rows:
        if limit is not None and len(out.examples) >= limit:
            break
        out.records += 1
        if isinstance(values, BadValue):
            log.error(label, *values.args)
            continue
        if _cell_problem(values, cols, log, label):
            continue
        name = cols.get("id", "id")
        try:
            qid = as_id(values.get(name)) if "id" in cols else made_id(label)
            label = f"{label} (id {qid})"
            name = cols["question"]
            question = non_empty(values.get(name))
            name = cols.get(PARTS, PARTS)
            parts = _parts(values, cols, log, label)
            name = cols["answer"]
            answer = optional_text(values.get(name))
            name = ANSWERS
            answers = _answers(values.get(cols[ANSWERS])) if ANSWERS in cols else []
        except BadValue as exc:
            log.error(label, name, str(exc))
            continue
        if not answer.strip() and answers:
            answer = answers[0]  # `answers` alone names the gold answers
        if not answer.strip():
            log.warn(label, cols["answer"], "answer is empty")
        if seen.is_duplicate(qid, label, log, cols.get("id", "id")):
            continue
        meta = {k: v for k, v in values.items() if k not in cols.values()}
        out.examples.append(Example(qid, question, answer, parts, meta, tuple(answers)))
        out.labels.append(label)
    return out


def _answers(value: object) -> list[str]:
    """A record's gold answers: none when the cell is missing or empty, else a list, a JSON list
    in a string or a '||'-separated string of texts. Raises BadValue otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or (
            isinstance(value, str) and not value.strip()):
        return []
    try:
        items = parse_parts(value)
    except BadValue as exc:
        raise BadValue(f"expected a list of gold answers: {exc}") from None
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, str | int | float) or item != item:
            raise BadValue(f"item {i} is {kind(item)}, expected text")
        out.append(as_text(item))
    return [a for a in out if a.strip()]


def _parts(values: dict, cols: dict[str, str], log: IssueLog, label: str) -> list[str]:
    """A record's relevant parts ([] when the file has no parts column); a record written
    without evidence by `ragdash evidence` (parts_source "none") says why."""
    if PARTS not in cols:
        return []
    name = cols[PARTS]
    try:
        return clean_parts(parse_parts(values.get(name)), log, label, name)
    except BadValue:
        if values.get("parts_source") == PARTS_NONE:
            raise BadValue(f"no evidence was found for this question ("
                           f"{values.get('parts_note') or 'no reason given'}); it is left "
                           "out") from None
        raise


def parts_absent(raw: RawFile, fmt: str, sheet: str | None = None,
                 columns: Mapping[str, str] | None = None) -> bool:
    """Whether a JSONL/CSV/Parquet/.xlsx dataset file has records but no relevant_parts column
    (none mapped by `columns` either)."""
    table = read_table(raw, fmt, sheet)
    names = (columns or {}).get(PARTS), *EXAMPLE_COLUMNS[PARTS]
    return bool(table.rows) and not any(a in table.columns for a in names if a)


def load_documents(raw: RawFile, fmt: str, log: IssueLog) -> list[Document]:
    """The documents of a JSONL/CSV/Parquet corpus file."""
    table = read_table(raw, fmt)
    if any(isinstance(values, dict) for _, values in table.rows):
        _columns(table, DOCUMENT_COLUMNS, log.file)
    docs = DocumentSet(log, strict=True)
    for label, values in table.rows:
        if isinstance(values, BadValue):
            log.error(label, *values.args)
            continue
        name = "doc_id"
        try:
            doc_id = as_id(values.get(name))
            label = f"{label} (doc_id {doc_id})"
            name = "title"
            title = optional_text(values.get(name))
            name = "text"
            text = as_text(values.get(name))
        except BadValue as exc:
            log.error(label, name, str(exc))
            continue
        docs.add(Document(doc_id, title, text), label)
    return docs.documents()
