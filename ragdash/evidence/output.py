"""What found evidence becomes: examples for a run, issues for the questions left out, a generic
JSONL dataset (id, question, answer, relevant_parts + metadata) and agreement with gold parts.

Each part found is marked: `parts_source` "auto" (or "reviewed" once a person accepted or
picked it), `parts_method` ("answer", "llm", or "user": a part the person chose),
`parts_confidence` (one score in [0, 1] per part) and `parts_doc_ids`. A question without
evidence is written with no part, `parts_source` "none" and `parts_note` (why): loading the file
lists it as skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragdash.data.schema import PARTS_AUTO, PARTS_NONE, PARTS_REVIEWED, Dataset, Example, Issue
from ragdash.evidence.records import EvidenceResult, QuestionEvidence
from ragdash.evidence.sentences import split_sentences
from ragdash.rundir.io import atomic_path

META_KEYS = ("parts_source", "parts_method", "parts_confidence", "parts_doc_ids", "parts_note")
"""The metadata the finder writes (an input's own values of these are replaced)."""


def part_meta(qe: QuestionEvidence) -> dict[str, Any]:
    """The metadata of a question's evidence (see the module docstring)."""
    if not qe.found:
        return {"parts_source": PARTS_NONE, "parts_note": qe.reason or "no evidence"}
    parts = qe.parts
    return {"parts_source": PARTS_REVIEWED if qe.reviewed else PARTS_AUTO,
            "parts_method": parts[0].method,
            "parts_confidence": [p.confidence for p in parts],
            "parts_doc_ids": [p.doc_id for p in parts]}


def _meta(qe: QuestionEvidence) -> dict[str, Any]:
    return {k: v for k, v in qe.meta.items() if k not in META_KEYS}


def examples(result: EvidenceResult) -> list[Example]:
    """The questions with evidence, as examples whose parts are the found ones."""
    return [Example(q.qid, q.question, q.answer, [p.text for p in q.parts],
                    {**_meta(q), **part_meta(q)}, q.answers) for q in result.found]


def missing_issues(result: EvidenceResult, file: str) -> list[Issue]:
    """One error issue per question left without evidence (it is not in the run)."""
    return [Issue(file, f"id {q.qid}", "relevant_parts",
                  f"no evidence found: {q.reason}; the question is left out", "error")
            for q in result.missing]


def completed(dataset: Dataset, result: EvidenceResult) -> Dataset:
    """The dataset with its examples replaced by those with evidence; the others are listed
    as issues (skipped records)."""
    file = str(dataset.source.get("dataset", "dataset"))
    return Dataset(examples(result), dataset.documents,
                   [*dataset.issues, *missing_issues(result, file)],
                   {**dataset.source, "relevant_parts": "found by ragdash.evidence"})


def dataset_rows(result: EvidenceResult) -> list[dict[str, Any]]:
    """Every question as a generic dataset record, in dataset order."""
    return [{"id": q.qid, "question": q.question, "answer": q.answer,
             **({"answers": list(q.answers)} if len(q.answers) > 1 else {}),
             "relevant_parts": [p.text for p in q.parts], **_meta(q), **part_meta(q)}
            for q in result.questions]


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows)


def write_jsonl(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write records as JSONL, atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(to_jsonl(rows), encoding="utf-8")
    return path


def agreement(found: Mapping[str, Sequence[str]],
              gold: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """How found parts compare with a dataset's own (gold) parts, by question id, over the
    questions with both: `equal`, the share where some found part is a gold part; `overlap`,
    where some found part and some gold part hold one another or share a sentence."""
    rows = [(found[q], gold[q]) for q in found if found[q] and gold.get(q)]
    equal = [bool({p.strip() for p in f} & {g.strip() for g in gs}) for f, gs in rows]
    overlap = [any(a in b or b in a or _shares_sentence(a, b) for a in f for b in gs)
               for f, gs in rows]
    return {"questions": len(rows), "equal": sum(equal), "overlap": sum(overlap),
            "equal_share": round(sum(equal) / len(rows), 4) if rows else None,
            "overlap_share": round(sum(overlap) / len(rows), 4) if rows else None}


def found_parts(result: EvidenceResult) -> dict[str, list[str]]:
    """{qid: found parts} of the questions with evidence."""
    return {q.qid: [p.text for p in q.parts] for q in result.found}


def _shares_sentence(a: str, b: str) -> bool:
    return bool({s.strip() for s in split_sentences(a)} & {s.strip() for s in split_sentences(b)})
