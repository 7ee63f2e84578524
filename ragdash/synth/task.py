"""Question generation as a job of its own (`ragdash.jobs`, kind `synth`): what to generate,
written to the job's record, then run in a `ragdash job` process that reports its progress,
can be cancelled, and resumes from the LLM reply cache when started again. The dashboard's
"Generate questions" panel queues one; nothing long runs in the server's process.

The job writes the kept pairs and the rejects under `<runs_root>/_datasets/` (`write.save`),
records the dataset for the Data page (`ragdash.data.saved`), and leaves in its record the two
paths and the counts the panel shows (`SynthResult.summary`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragdash.synth.settings import SynthSettings

ORIGIN = "questions generated from {name}"
"""How the Data page names a dataset this job saved."""


@dataclass(frozen=True)
class SynthTask:
    """One generation: the corpus (its path, format and the name shown), what to generate, the
    LLM's settings section (`ragdash.llm.settings.LLMSpec` keys; never a key) and the runs root
    whose reply cache, embedding cache and `_datasets` it uses."""

    corpus: str
    corpus_format: str
    corpus_name: str
    settings: SynthSettings
    llm: Mapping[str, Any]
    runs_root: str

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "settings": self.settings.to_dict(), "llm": dict(self.llm)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SynthTask:
        return cls(**{**data, "settings": SynthSettings(**data["settings"]),
                      "llm": dict(data.get("llm") or {})})

    def key(self) -> str:
        """Names the job's folder: the same task (a reload, a second tab) finds the same job."""
        import hashlib

        blob = json.dumps(self.to_dict(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def run_task(task: SynthTask, progress: Any = None, api_key: str | None = None) -> dict[str, Any]:
    """Generate, save and record the dataset of `task`; what the panel shows: {"dataset",
    "rejects" (paths), "summary"}. `progress(message, done, total)`."""
    from ragdash.data import load_corpus
    from ragdash.data.saved import record
    from ragdash.embeddings import configured
    from ragdash.llm.settings import LLMSettings
    from ragdash.rundir.root import RunsRoot
    from ragdash.synth.sample import sample
    from ragdash.synth.synthesize import synthesize
    from ragdash.synth.write import save

    root = RunsRoot(task.runs_root)
    llm = LLMSettings.from_config(task.llm, api_key=api_key)
    say = progress or (lambda message, done, total: None)
    say("reading the corpus", 0, 1)
    documents, _ = load_corpus(task.corpus, task.corpus_format)
    if not documents:
        raise ValueError(f"{task.corpus_name}: the corpus holds no usable document")
    with configured(root.path):  # MiniLM vectors through the runs root's embedding cache
        items = sample(documents, task.settings)
        result = synthesize(documents, task.settings, llm, items=items, cache=root.llm_cache,
                            progress=say)
    dataset, rejects = save(result, root.path, task.corpus_name)
    record(dataset, ORIGIN.format(name=task.corpus_name), task.corpus, task.corpus_format,
           task.corpus_name, len(result.kept))
    return {"dataset": str(dataset), "rejects": str(rejects), "summary": result.summary()}


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL file the job wrote (kept pairs or rejects)."""
    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
