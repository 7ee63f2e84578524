"""Ingest's evidence step: with a dataset that has no relevant_parts column, find evidence in
the loaded corpus (`ragdash.evidence`), leave out (and list) the questions without any, and say
so.

The finder's settings enter the ingest key only for such a dataset (`key`), so the keys of
runs whose datasets carry their parts do not change.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdash.data.schema import DataError, Dataset
from ragdash.evidence.settings import VERSION
from ragdash.stages.base import StageContext

if TYPE_CHECKING:
    from ragdash.config import DatasetSpec, RunSpec
    from ragdash.llm import LLMSettings
    from ragdash.llm.plan import CallPlan

log = logging.getLogger("ragdash")


@lru_cache(maxsize=16)
def _absent(path: str, fmt: str, _stamp: tuple[int, int], sheet: str | None = None,
            columns: tuple[tuple[str, str], ...] = ()) -> bool:
    from ragdash.data import detect_format
    from ragdash.data.generic import TABULAR, parts_absent
    from ragdash.data.reading import read_file

    fmt = detect_format(path) if fmt == "auto" else fmt
    return fmt == "crag" or fmt in TABULAR and parts_absent(read_file(path), fmt, sheet,
                                                              dict(columns))


def needed(dataset: DatasetSpec) -> bool:
    """Whether the run's dataset is a JSONL/CSV/Parquet/.xlsx file with no relevant_parts
    column, or CRAG's (it marks no evidence); False when it cannot be read (ingest then says
    why)."""
    path = dataset.path
    try:
        stat = os.stat(path) if path else None
        return bool(stat) and _absent(str(Path(path)), dataset.format or "auto",
                                      (stat.st_mtime_ns, stat.st_size), dataset.sheet,
                                      tuple((dataset.columns or {}).items()))
    except (DataError, OSError, ValueError):
        return False


def key(spec: RunSpec) -> dict[str, Any] | None:
    """The finder's settings for the ingest key, or None when ingest will not use it."""
    if not needed(spec.dataset):
        return None
    settings = spec.dataset.evidence
    out: dict[str, Any] = {**settings.to_dict(), "version": VERSION}
    if settings.llm:  # the model that quotes
        out["model"] = spec.llm.model_dump()
    from ragdash.embeddings import precision_key

    if precision := precision_key(spec.embeddings.precision):  # fp32 keeps the old keys
        out.update(precision)
    return out


def evidence_llm(spec: RunSpec, api_key: str | None = None) -> LLMSettings | None:
    """The LLM ingest asks while it finds evidence (quotes, and which sentences support an
    answer in other words): the run's, when the dataset has no relevant parts and
    `dataset.evidence.llm` is on; else None."""
    if not spec.dataset.evidence.llm or not needed(spec.dataset):
        return None
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(spec.llm, api_key=api_key)


def call_plan(dataset: Dataset, spec: RunSpec) -> CallPlan | None:
    """The calls the finder would send for `dataset` as ingest runs it (the run's embedding
    precision and cache, which choose the candidates shown), found by running it with a
    backend that sends nothing (`evidence.finder.call_plan`); None when it asks no LLM."""
    from ragdash.embeddings import configured
    from ragdash.evidence.finder import call_plan as finder_plan

    llm = evidence_llm(spec)
    if llm is None:
        return None
    with configured(spec.runs_root, spec.embeddings.precision, spec.embeddings.cache):
        return finder_plan(dataset.examples, dataset.documents, spec.dataset.evidence, llm)


def find_if_missing(dataset: Dataset, ctx: StageContext) -> tuple[Dataset, dict | None]:
    """The dataset with found evidence (and the summary for the manifest) when it has no
    relevant_parts column; else the dataset unchanged and None."""
    from ragdash.data.generic import PARTS, PARTS_ABSENT
    from ragdash.evidence import output
    from ragdash.evidence.finder import find_evidence

    if dataset.source.get(PARTS) != PARTS_ABSENT:
        return dataset, None
    spec = ctx.spec
    settings = spec.dataset.evidence
    llm = None
    if settings.llm:  # the dataset has no relevant parts: evidence_llm's LLM
        from ragdash.llm import LLMSettings

        llm = LLMSettings.from_config(spec.llm, api_key=ctx.api_key)
    from ragdash.rundir.root import RunsRoot

    result = find_evidence(dataset.examples, dataset.documents, settings, llm=llm,
                           cache=RunsRoot(spec.runs_root).llm_cache if llm else None,
                           progress=ctx.progress)
    summary = result.summary()
    log.info("ingest: the dataset has no relevant parts, so evidence was found in the "
             "corpus: %d of %d questions got relevant parts; %d without evidence are left out "
             "(listed in %s)", summary["found"], summary["questions"], summary["missing"],
             ctx.run.file("issues"))
    return output.completed(dataset, result), summary
