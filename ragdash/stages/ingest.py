"""Ingest: load and validate a dataset and its corpus into examples and documents."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ragdash.evidence.settings import QUOTE_STEP
from ragdash.stages import evidence
from ragdash.stages.base import PlanContext, Stage, StageContext

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.data.schema import Dataset, Example
    from ragdash.llm.plan import CallPlan


def _stream(h, path: Path) -> None:
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)


def file_sha256(path: str | Path | None) -> str | None:
    """The sha256 of a file, or of a folder's relative paths and contents; None if absent.

    Files are streamed in blocks. A folder's file over the one-document limit, or past the
    corpus's total limit, is hashed by its size and time of change, not read: the loader skips
    it (or refuses the corpus) without reading it either. Names that are not UTF-8 are hashed
    by their bytes (surrogateescape), as the loader lists them."""
    from ragdash.data.readers.base import MAX_DOCUMENT_BYTES
    from ragdash.data.textfiles import MAX_TOTAL_BYTES

    if not path:
        return None
    p = Path(path)
    if p.is_dir():
        h, total = hashlib.sha256(), 0
        for f in sorted(x for x in p.rglob("*") if x.is_file()):
            h.update(str(f.relative_to(p)).encode("utf-8", "surrogateescape"))
            st = f.stat()
            total += st.st_size
            if st.st_size > MAX_DOCUMENT_BYTES or total > MAX_TOTAL_BYTES:
                h.update(f"\0unread:{st.st_size}:{st.st_mtime_ns}\0".encode())
                continue
            try:
                _stream(h, f)
            except OSError as exc:
                h.update(f"\0unreadable:{exc.errno}\0".encode())
        return h.hexdigest()
    if not p.exists():
        return None
    h = hashlib.sha256()
    _stream(h, p)
    return h.hexdigest()


def system_keys(spec: RunSpec) -> dict[str, dict]:
    """{imported system: its format and the sha256 of its file}: what a stage key hashes of the
    systems (`ragdash.systems`; a changed file is imported again)."""
    return {name: {"format": s.format, "sha256": file_sha256(s.file)}
            for name, s in spec.systems.items()}


def settings(spec: RunSpec) -> tuple:
    from ragdash.data.textfiles import holds_layout_files

    ds = {k: v for k, v in spec.dataset.model_dump().items()
          if k != "evidence" and not (k in ("sample", "sheet", "columns") and v is None)}
    # (a later key left out at its default, so runs made before it keep their retrieval)
    if (found_by := evidence.key(spec)) is not None:  # a dataset without relevant parts
        ds["evidence"] = found_by
    key = (ds, file_sha256(ds["path"]), file_sha256(ds.get("corpus")))
    from ragdash.systems.pool import pooled

    if pooled(spec):  # no corpus: the pool of the systems' passages is the corpus
        key = (*key, {"pool": system_keys(spec)})
    # PDF, HTML and DOCX files of a folder or .zip corpus were ignored before they were read:
    # such a corpus gets a new key (read again), every other keeps its key
    return (*key, "documents-v1") if holds_layout_files(ds.get("corpus")) else key


def examples_frame(examples: Sequence[Example]) -> pd.DataFrame:
    """A run's examples.parquet: qid, question, answer, answers, parts and each metadata key."""
    meta_keys = sorted({k for e in examples for k in e.meta})
    return pd.DataFrame({
        "qid": [e.qid for e in examples],
        "question": [e.question for e in examples],
        "answer": [e.answer for e in examples],
        "answers": [list(e.answers) for e in examples],
        "parts": [list(e.parts) for e in examples],
        **{k: [e.meta.get(k) for e in examples] for k in meta_keys},
    })


def load(spec: RunSpec) -> Dataset:
    """The dataset and corpus of `spec` as ingest reads them (the systems' pool as the corpus
    when there is none), before any evidence is found."""
    from ragdash.data import load_dataset
    from ragdash.systems.pool import corpus_file

    ds = spec.dataset
    with corpus_file(spec) as (pool, pooled):  # no corpus but systems: their pool
        dataset = load_dataset(ds.path, ds.format, corpus=pool or ds.corpus,
                               corpus_fmt="jsonl" if pool else ds.corpus_format,
                               include_unanswerable=ds.include_unanswerable, limit=ds.limit,
                               sample=ds.sample, sheet=ds.sheet, columns=ds.columns)
    if pooled is not None:
        dataset.source.update(corpus=None, corpus_sha256=None, pool=pooled)
    return dataset


def plan(ctx: PlanContext) -> CallPlan | None:
    """The evidence finder's calls (quotes, and which sentences support an answer in other
    words) for a dataset without relevant parts, found by running the finder on the loaded
    files with nothing sent (`evidence.call_plan`); the reply cache answers those asked
    before. None once ingest is up to date."""
    if evidence.evidence_llm(ctx.spec) is None or ctx.up_to_date("ingest"):
        return None  # done: nothing to send (and no finder to run)
    return evidence.call_plan(load(ctx.spec), ctx.spec)


def run(ctx: StageContext) -> dict:
    from ragdash.data import layout

    ds, out = ctx.spec.dataset, ctx.run
    pooled = (dataset := load(ctx.spec)).source.get("pool")
    dataset, found = evidence.find_if_missing(dataset, ctx)  # no relevant_parts: find them
    issues = pd.DataFrame([asdict(i) for i in dataset.issues],
                          columns=["file", "record", "field", "message", "severity"])
    out.write("issues", issues)
    if not dataset.examples:
        first = "; ".join(str(i) for i in dataset.issues[:3]) or "no record found"
        raise ValueError(f"{ds.path}: no valid example could be loaded "
                         f"({dataset.skipped} record(s) skipped; all listed in "
                         f"{out.file('issues')}). First: {first}")
    examples = examples_frame(dataset.examples)
    docs = dataset.documents
    documents = pd.DataFrame({"doc_id": [d.doc_id for d in docs], "title": [d.title for d in docs],
                              "text": [d.text for d in docs],
                              **layout.to_columns([d.pages for d in docs],
                                                  [d.headings for d in docs])})
    out.write("examples", examples)
    out.write("documents", documents)
    out.update(source=dataset.source, issues={
        "skipped": dataset.skipped, "warnings": dataset.warnings,
        "first": [str(i) for i in dataset.issues[:20]],
    })
    if found is not None:
        out.update(evidence=found)
    out.update(pool=pooled)  # None: the corpus is the dataset's or the one given
    if licence := dataset.source.get("licence"):  # e.g. CRAG's, non-commercial
        logging.getLogger("ragdash").warning("ingest: %s", licence)
    return {"examples": len(examples), "documents": len(documents),
            "skipped": dataset.skipped, "warnings": dataset.warnings}


STAGE = Stage("ingest", "load and validate a dataset and corpus into a run directory",
              needs=(), settings=settings, run=run, writes=("issues", "examples", "documents"),
              section="dataset", llm=evidence.evidence_llm, plan=plan, part="evidence",
              step=QUOTE_STEP, work="the evidence finder's quotes")
