"""Labels in and out of a run: the sample as a CSV to label in a spreadsheet, that CSV read
back with located errors, and stand-in labels derived from a reference metric (named as such:
their labeller begins with "stand-in: ")."""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ragdash.constants import REFERENCE_METRICS
from ragdash.data.reading import FileTooLarge, read_regular
from ragdash.data.schema import DataError, Issue
from ragdash.labels.sampling import DEFAULT_RULE
from ragdash.labels.store import (
    STAND_IN,
    check_comment,
    check_label,
    check_labeller,
    draw_sample,
    label_row,
    labelable,
    read_sample,
    sample_items,
    save_labels,
    why_unknown,
)
from ragdash.rundir import Run, atomic_path

EXPORT_COLUMNS = ("qid", "system", "question", "gold_answers", "answer", "label", "labeller",
                  "comment")
"""The columns of an exported sample; import reads qid, system, label, labeller, comment."""
GOLD_SEPARATOR = " | "
DEFAULT_SAMPLE = 60
MAX_IMPORT_BYTES = 50_000_000
MAX_IMPORT_ROWS = 100_000
"""The most data rows one labels file may hold (labelled or not), and at most
`MAX_IMPORT_LABELLERS` per answer of the run; a file with more is refused before any row is
checked or saved."""
MAX_IMPORT_LABELLERS = 10
"""The most distinct labellers one labels file may name (a run keeps `MAX_LABELLERS`)."""
MAX_IMPORT_COLUMNS = 1_000
"""The most columns a labels file's header may have (an export has 8; others are ignored)."""
MAX_ERRORS_SHOWN = 20
BOM = codecs.BOM_UTF8
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""What a cell a spreadsheet may run as a formula starts with (OWASP's CSV injection list, and
the fullwidth = + - @ some spreadsheets read as their ASCII forms)."""
_CELL_START = re.compile(r"(?<=[;\r\n])")
_LEADING = re.compile("[\\s'\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]*")
"""Blanks (every Unicode space: a space, a tab, a no-break space), apostrophes and invisible
characters (soft hyphen, zero-width spaces and joiners, direction marks, word joiner, BOM)."""


class LabelFileError(ValueError):
    """A labels file with problems, each located (file, row, field); nothing was imported."""

    def __init__(self, path: Path, issues: list[Issue]):
        shown = "\n".join(f"  {i}" for i in issues[:MAX_ERRORS_SHOWN])
        more = (f"\n  ... and {len(issues) - MAX_ERRORS_SHOWN} more"
                if len(issues) > MAX_ERRORS_SHOWN else "")
        super().__init__(f"{path}: {len(issues)} problem(s), nothing imported (fix them and "
                         f"import again):\n{shown}{more}")
        self.issues = issues


@dataclass(frozen=True)
class Imported:
    """What an import did: labels added, labels replacing the same labeller's earlier ones,
    rows without a label (skipped)."""

    added: int
    replaced: int
    unlabelled: int


def ensure_sample(run: Run, n: int | None = None, rule: str | None = None,
                  seed: int | None = None) -> pd.DataFrame:
    """The stored sample, drawn (or extended to `n`) first when asked; rule and seed default to
    the stored sample's, else uniform and 0. ValueError when there is none and no `n`."""
    old = read_sample(run)
    if n is None and rule is None and seed is None:
        if old is None:
            raise ValueError(f"run {run.path} has no sample to label yet: give its size "
                             "(--n 60)")
        return old
    rule = rule or (str(old["rule"].iloc[0]) if old is not None else DEFAULT_RULE)
    seed = seed if seed is not None else (int(old["seed"].iloc[0]) if old is not None else 0)
    if n is None:
        n = len(old) if old is not None else DEFAULT_SAMPLE
    return draw_sample(run, n, rule, seed)


def _segments(text: str) -> list[str]:
    """`text` cut after every ; and line break: where a spreadsheet that splits a comma-separated
    file on ; (Excel in many locales), ignoring quotes there, may start a cell."""
    return _CELL_START.split(text)


def _formula_like(segment: str) -> bool:
    """Whether `segment`, after any leading apostrophes, starts like a formula, or does so
    after the blanks and invisible characters a spreadsheet may skip (`_LEADING`: a space, a
    no-break or zero-width space, a BOM), apostrophes among them."""
    return (segment.lstrip("'").startswith(FORMULA_START)
            or segment[_LEADING.match(segment).end():].startswith(FORMULA_START))


def cell(text: str) -> str:
    """A text cell no spreadsheet runs as a formula: a ' before the cell, and before the text
    after each ; or line break, that starts like one after any apostrophes it has (so `uncell`
    tells an added ' from one in the data)."""
    return "".join("'" + s if _formula_like(s) else s for s in _segments(text))


def uncell(text: str) -> str:
    """The text `cell` was given: each ' it added dropped, nothing else."""
    return "".join(s[1:] if s.startswith("'") and _formula_like(s) else s
                   for s in _segments(text))


def export_csv(run: Run, path: Path | str, n: int | None = None, rule: str | None = None,
               seed: int | None = None) -> int:
    """Write the sample (drawn first when asked) to a CSV for labelling: qid, system, question,
    gold answers, the generated answer, and empty label, labeller and comment columns (never
    the judge's score). Every cell is quoted and passed through `cell` (no formulas); import
    undoes it. Returns the number of answers written."""
    ensure_sample(run, n, rule, seed)
    items = sample_items(run)
    table = pd.DataFrame([tuple(map(cell, (it.qid, it.system, it.question,
                                           GOLD_SEPARATOR.join(it.gold_answers), it.answer)))
                          + ("", "", "") for it in items], columns=list(EXPORT_COLUMNS))
    path = Path(path)
    with atomic_path(path) as tmp:  # every cell quoted: a , or ; in it stays in it
        table.to_csv(tmp, index=False, encoding="utf-8-sig",  # the BOM: spreadsheets read UTF-8
                     quoting=csv.QUOTE_ALL)
    return len(table)


def _header_width(text: str) -> tuple[int, str]:
    """(the number of columns of the header, its separator: , or ;) of a CSV, reading its
    header record alone (pandas makes a column of each, whatever rows follow)."""
    first = next(csv.reader(io.StringIO(text, newline="")), [])
    if len(first) == 1 and ";" in first[0]:
        first = next(csv.reader(io.StringIO(text, newline=""), delimiter=";"), [])
        return len(first), ";"
    return len(first), ","


def _read(path: Path, max_rows: int) -> pd.DataFrame:
    """The CSV's cells as text (comma or semicolon separated), at most `max_rows + 1` data rows
    read (one more tells a file over the limit); LabelFileError otherwise. The file is read
    once, bounded (`MAX_IMPORT_BYTES`; a pipe or a device refused by name), and its header
    checked against `MAX_IMPORT_COLUMNS` before pandas parses it."""
    def fail(field: str, message: str, record: str = "file") -> LabelFileError:
        return LabelFileError(path, [Issue(str(path), record, field, message)])

    try:
        data = read_regular(path, MAX_IMPORT_BYTES)
    except FileTooLarge:
        raise fail("size", f"the file is larger than {MAX_IMPORT_BYTES:,} bytes, the limit of "
                           "a labels file") from None
    except DataError as exc:  # a folder, a pipe, a device
        raise fail("path", exc.issue.message) from None
    except OSError as exc:
        raise fail("path", f"cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")  # the BOM an export writes, and Excel's "CSV UTF-8"
    except UnicodeDecodeError as exc:
        at = exc.start + len(BOM) * data.startswith(BOM)
        raise fail("encoding", f"not UTF-8 text (a bad byte at offset {at:,}): save it as CSV "
                               "UTF-8") from None
    try:
        width, sep = _header_width(text)
    except csv.Error as exc:
        raise fail("format", f"not a readable CSV ({exc})", "header") from None
    if width > MAX_IMPORT_COLUMNS:
        raise fail("columns", f"the header has {width:,} columns, over the limit of "
                              f"{MAX_IMPORT_COLUMNS:,}: keep qid, system, label, labeller and "
                              "comment (other columns are ignored)", "header")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, sep=sep,
                         nrows=max_rows + 1)
    except pd.errors.EmptyDataError:
        raise fail("format", "empty: it needs a header row (qid, system, label)") from None
    except pd.errors.ParserError as exc:
        raise fail("format", f"not a readable CSV ({' '.join(str(exc).split())})") from None
    if len(df) > max_rows:
        raise fail("rows", f"over {max_rows:,} rows, the limit for this run's labels files "
                           f"({MAX_IMPORT_LABELLERS} rows per answer of the run, "
                           f"{MAX_IMPORT_ROWS:,} at most): split it into smaller files")
    df.columns = [str(c).strip().lower() for c in df.columns]
    missing = [c for c in ("qid", "system", "label") if c not in df.columns]
    if missing:
        raise LabelFileError(path, [Issue(str(path), "header", c, "missing column (columns "
                                          f"found: {', '.join(df.columns)})") for c in missing])
    return df


def _max_rows(answers: int) -> int:
    """The most data rows a labels file may hold for a run with `answers` answers
    (`MAX_IMPORT_ROWS`, and `MAX_IMPORT_LABELLERS` per answer)."""
    return min(MAX_IMPORT_ROWS, MAX_IMPORT_LABELLERS * answers)


def _check_labellers(path: Path, df: pd.DataFrame, labeller: str | None) -> None:
    """LabelFileError when the labelled rows name over `MAX_IMPORT_LABELLERS` labellers."""
    labelled = df[df["label"].str.strip() != ""]
    names = (labelled["labeller"] if "labeller" in df.columns
             else pd.Series("", index=labelled.index, dtype=object))
    default = " ".join((labeller or "").split())
    found = {" ".join(str(n).split()) or default for n in names} - {""}
    if len(found) > MAX_IMPORT_LABELLERS:
        raise LabelFileError(path, [Issue(
            str(path), "file", "labeller",
            f"{len(found):,} labellers, over the limit of {MAX_IMPORT_LABELLERS} per import: "
            f"import each labeller's labels in a file of their own")])


def read_labels_csv(run: Run, path: Path | str, labeller: str | None = None
                    ) -> tuple[list[dict], int]:
    """Check every row of a labels CSV against the run: (label rows, rows without a label).

    Row numbers are the spreadsheet's (the header is row 1). LabelFileError listing every
    problem: unknown qid or system, a label not in `LABELS`, no labeller, an over-long comment,
    the same answer twice for the same labeller."""
    path = Path(path)
    answers = labelable(run)
    df = _read(path, _max_rows(len(answers)))
    _check_labellers(path, df, labeller)
    shas = dict(zip(zip(answers["qid"], answers["system"], strict=True), answers["answer_sha"],
                    strict=True))
    issues: list[Issue] = []
    rows: list[dict] = []
    seen: dict[tuple[str, str, str], int] = {}
    unlabelled = 0
    for i, rec in enumerate(df.to_dict(orient="records"), start=2):
        if not rec["label"].strip():
            unlabelled += 1
            continue
        found = len(issues)
        values = {}
        for field, check, value in (
                ("label", check_label, rec["label"]),
                ("labeller", check_labeller, rec.get("labeller", "").strip() or labeller or ""),
                ("comment", check_comment, rec.get("comment"))):
            try:
                values[field] = check(value)
            except ValueError as exc:
                hint = " (add a labeller column or pass --labeller)" if field == "labeller" else ""
                issues.append(Issue(str(path), f"row {i}", field, f"{exc}{hint}"))
        qid, system = uncell(rec["qid"].strip()), uncell(rec["system"].strip())
        if not qid or not system:
            issues.append(Issue(str(path), f"row {i}", "system" if qid else "qid",
                                "empty: every labelled row names its answer"))
            continue
        sha = shas.get((qid, system))
        if sha is None:
            issues.append(Issue(str(path), f"row {i}", *why_unknown(answers, qid, system)))
            continue
        if len(issues) > found:
            continue
        key = (qid, system, values["labeller"])
        if key in seen:
            issues.append(Issue(str(path), f"row {i}", "label",
                                f"duplicate: row {seen[key]} already labels qid {qid!r}, system "
                                f"{system!r} for labeller {values['labeller']!r}"))
            continue
        seen[key] = i
        rows.append(label_row(qid, system, values["label"], values["labeller"],
                              values["comment"], sha))
    if issues:
        raise LabelFileError(path, issues)
    return rows, unlabelled


def import_csv(run: Run, path: Path | str, labeller: str | None = None) -> Imported:
    """Import a labels CSV (columns qid, system, label; optional labeller, comment; other
    columns ignored) into labels.parquet, all or nothing: LabelFileError (located) otherwise,
    also for a file over `MAX_IMPORT_BYTES`, `MAX_IMPORT_ROWS` (or `MAX_IMPORT_LABELLERS` rows
    per answer) or `MAX_IMPORT_LABELLERS` labellers, refused before any row is checked;
    ValueError when the run's labels would exceed `store.MAX_LABELS` or `MAX_LABELLERS`.
    `labeller` names the rows without one."""
    rows, unlabelled = read_labels_csv(run, path, labeller)
    added, replaced = save_labels(run, rows)
    return Imported(added, replaced, unlabelled)


def stand_in_name(metric: str) -> str:
    """The labeller of stand-in labels from a reference metric, e.g. "stand-in: contains a gold
    answer"."""
    from ragdash.calibration.agreement import REFERENCE_METRICS

    if metric not in REFERENCE_METRICS:
        raise ValueError(f"reference metric {metric!r} is not one of "
                         f"{', '.join(REFERENCE_METRICS)}")
    return STAND_IN + REFERENCE_METRICS[metric]


def from_reference(run: Run, metric: str = "contains", n: int | None = None,
                   rule: str | None = None, seed: int | None = None) -> Imported:
    """Stand-in labels for the sample (drawn first when asked; DEFAULT_SAMPLE answers when the
    run has none), derived from a reference metric instead of a person: `correct` when the
    metric reaches its cut-off (`ragdash.constants.REFERENCE_METRICS`: contains a gold answer,
    matches one exactly, token F1 or ROUGE-L 0.5, MiniLM cosine 0.7), else `wrong`; `cannot
    tell` for a question without a gold answer. The labeller names the metric ("stand-in:
    ..."), so they are never taken for human labels."""
    from ragdash.run_spec import main_reference

    name = stand_in_name(metric)
    if read_sample(run) is None and n is None:
        n = DEFAULT_SAMPLE
    ensure_sample(run, n, rule, seed)
    ref = main_reference(run)
    if ref is None:
        raise FileNotFoundError(f"run {run.path} has no answers to score against the gold "
                                "answers")
    ref = ref.astype({"qid": str, "system": str}).set_index(["qid", "system"])
    answers = labelable(run).set_index(["qid", "system"])["answer_sha"]
    rows = []
    for it in sample_items(run):
        value = ref[metric].get((it.qid, it.system))
        if value is None or pd.isna(value):
            label = "cannot tell"
        else:
            label = ("correct" if float(value) >= REFERENCE_METRICS[metric].correct_at
                     else "wrong")
        rows.append(label_row(it.qid, it.system, label, name,
                              f"not a human label: derived from {metric}",
                              answers[(it.qid, it.system)]))
    added, replaced = save_labels(run, rows)
    return Imported(added, replaced, 0)


__all__ = ["DEFAULT_SAMPLE", "EXPORT_COLUMNS", "FORMULA_START", "MAX_IMPORT_BYTES",
           "MAX_IMPORT_COLUMNS", "MAX_IMPORT_LABELLERS", "MAX_IMPORT_ROWS", "Imported",
           "LabelFileError", "cell", "ensure_sample", "export_csv", "from_reference",
           "import_csv", "read_labels_csv", "stand_in_name", "uncell"]
