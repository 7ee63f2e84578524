"""Excel workbooks (.xlsx, Office Open XML) as datasets: one sheet read into the rows of a table.

The workbook is read with openpyxl in read-only mode, values only (the values Excel stored when
it last computed each formula); nothing is executed and external links are not followed. The
header is the first row naming two columns or more (a title line above it is skipped); a record
is named `sheet 'S' row R` with R the row number Excel shows, and a problem cell also by its
reference (`cell B7`). Every cell becomes text the
way a reader would write it (numbers without a trailing `.0`, dates as ISO `2024-03-01`), so a
sheet loads exactly as the same table saved as CSV would.

Refused with a located `DataError`: a file that is not a zip (an encrypted workbook or an old
.xls is an OLE file), a corrupt one, one that inflates like a decompression bomb
(`reading.check_inflation`), one with a part (each checked alone, so that an incompressible part
cannot hide a bomb in another) over MAX_PART_BYTES unpacked or holding more than
MAX_SHARED_STRINGS shared strings, one of more than MAX_PARTS parts (counted before the zip's
directory is read) or MAX_SHEETS sheets, a sheet over MAX_ROWS rows (by its rows' numbers: a gap
is never walked) or MAX_CELLS cells, XML openpyxl cannot read, merged or empty header cells and
duplicate column names. Finding the sheets with data (`sheet_names`) reads all of them within
one sheet's bounds. Kept with a located error on its row: a formula without a stored value and
an error value (`#DIV/0!`).
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ragdash.data.common import BadValue
from ragdash.data.reading import RawFile, check_inflation, fatal, zip_entries
from ragdash.data.schema import DataError

MAX_ROWS = 1_048_576  # Excel's own limit; a sheet claiming more is not a real workbook
MAX_CELLS = 10_000_000  # cells read (empty ones inside the used area included)
MAX_SHEETS = 1_000  # sheets of a workbook; all of them are read within one sheet's bounds
MAX_PARTS = 20_000  # zip entries of a workbook, counted before its directory is parsed
MAX_PART_BYTES = 256 * 1024**2  # one part (a sheet's XML, the shared strings) unpacked
MAX_SHARED_STRINGS = 1_000_000  # <si> elements of a part: openpyxl keeps each in memory
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted .xlsx and old .xls files
_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\s+ref="([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?"')
_FORMULA = re.compile(rb"<(?:\w+:)?f[\s>/]")
_STRING = re.compile(rb"<(?:[A-Za-z_][\w.-]{0,40}:)?si[\s/>]")  # a shared string starts
_TAG_ROOM = 64  # the longest _STRING match, with room to spare
_BLOCK = 1024**2  # parts are streamed in blocks of this size
_ERROR = re.compile(r"#(?:DIV/0!|N/A|NAME\?|NULL!|NUM!|REF!|VALUE!|SPILL!|CALC!|GETTING_DATA)")


def _column_letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


class _TooManySheets(Exception):
    """Raised by the reader before any sheet is set up: the workbook names `count` sheets."""

    def __init__(self, count: int):
        super().__init__(count)
        self.count = count


@functools.cache
def _reader() -> type:
    """openpyxl's workbook reader, changed in one way: in read-only mode it sets up a sheet
    without reading its size, which openpyxl finds by parsing the sheet's XML up to the end of
    its data when there is no <dimension> (every sheet of a workbook, each time it is opened: 1,000
    sheets pointing at one sheet of 1M rows is 1G rows). Nothing here uses the stored size
    (`_rows` reads the rows the sheet holds). _TooManySheets past MAX_SHEETS."""
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    class Sheet(ReadOnlyWorksheet):
        def _get_size(self) -> None:
            """No size: the stored one may be wrong, and finding it may read the whole sheet."""

    class Reader(ExcelReader):
        def read_worksheets(self) -> None:
            sheets = list(self.parser.find_sheets())
            if len(sheets) > MAX_SHEETS:
                raise _TooManySheets(len(sheets))
            if not self.read_only:
                super().read_worksheets()
                return
            valid = set(self.valid_files)
            for sheet, rel in sheets:
                if rel.target not in valid:
                    continue
                if "chartsheet" in rel.Type:
                    self.read_chartsheet(sheet, rel)
                    continue
                ws = Sheet(self.wb, sheet.name, rel.target, self.shared_strings)
                ws.sheet_state = sheet.state
                self.wb._sheets.append(ws)  # noqa: SLF001 (as openpyxl's own reader does)

    return Reader


def _open(raw: RawFile, data_only: bool = True) -> Any:
    """The workbook in read-only mode; DataError when the file is not a readable workbook."""
    if raw.data.startswith(OLE_MAGIC):
        raise fatal(raw.path, "is an encrypted (password-protected) workbook or an old .xls "
                              "file: open it in Excel or LibreOffice and save it as .xlsx "
                              "without a password")
    if (parts := zip_entries(raw.data)) > MAX_PARTS:
        raise fatal(raw.path, f"has {parts:,} parts (zip entries), more than {MAX_PARTS:,}, the "
                              "limit of a workbook: save the sheet as CSV or split the workbook")
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw.data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise fatal(raw.path, f"is not an .xlsx workbook (not a valid zip file: {exc})") from None
    check_inflation(raw.path, len(raw.data), sum(i.file_size for i in infos), "the workbook ")
    if "xl/workbook.xml" not in archive.namelist():
        raise fatal(raw.path, "is a zip file but not an .xlsx workbook (it has no "
                              "xl/workbook.xml)")
    _check_parts(raw, archive, infos)
    try:
        reader = _reader()(io.BytesIO(raw.data), read_only=True, data_only=data_only,
                           keep_links=False)
        reader.read()
        return reader.wb
    except _TooManySheets as exc:
        raise fatal(raw.path, f"has {exc.count:,} sheets, more than {MAX_SHEETS:,}, the limit "
                              "of a workbook: save the sheet with the questions as a workbook "
                              "of its own or as CSV", field="(sheet)") from None
    except Exception as exc:  # openpyxl raises many kinds on a damaged file  # noqa: BLE001
        raise fatal(raw.path, f"is a damaged .xlsx workbook that cannot be read "
                              f"({type(exc).__name__}: {exc})") from None


def _part_too_large(raw: RawFile, name: str) -> DataError:
    return fatal(raw.path, f"has a part, {name}, that unpacks to more than {MAX_PART_BYTES:,} "
                           "bytes, the limit of one part of a workbook: save the sheet as CSV "
                           "or split the workbook")


def _strings(raw: RawFile, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Stream one XML part, counting its bytes (the directory's size may understate them) and
    its shared strings; DataError past MAX_PART_BYTES or MAX_SHARED_STRINGS."""
    size, count, tail = 0, 0, b""
    with archive.open(info) as f:
        while block := f.read(_BLOCK):
            size += len(block)
            if size > MAX_PART_BYTES:
                raise _part_too_large(raw, info.filename)
            data = tail + block
            cut = data.rfind(b"<", max(len(data) - _TAG_ROOM, 0))  # a tag that may go on
            cut = len(data) if cut < 0 else cut
            count += len(_STRING.findall(data, 0, cut))
            tail = data[cut:]
            if count > MAX_SHARED_STRINGS:
                raise fatal(raw.path, f"has a part, {info.filename}, holding more than "
                                      f"{MAX_SHARED_STRINGS:,} shared strings (<si> elements), "
                                      "the limit of a workbook: save the sheet as CSV or split "
                                      "the workbook")


def _check_parts(raw: RawFile, archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> None:
    """Bound each part before openpyxl reads any (the whole file's ratio does not: a stored,
    incompressible part can hide a bomb in another): sizes from the directory first, then each
    XML part streamed (`_strings`)."""
    for info in infos:
        if info.file_size > MAX_PART_BYTES:
            raise _part_too_large(raw, info.filename)
    for info in infos:
        if not info.filename.lower().endswith((".xml", ".rels")):
            continue  # media and other binary parts: never parsed
        try:
            _strings(raw, archive, info)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError,
                RuntimeError) as exc:
            raise fatal(raw.path, f"is a damaged .xlsx workbook that cannot be read (part "
                                  f"{info.filename}: {exc})") from None


@dataclass
class _Budget:
    """Rows and cells read so far, against MAX_ROWS and MAX_CELLS: one sheet's for
    `read_sheet`, all the sheets examined for `sheet_names`."""

    rows: int = 0
    cells: int = 0

    @property
    def spent(self) -> bool:
        return self.rows > MAX_ROWS or self.cells > MAX_CELLS


def _too_large(raw: RawFile, name: str, what: str, record: str) -> DataError:
    return fatal(raw.path, f"sheet {name!r} is too large: {what}; split it or save it as CSV",
                 record, "(sheet)")


def _rows(raw: RawFile, ws: Any, budget: _Budget) -> Iterator[tuple[int, list[dict]]]:
    """(row number, cells) of each row element of a sheet, in order, without the empty rows
    openpyxl fills a gap with (`<row r="1000000000000"/>` is one row, refused at once by its
    number); each cell a dict of openpyxl's parser (row, column, value, data_type). A row
    numbered below one before it is skipped, as openpyxl does. DataError, located, once a row
    number passes MAX_ROWS, once the rows or cells read (`budget`, shared by the caller) pass
    MAX_ROWS or MAX_CELLS (the cells of a row counted up to its last one, empty ones included),
    and on XML openpyxl cannot read."""
    from openpyxl.worksheet._reader import WorkSheetParser  # the parser openpyxl's rows use

    wb, name, last = ws.parent, ws.title, 0
    with ws._get_source() as src:  # noqa: SLF001 (read-only sheets have no other way)
        parser = WorkSheetParser(src, ws._shared_strings, data_only=wb.data_only,  # noqa: SLF001
                                 epoch=wb.epoch, date_formats=wb._date_formats,  # noqa: SLF001
                                 timedelta_formats=wb._timedelta_formats)  # noqa: SLF001
        rows = parser.parse()
        while True:
            try:
                number, cells = next(rows)
            except StopIteration:
                return
            except Exception as exc:  # openpyxl raises many kinds on damaged XML  # noqa: BLE001
                raise fatal(raw.path, f"sheet {name!r} is damaged and cannot be read "
                                      f"({type(exc).__name__}: {exc})",
                            f"sheet {name!r} after row {last}", "(sheet)") from None
            if number > MAX_ROWS:
                raise _too_large(raw, name, f"it has a row numbered {number:,}, past "
                                            f"{MAX_ROWS:,}, the most rows a sheet has",
                                 f"sheet {name!r} row {number}")
            if number <= last:
                continue
            last = number
            budget.rows += 1
            budget.cells += cells[-1]["column"] if cells else 0
            if budget.spent:
                raise _too_large(raw, name, f"more than {MAX_ROWS:,} rows or {MAX_CELLS:,} "
                                            "cells read", f"sheet {name!r} row {number}")
            yield number, cells


def _values(cells: list[dict]) -> list[object]:
    """The values of a row's cells by column, None where a cell is empty (to its last cell)."""
    values: list[object] = [None] * (cells[-1]["column"] if cells else 0)
    for c in cells:
        if 1 <= c["column"] <= len(values):
            values[c["column"] - 1] = c["value"]
    return values


def _has_data(raw: RawFile, ws: Any, budget: _Budget) -> bool:
    """Whether a sheet holds a value, reading its rows until the first one (`_rows`)."""
    return any(c["value"] is not None and c["value"] != ""
               for _, cells in _rows(raw, ws, budget) for c in cells)


def sheet_names(raw: RawFile) -> list[tuple[str, bool]]:
    """(name, whether it may hold a value) of each sheet of a workbook, in the workbook's
    order. The sheets together are read within one sheet's bounds (MAX_ROWS, MAX_CELLS): once
    they are spent, the sheets left are not examined; those, and a sheet over its bounds or
    damaged, are given as possibly holding values (reading one says why it cannot be read)."""
    wb = _open(raw)
    try:
        budget, out = _Budget(), []
        for ws in wb.worksheets:
            try:
                data = budget.spent or _has_data(raw, ws, budget)
            except DataError:  # too large or damaged: `read_sheet` says which, located
                data = True
            out.append((ws.title, data))
        return out
    finally:
        wb.close()


def choose_sheet(raw: RawFile, sheet: str | None) -> str:
    """The sheet to read: `sheet` when the workbook has it, else its only sheet with data;
    DataError listing the names when `sheet` is missing or several sheets hold data."""
    if sheet is not None:
        wb = _open(raw)
        try:
            names = [ws.title for ws in wb.worksheets]
        finally:
            wb.close()
        if sheet not in names:
            raise fatal(raw.path, f"has no sheet named {sheet!r}; its sheets: {names}",
                        field="(sheet)")
        return sheet
    sheets = sheet_names(raw)
    names = [n for n, _ in sheets]
    full = [n for n, data in sheets if data]
    if len(full) == 1:
        return full[0]
    if not full:
        raise fatal(raw.path, f"holds no value in any sheet (sheets: {names})", field="(sheet)")
    raise fatal(raw.path, f"has {len(full)} sheets with data: {full}; choose one with --sheet "
                          "NAME (the config's dataset.sheet; the Data page asks)",
                field="(sheet)")


def cell_text(value: object) -> str | None:
    """A cell value as text (None for an empty cell): integral numbers without '.0', other
    numbers to 15 significant digits (what Excel shows), dates as ISO 8601, TRUE/FALSE."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.15g}"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.microsecond == 0
                               else "auto")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return str(value)


@dataclass
class SheetRows:
    """A sheet read as text: the header row's number and names, and (row number, cells) for
    each non-empty row under it; a cell is text, None (empty) or BadValue (a formula without a
    stored value, an error value)."""

    header_row: int
    header: list[str]
    rows: list[tuple[int, list[str | None | BadValue]]]


def _part(raw: RawFile, ws: Any) -> bytes:
    """The sheet's XML (its size was checked with the whole workbook)."""
    with zipfile.ZipFile(io.BytesIO(raw.data)) as archive:
        return archive.read(ws._worksheet_path)  # noqa: SLF001 (openpyxl keeps no other name)


def _formulas(raw: RawFile, name: str) -> dict[tuple[int, int], str]:
    """{(row, column): formula} of a sheet, read again without the stored values."""
    wb = _open(raw, data_only=False)
    try:
        out = {}
        for r, cells in _rows(raw, wb[name], _Budget()):
            for c in cells:
                if c["data_type"] == "f":
                    out[(r, c["column"])] = str(getattr(c["value"], "text", None)
                                                or c["value"])
        return out
    finally:
        wb.close()


def _check_header_merges(raw: RawFile, xml: bytes, header_row: int, name: str) -> None:
    from openpyxl.utils import column_index_from_string

    for m in _MERGE.finditer(xml):
        c1, r1 = m.group(1).decode(), int(m.group(2))
        c2, r2 = (m.group(3) or m.group(1)).decode(), int(m.group(4) or r1)
        wide = column_index_from_string(c2) > column_index_from_string(c1)
        if r1 <= header_row <= r2 and wide:
            raise fatal(raw.path, f"header cells {c1}{header_row}:{c2}{header_row} are merged; "
                                  "give each column its own header cell (unmerge them)",
                        f"sheet {name!r} row {header_row}", "(header)")


def read_sheet(raw: RawFile, name: str) -> SheetRows:
    """The rows of sheet `name` as text (see the module docstring for what is refused)."""
    wb = _open(raw)
    try:
        ws = wb[name]
        xml = _part(raw, ws)
        found = []
        for r, cells in _rows(raw, ws, _Budget()):  # every row the sheet has, whatever its size
            texts = [cell_text(v) for v in _values(cells)]
            if any(t is not None and t.strip() for t in texts):
                found.append((r, texts))
    finally:
        wb.close()
    if not found:
        raise fatal(raw.path, f"sheet {name!r} is empty; expected a header row",
                    field="(sheet)")
    # the header: the first row naming two columns or more (a title line above it is skipped)
    at = next((i for i, (_, texts) in enumerate(found)
               if sum(1 for t in texts if t is not None and t.strip()) >= 2), 0)
    (header_row, header), rows = found[at], found[at + 1:]
    _check_header_merges(raw, xml, header_row, name)
    header, keep = _names(raw, name, header_row, header, rows)
    formulas = _formulas(raw, name) if _FORMULA.search(xml) else {}
    out = []
    for r, texts in rows:
        row: list[str | None | BadValue] = []
        for i in keep:
            t = texts[i] if i < len(texts) else None
            if t is None and (r, i + 1) in formulas:
                t = BadValue(f"cell {_column_letter(i + 1)}{r} holds a formula with no stored "
                             f"value ({formulas[(r, i + 1)]}): open the file in Excel or "
                             "LibreOffice and save it, so its values are stored")
            elif t is not None and t.startswith("#") and _ERROR.fullmatch(t):
                t = BadValue(f"cell {_column_letter(i + 1)}{r} holds the error value {t}")
            row.append(t)
        out.append((r, row))
    return SheetRows(header_row, header, out)


def _names(raw: RawFile, name: str, header_row: int, header: list[str | None],
           rows: list[tuple[int, list[str | None]]]) -> tuple[list[str], list[int]]:
    """The column names (header cells stripped) and the indexes of their columns: a column
    with neither a name nor a value is left out; DataError on one with values but no name, and
    on a name used twice."""
    def used(i: int) -> bool:
        return any(len(texts) > i and texts[i] is not None and texts[i].strip()
                   for _, texts in rows)

    width = max([len(header)] + [len(texts) for _, texts in rows])
    names = [(t or "").strip() for t in header] + [""] * (width - len(header))
    keep = [i for i in range(width) if names[i] or used(i)]
    record = f"sheet {name!r} row {header_row}"
    empty = next((i for i in keep if not names[i]), None)
    if empty is not None:
        raise fatal(raw.path, f"header cell {_column_letter(empty + 1)}{header_row} is empty "
                              "but its column holds values; give every column a name",
                    record, "(header)")
    kept = [names[i] for i in keep]
    dupes = sorted(c for c, n in Counter(kept).items() if n > 1)
    if dupes:
        raise fatal(raw.path, f"column(s) {dupes} appear more than once", record, dupes[0])
    return kept, keep
