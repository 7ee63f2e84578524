"""What the dashboard's Data page keeps under the runs root, so that a reload or a restart loses
no work: datasets made there (reviewed evidence, generated questions), kept as JSONL in
`_datasets/`, each with a small JSON sidecar that names the corpus it belongs with; and the
uploads (`_uploads/<sha256>/<name>`), each dataset upload with a note of the corpus uploaded
with it."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ragdash.rundir.io import atomic_path

SIDECAR = ".source.json"


@dataclass(frozen=True)
class SavedDataset:
    """A saved dataset file and what its sidecar says (`corpus` None: none recorded)."""

    path: Path
    origin: str  # how it was made, in words
    questions: int | None
    corpus: Path | None
    corpus_format: str
    corpus_name: str | None
    time: float

    @property
    def name(self) -> str:
        return self.path.name


def sidecar(dataset: Path) -> Path:
    return dataset.with_name(dataset.name + SIDECAR)


def record(dataset: str | Path, origin: str, corpus: str | Path | None,
           corpus_format: str = "auto", corpus_name: str | None = None,
           questions: int | None = None) -> None:
    """Write the sidecar of a saved dataset, atomically."""
    dataset = Path(dataset)
    data = {"origin": origin, "questions": questions,
            "corpus": None if corpus is None else str(corpus), "corpus_format": corpus_format,
            "corpus_name": corpus_name, "time": time.time()}
    with atomic_path(sidecar(dataset)) as tmp:
        tmp.write_text(json.dumps(data), encoding="utf-8")


def _read(path: Path, root: Path) -> SavedDataset:
    try:
        data = json.loads(sidecar(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except (OSError, ValueError):
        data = {}
    corpus = data.get("corpus")
    corpus = Path(corpus) if isinstance(corpus, str) and corpus else None
    if corpus is not None and not (corpus.is_file() and corpus.resolve().is_relative_to(root)):
        corpus = None  # gone, or outside the runs root: not offered
    questions = data.get("questions")
    return SavedDataset(path, str(data.get("origin") or "saved dataset"),
                        questions if isinstance(questions, int) else None, corpus,
                        str(data.get("corpus_format") or "auto"),
                        data.get("corpus_name") if isinstance(data.get("corpus_name"), str)
                        else None,
                        float(data.get("time") or path.stat().st_mtime))


def saved_datasets(folder: str | Path) -> list[SavedDataset]:
    """The datasets saved in `folder` (`<runs root>/_datasets`), newest first (rejected pairs'
    files and symlinks are left out; a corpus outside the runs root is not named)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.jsonl")
             if not p.name.endswith(".rejects.jsonl") and not p.is_symlink() and p.is_file()]
    root = folder.parent.resolve()
    return sorted((_read(p, root) for p in files), key=lambda s: s.time, reverse=True)


UPLOAD_NOTE = ".upload.json"
"""Beside an uploaded dataset; no upload can take this name (upload names lose leading dots)."""


@dataclass(frozen=True)
class Upload:
    """A dataset uploaded on the Data page and the corpus uploaded with it (if any)."""

    dataset: Path
    name: str
    corpus: Path | None
    corpus_name: str | None
    time: float
    sheet: str | None = None  # the workbook's sheet chosen on the Data page
    columns: dict[str, str] | None = None  # the column mapping chosen there

    @property
    def key(self) -> str:
        """The upload's folder name (its content's sha256): what the Data page's URL holds."""
        return self.dataset.parent.name


def remember_upload(dataset: str | Path, name: str, corpus: str | Path | None,
                    corpus_name: str | None) -> None:
    """Note, beside an uploaded dataset, its original name and the corpus uploaded with it."""
    dataset = Path(dataset)
    data = {"file": dataset.name, "name": name, "corpus": None if corpus is None else str(corpus),
            "corpus_name": corpus_name, "time": time.time()}
    _write_note(dataset, data)


def _write_note(dataset: Path, data: dict) -> None:
    with atomic_path(dataset.parent / UPLOAD_NOTE) as tmp:
        tmp.write_text(json.dumps(data), encoding="utf-8")


def remember_choice(dataset: str | Path, sheet: str | None,
                    columns: dict[str, str] | None) -> None:
    """Note, beside an uploaded dataset already remembered, the sheet and column mapping chosen
    for it, so a reload or another day brings them back (nothing without a note)."""
    dataset = Path(dataset)
    try:
        data = json.loads((dataset.parent / UPLOAD_NOTE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if (data.get("sheet"), data.get("columns")) != (sheet, columns):
        _write_note(dataset, {**data, "sheet": sheet, "columns": columns})


def find_upload(folder: str | Path, key: str) -> Upload | None:
    """The remembered upload whose folder is `key` (None when gone or never noted)."""
    return next((u for u in recent_uploads(folder, limit=10_000) if u.key == key), None)


def recent_uploads(folder: str | Path, limit: int = 20) -> list[Upload]:
    """The dataset uploads noted in `folder` (`_uploads/`), newest first, whose files are all
    still there and inside the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    out = []
    root = folder.resolve()
    for note in folder.glob(f"*/{UPLOAD_NOTE}"):
        try:
            data = json.loads(note.read_text(encoding="utf-8"))
            dataset = note.parent / Path(str(data["file"])).name
            corpus = Path(data["corpus"]) if data.get("corpus") else None
            files = [dataset] if corpus is None else [dataset, corpus]
            if not all(f.is_file() and f.resolve().is_relative_to(root) for f in files):
                continue
            columns = data.get("columns")
            out.append(Upload(dataset, str(data["name"]), corpus,
                              str(data["corpus_name"]) if data.get("corpus_name") else None,
                              float(data["time"]),
                              str(data["sheet"]) if data.get("sheet") else None,
                              {str(k): str(v) for k, v in columns.items()}
                              if isinstance(columns, dict) else None))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(out, key=lambda u: u.time, reverse=True)[:limit]
