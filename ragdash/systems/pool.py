"""Pooling: when a run has systems' files but no corpus, the corpus is the pool of every
passage the systems retrieved (TREC-style pooling), each distinct text one document. A dataset
without relevant parts then gets them from the pool (`ragdash.evidence`): a passage no system
retrieved cannot be evidence, so Score_IR is relative to the pool, not to a whole collection.
The built-in retrievers, if any, search the pool too."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragdash.data.reading import fatal

if TYPE_CHECKING:
    from ragdash.config import RunSpec

MEANING = ("The relevant parts were found in the pool of passages your systems retrieved "
           "(TREC-style pooling), as the run has no corpus: a passage no system retrieved "
           "cannot be evidence, so Score_IR says how much of the evidence found in the pool "
           "each system retrieved, relative to the pool, not to a whole collection.")
"""What pages say of a run whose relevant parts come from the pool."""


def pooled(spec: RunSpec) -> bool:
    """Whether the run's corpus is the pool: systems' files and no corpus, with a JSONL, CSV,
    Parquet or .xlsx dataset (HotpotQA, SQuAD and CRAG files carry their own corpus)."""
    if not spec.systems or spec.dataset.corpus:
        return False
    from ragdash.data import detect_format
    from ragdash.data.generic import TABULAR
    from ragdash.data.schema import DataError

    fmt = spec.dataset.format or "auto"
    try:
        fmt = detect_format(spec.dataset.path) if fmt == "auto" else fmt
    except (DataError, OSError, ValueError):
        return False  # ingest says why the dataset cannot be read
    return fmt in TABULAR


def documents(spec: RunSpec) -> tuple[list[dict], dict]:
    """The pool's documents ({doc_id, title, text}: each distinct passage once, in the order
    the systems and their records give them; doc_id `pool-<sha256 of the text, 16 hex>`, the
    title the system's own document id when it gives one) and a summary for the manifest."""
    from ragdash.systems import read_all

    files = read_all(spec)
    docs: dict[str, dict] = {}
    per: dict[str, int] = {}
    for name, f in files.items():
        if f.format == "trec":
            raise fatal(f.path, f"system {name} is a TREC run, whose ids name documents of a "
                                "corpus, and the run has none: give the corpus (--corpus, "
                                "dataset.corpus)", "-", "docid")
        per[name] = 0
        for rec in f.records:
            for i, text in enumerate(rec.contexts):
                if not text.strip():
                    continue
                per[name] += 1
                key = "pool-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
                given = rec.context_ids[i] if i < len(rec.context_ids) else None
                docs.setdefault(key, {"doc_id": key, "title": given or "", "text": text})
    if not docs:
        raise fatal(next(iter(files.values())).path, "the systems retrieved no passage: the "
                    "pool (the corpus of a run without one) is empty")
    return list(docs.values()), {"systems": list(files), "passages": len(docs),
                                 "retrieved": per}


@contextlib.contextmanager
def corpus_file(spec: RunSpec) -> Iterator[tuple[Path | None, dict | None]]:
    """(a JSONL corpus of the pool, its summary) while the block runs, when the run's corpus is
    the pool (`pooled`); (None, None) otherwise."""
    if not pooled(spec):
        yield None, None
        return
    docs, summary = documents(spec)
    with tempfile.TemporaryDirectory(prefix="ragdash-pool-") as tmp:
        path = Path(tmp) / "pool.jsonl"
        path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                        encoding="utf-8")
        yield path, summary
