"""Atomic writes: a temp file beside the target, renamed over it only when complete."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it over `path` only if the block succeeds.

    An OSError in writing it (a full disk, a read-only folder) names `path`, not the temp
    file: `filename` is `path` (an error about another file, one the block reads, is left
    as it is)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}."
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)
        os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600 files; run files are meant to be shared
        os.replace(tmp, path)
    except OSError as exc:
        name = exc.filename
        if name is not None and name != str(path) and not (
                Path(name).parent == path.parent and Path(name).name.startswith(prefix)):
            raise
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from exc
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: Path, data: dict) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_table(path: Path, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        if path.suffix == ".csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False)


def read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
