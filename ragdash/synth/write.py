"""Step 4: the kept pairs as a generic JSONL dataset that `ragdash run --dataset FILE --corpus
DOCS` takes as it is, and the rejected ones with their reason in a file beside it.

A dataset row: `id`, `question`, `answer`, `relevant_parts` (the verified spans, the document's
own text) and its provenance: `source` ("synth"), `hops` (1, or 2 for multi-hop),
`parts_doc_ids`, `parts_start` and `parts_end` (character offsets of each part in its
document's text), `synth_chunk_ids` (the chunk(s) the question was written on, `ragdash.chunking`
ids), `synth_chunker`, `synth_model` and `synth_prompt` (the hash of the prompts'
text, `ragdash.llm.prompts.synth_prompt_version`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ragdash.evidence.output import to_jsonl, write_jsonl
from ragdash.rundir.root import RunsRoot
from ragdash.synth.records import SynthResult
from ragdash.synth.settings import SOURCE

REPLY_CHARS = 2000
"""The most characters of a rejected reply kept in the rejects file."""


def dataset_rows(result: SynthResult) -> list[dict[str, Any]]:
    """The kept pairs as generic dataset records, in sample order."""
    rows = []
    for a in result.kept:
        assert a.reply is not None
        rows.append({"id": a.qid, "question": a.reply.question, "answer": a.reply.answer,
                     "relevant_parts": [p.text for p in a.parts], "source": SOURCE,
                     "hops": len(a.parts), "parts_doc_ids": [p.doc_id for p in a.parts],
                     "parts_start": [p.start for p in a.parts],
                     "parts_end": [p.end for p in a.parts],
                     "synth_chunk_ids": [p.chunk_id for p in a.parts],
                     "synth_chunker": result.settings.chunker, "synth_model": result.model,
                     "synth_prompt": result.prompt_version})
    return rows


def reject_rows(result: SynthResult) -> list[dict[str, Any]]:
    """The rejected pairs: id, reason (a `REASONS` key), why (in words), what the model wrote,
    the documents and chunks asked about, and the reply (cut at REPLY_CHARS)."""
    rows = []
    for a in result.rejected:
        r = a.reply
        rows.append({"id": a.qid, "reason": a.reason, "why": a.why(),
                     "question": r.question if r else None, "answer": r.answer if r else None,
                     "spans": list(r.spans) if r else [],
                     "doc_ids": [c.doc_id for c in a.chunks],
                     "chunk_ids": [c.chunk_id for c in a.chunks],
                     "reply": a.raw[:REPLY_CHARS] if a.raw is not None else None})
    return rows


def rejects_path(output: str | Path) -> Path:
    """The rejects file beside a dataset file: `out.jsonl` -> `out.rejects.jsonl`."""
    output = Path(output)
    return output.with_name(f"{output.stem}.rejects.jsonl")


def write(result: SynthResult, output: str | Path) -> tuple[Path, Path]:
    """Write the dataset and the rejects beside it (atomically); their paths."""
    return (write_jsonl(dataset_rows(result), output),
            write_jsonl(reject_rows(result), rejects_path(output)))


def save(result: SynthResult, root: str | Path, name: str) -> tuple[Path, Path]:
    """Write the dataset under `<root>/_datasets/`, named after the corpus `name` and its
    content (the same content gives the same file), and its rejects beside it."""
    digest = hashlib.sha256(to_jsonl(dataset_rows(result)).encode("utf-8")).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name.split(".")[0])[:60] or "corpus"
    return write(result, RunsRoot(root).datasets / f"{stem}-synth-{digest}.jsonl")
