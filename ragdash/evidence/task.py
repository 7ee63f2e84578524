"""Finding evidence for an uploaded dataset as a job of its own (`ragdash.jobs`, kind
`evidence`): the Data page queues it, a `ragdash job` process loads the upload, finds the
evidence (MiniLM, and the LLM's quotes when asked: minutes on a large dataset) while reporting
its progress, and writes the review file the page then takes up (`review.store`, no decision
yet). It can be cancelled; started again, the LLM's finished replies come from the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class EvidenceTask:
    """The upload (as the Data page read it: formats, question limit, sheet, column mapping),
    the LLM's settings section when it is asked for quotes (None: not asked; never a key), the
    runs root whose caches it uses, and the review file it writes."""

    dataset: str
    format: str
    corpus: str | None
    corpus_format: str
    limit: int | None
    review_file: str
    runs_root: str
    sheet: str | None = None
    columns: Mapping[str, str] | None = None
    llm: Mapping[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["columns"] = dict(self.columns) if self.columns else None
        out["llm"] = dict(self.llm) if self.llm is not None else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceTask:
        return cls(**data)



def run_task(task: EvidenceTask, progress: Any = None, api_key: str | None = None
             ) -> dict[str, Any]:
    """Find the evidence of `task` and write its review file; the counts the page shows."""
    from ragdash.data import load_dataset
    from ragdash.embeddings import configured
    from ragdash.evidence import review
    from ragdash.evidence.finder import find_evidence
    from ragdash.evidence.settings import EvidenceSettings
    from ragdash.llm.settings import LLMSettings
    from ragdash.rundir.root import RunsRoot

    say = progress or (lambda message, done, total: None)
    say("reading the upload", 0, 1)
    dataset = load_dataset(task.dataset, task.format, corpus=task.corpus,
                           corpus_fmt=task.corpus_format, limit=task.limit, sheet=task.sheet,
                           columns=dict(task.columns) if task.columns else None)
    llm = None if task.llm is None else LLMSettings.from_config(task.llm, api_key=api_key)
    root = RunsRoot(task.runs_root)
    with configured(root.path):  # MiniLM vectors through the runs root's embedding cache
        result = find_evidence(dataset.examples, dataset.documents,
                               EvidenceSettings(llm=llm is not None), llm=llm,
                               cache=root.llm_cache if llm is not None else None,
                               progress=say)
    review.store(task.review_file, result, {})
    return {"found": len(result.found), "missing": len(result.missing),
            "review_file": task.review_file}
