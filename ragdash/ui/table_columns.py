"""The Data page's questions about a table-like upload (JSONL, CSV, Parquet, .xlsx): which sheet
of a workbook holds the questions, and which column holds the question, the answer and the id
when the file does not name them so (`ragdash.data.columns`; the same as `--sheet` and
`--columns` on the command line)."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash.data import detect_format
from ragdash.data.columns import describe, guess, parse_columns
from ragdash.data.generic import EXAMPLE_COLUMNS, TABULAR, read_table
from ragdash.data.reading import read_file
from ragdash.data.spreadsheet import sheet_names
from ragdash.ui import widgets

MADE = "— none: number the rows —"
PREVIEW_ROWS = 3
_CACHE = "data_table_head"


def table_format(path: Path, fmt: str) -> str | None:
    """The upload's format when it is a table ragdash can map (None for HotpotQA/SQuAD)."""
    fmt = detect_format(path) if fmt == "auto" else fmt
    return fmt if fmt in TABULAR else None


def _key(path: Path, *more: object) -> str:
    return hashlib.sha256(repr((str(path), *more)).encode()).hexdigest()[:10]


def sheet(path: Path, fmt: str, remembered: str | None = None) -> tuple[bool, str | None]:
    """(ready, the sheet): asks which sheet when a workbook has several; not ready until one
    is chosen (the one chosen before, else the only sheet with data, is chosen at first)."""
    if fmt != "xlsx":
        return True, None
    cache = st.session_state.setdefault(_CACHE, {})
    if ("sheets", path) not in cache:
        cache[("sheets", path)] = sheet_names(read_file(path))
    sheets = cache[("sheets", path)]
    if len(sheets) == 1:
        return True, sheets[0][0]
    names = [n for n, _ in sheets]
    empty = {n for n, data in sheets if not data}
    full = [n for n in names if n not in empty]
    first = (names.index(remembered) if remembered in names else
             names.index(full[0]) if len(full) == 1 else None)
    choice = st.selectbox(
        "Sheet", names, index=first,
        key=f"data_sheet_{_key(path)}", placeholder="Choose the sheet with the questions",
        format_func=lambda n: f"{n} (empty)" if n in empty else n,
        help=f"This workbook has {len(names)} sheets; ragdash reads one of them (on the command "
             "line: --sheet NAME).")
    if choice is None:
        st.info("This workbook has several sheets with data: choose the one with the questions.",
                icon=":material/table_view:")
    return choice is not None, choice


def _head(path: Path, fmt: str, name: str | None) -> tuple[list[str], pd.DataFrame]:
    """The file's columns and its first rows (kept for the session)."""
    cache = st.session_state.setdefault(_CACHE, {})
    if ("head", path, name) not in cache:
        table = read_table(read_file(path), fmt, name)
        rows = [v for _, v in table.rows if isinstance(v, dict)][:PREVIEW_ROWS]
        cache[("head", path, name)] = (table.columns, pd.DataFrame(rows, columns=table.columns))
    return cache[("head", path, name)]


def _named(columns: list[str]) -> bool:
    return all(any(a in columns for a in EXAMPLE_COLUMNS[r]) for r in ("question", "answer"))


def mapping(path: Path, fmt: str, name: str | None, remembered: dict[str, str] | None = None
            ) -> tuple[bool, dict[str, str] | None]:
    """(ready, {role: column}): None when the file names its columns question and answer;
    else asks, starting from the mapping chosen before (else guesses from the headers), and
    is ready once the question and the answer columns are chosen."""
    columns, head = _head(path, fmt, name)
    if _named(columns):
        return True, None
    guessed = guess(columns)
    if remembered and all(c in columns for c in remembered.values()):
        guessed = {"id": None, **{r: remembered.get(r) for r in ("question", "answer")},
                   **{r: c for r, c in remembered.items() if r == "id"}}
    key = _key(path, name)
    with st.container(border=True, key="data_mapping"):
        st.markdown("**Which column holds what?**")
        st.caption("This file's columns are not named *question* and *answer*, so tell ragdash "
                   "which is which (first guesses come from the column names). Without an ID "
                   "column, each question is named by its row: row-2, row-3, …")
        c = st.columns(3)
        roles = {}
        for box, role, label in ((c[0], "question", "Question column"),
                                 (c[1], "answer", "Answer column")):
            roles[role] = box.selectbox(
                label, columns, key=f"data_map_{role}_{key}", placeholder="Choose a column",
                index=columns.index(guessed[role]) if guessed[role] else None)
        ids = [MADE, *columns]
        made_id = c[2].selectbox("ID column (optional)", ids, key=f"data_map_id_{key}",
                                 index=ids.index(guessed["id"]) if guessed["id"] else 0)
        if made_id != MADE:
            roles["id"] = made_id
        chosen = {r: col for r, col in roles.items() if col is not None}
        if len(head):  # the file's first rows, each mapped column marked with its role
            role_of = {col: r for r, col in chosen.items()}
            shown = head.astype("string").rename(columns={
                col: f"{col} → {role_of[col]}" for col in columns if col in role_of})
            st.dataframe(shown, hide_index=True, width="stretch", key="data_map_preview")
            st.caption(f"The first {len(head)} rows of the file; → marks what each column is "
                       "read as. Other columns are kept with each question as metadata.")
        if roles["question"] is None or roles["answer"] is None:
            st.info("Choose the question and the answer columns to load the dataset.")
            return False, None
        try:
            chosen = parse_columns(chosen, "the column choice") or {}
        except ValueError as exc:
            st.error(widgets.md(exc))
            return False, None
        text = describe(chosen)
        if parse_columns(text) == chosen:  # (a column name with a comma needs the config)
            st.caption("On the command line: "
                       f"{widgets.code('--columns ' + shlex.quote(text))}")
    return True, chosen


def ask(path: Path, fmt: str, remembered: tuple[str | None, dict[str, str] | None] = (None, None)
        ) -> tuple[str | None, dict[str, str] | None] | None:
    """(sheet, column mapping) of an upload, asking what the file leaves open, starting from
    the `remembered` choices; None until the user has answered (then nothing is loaded yet)."""
    table = table_format(path, fmt)
    if table is None:
        return None, None
    ready, name = sheet(path, table, remembered[0])
    if not ready:
        return None
    ready, columns = mapping(path, table, name,
                             remembered[1] if name == remembered[0] else None)
    return (name, columns) if ready else None
