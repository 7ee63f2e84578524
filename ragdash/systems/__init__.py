"""The user's own RAG systems, imported from files of their results and compared beside the
built-in retrievers (the run's `systems` section; `ragdash run --system NAME=FILE`).

    formats.py   each file format read into one record type (`read_system`, `detect`)
    match.py     records matched to the run's questions (id, then question text)
    store.py     a run's imported contexts and answers (`imported.parquet`, `chunk_table`)
    settings.py  the `systems` section (`SystemSpec`) and the names allowed
    pool.py      the pool of every system's passages, the corpus searched for evidence when a
                 dataset has neither relevant parts nor a corpus

An imported system is a retriever like `bm25` everywhere after the retrieve stage: its contexts
are its retrieved chunks in rank order (joined with one space into the context Score_IR cuts),
its answers are its answers (unless `generate: true`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragdash.systems.formats import SystemFile, SystemRecord, detect, read_system
from ragdash.systems.match import Matched, match
from ragdash.systems.settings import FORMATS, SystemSpec, check_name

if TYPE_CHECKING:
    import pandas as pd

    from ragdash.config import RunSpec

__all__ = ["FORMATS", "Matched", "SystemFile", "SystemRecord", "SystemSpec", "check_name",
           "detect", "import_systems", "match", "read_all", "read_system"]


def read_all(spec: RunSpec) -> dict[str, SystemFile]:
    """Every system's file read (DataError naming the system's file, record and field)."""
    return {name: read_system(s.file, s.format) for name, s in spec.systems.items()}


def import_systems(spec: RunSpec, examples: pd.DataFrame, documents: pd.DataFrame,
                   chunks: pd.DataFrame, files: dict[str, SystemFile] | None = None
                   ) -> tuple[pd.DataFrame, list[Matched]]:
    """The `imported.parquet` rows of every system of `spec` (read, matched to `examples`,
    TREC ids resolved against `documents` and `chunks`) and each one's matching."""
    import pandas as pd

    from ragdash.systems.store import IMPORTED_COLUMNS, imported_rows

    files = read_all(spec) if files is None else files
    qids: Sequence[str] = examples["qid"].astype(str).tolist()
    questions: Sequence[str] = examples["question"].astype(str).tolist()
    matched = [match(name, files[name], qids, questions) for name in spec.systems]
    tables = [imported_rows(m, documents, chunks, spec.budgets) for m in matched]
    table = (pd.concat(tables, ignore_index=True) if tables
             else pd.DataFrame(columns=IMPORTED_COLUMNS))
    return table, matched
