"""A person's review of found evidence: per question, accept it, reject it (the question is left
out, with that reason), or pick another candidate; then save the result as a dataset file.

Decisions are strings: ACCEPT, REJECT or `pick:<i>` (candidate i, 0-based, best first; a part
the person pasted or picked from the corpus is added as a candidate, `ragdash.evidence.manual`);
a question without a decision keeps its automatic evidence (`parts_source` "auto").
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdash.evidence.output import dataset_rows, to_jsonl, write_jsonl
from ragdash.evidence.records import USER, EvidenceResult, QuestionEvidence
from ragdash.rundir.io import atomic_path
from ragdash.rundir.root import RunsRoot

ACCEPT, REJECT, PICK = "accept", "reject", "pick:"
REJECTED = "rejected in review"
"""Where reviewed datasets are saved under the runs root (no run.json: not a run)."""


def pick(i: int) -> str:
    return f"{PICK}{i}"


def choices(qe: QuestionEvidence) -> list[str]:
    """The decisions open for a question: accept (when something was found), pick each other
    candidate, reject."""
    out = [ACCEPT] if qe.found else []
    out += [pick(i) for i in range(len(qe.candidates)) if qe.kept != [i]]
    return [*out, REJECT]


def describe(qe: QuestionEvidence, decision: str) -> str:
    """A decision in words, for the review panel."""
    if decision == ACCEPT:
        return f"Accept the found part{'s' if len(qe.kept) > 1 else ''} " \
               f"(candidate {', '.join(str(i + 1) for i in qe.kept)})"
    if decision == REJECT:
        return "Reject: leave the question out"
    i = int(decision[len(PICK):])
    if qe.candidates[i].method == USER:
        return f"Use your own part (candidate {i + 1})"
    return f"Use candidate {i + 1} instead (confidence {qe.candidates[i].confidence:.2f})"


def decide(qe: QuestionEvidence, decision: str | None) -> QuestionEvidence:
    """The question's evidence after a decision (None: unchanged)."""
    if decision is None:
        return qe
    if decision == ACCEPT:
        if not qe.found:
            raise ValueError(f"question {qe.qid}: nothing was found to accept")
        return replace(qe, reviewed=True)
    if decision == REJECT:
        return replace(qe, kept=[], reviewed=True, reason=REJECTED)
    if decision.startswith(PICK) and decision[len(PICK):].isdigit():
        i = int(decision[len(PICK):])
        if i < len(qe.candidates):
            return replace(qe, kept=[i], reviewed=True, reason=None)
    raise ValueError(f"question {qe.qid}: unknown decision {decision!r}")


def apply(result: EvidenceResult, decisions: Mapping[str, str]) -> EvidenceResult:
    """The result with every decision applied."""
    return replace(result, questions=[decide(q, decisions.get(q.qid))
                                      for q in result.questions])


def status(qe: QuestionEvidence, decision: str | None) -> str:
    """What will be written for a question: auto, accepted, picked, rejected or no evidence."""
    if decision is None:
        return "auto" if qe.found else "no evidence"
    return {ACCEPT: "accepted", REJECT: "rejected"}.get(decision, "picked")


def table(result: EvidenceResult, decisions: Mapping[str, str]) -> list[dict[str, object]]:
    """One row per question for the review overview: what will be saved (the decision
    applied) and whether a person decided it (`reviewed`), the least confident (automatic
    choice) first, questions without evidence last."""
    rows = []
    for q in result.questions:
        now = decide(q, decisions.get(q.qid))
        best = now.parts[0] if now.found else None
        rows.append({"qid": q.qid, "question": q.question, "answer": q.answer,
                     "evidence": best.text if best else now.reason,
                     "confidence": best.confidence if best else None,
                     "candidates": len(q.candidates),
                     "status": status(q, decisions.get(q.qid)),
                     "reviewed": q.qid in decisions,
                     "_order": q.parts[0].confidence if q.found else None})
    rows.sort(key=lambda r: (r["_order"] is None, r["_order"] or 0))
    return [{k: v for k, v in r.items() if k != "_order"} for r in rows]


def resume_at(order: Sequence[str], decisions: Mapping[str, str]) -> str | None:
    """The question a review takes up (a reload, the same files uploaded again): the first of
    `order` without a decision, else the first; None for no question."""
    return next((q for q in order if q not in decisions), order[0] if order else None)


REVIEWED_MARK = "✓"
"""Before a reviewed question's name in the review's question list."""


def question_label(qe: QuestionEvidence, decisions: Mapping[str, str], width: int = 90) -> str:
    """A question in the review's list: '✓ id · question' once decided, 'id · question'
    before; the question cut at `width` characters."""
    text = qe.question if len(qe.question) <= width else qe.question[:width] + "…"
    return f"{REVIEWED_MARK + ' ' if qe.qid in decisions else ''}{qe.qid} · {text}"


def save(result: EvidenceResult, decisions: Mapping[str, str], root: str | Path,
         name: str) -> Path:
    """Write the reviewed dataset as JSONL under `<root>/_datasets/`, named after `name` and
    its content; the same content gives the same file."""
    rows = dataset_rows(apply(result, decisions))
    digest = hashlib.sha256(to_jsonl(rows).encode("utf-8")).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name.split(".")[0])[:60] or "dataset"
    return write_jsonl(rows, RunsRoot(root).datasets / f"{stem}-evidence-{digest}.jsonl")


# --- a review kept on disk, so that a reload or the same files uploaded again find it ---------

STATE_VERSION = 1


def state_file(dataset: str | Path, key: Sequence[object]) -> Path:
    """Where the review of an uploaded dataset is kept: beside the upload (`_uploads/<sha256>/`,
    so its content names it), named by the hash of what else made the result (`key`: the corpus
    file, the formats, the question limit)."""
    digest = hashlib.sha256(json.dumps([str(k) for k in key]).encode()).hexdigest()[:16]
    return Path(dataset).parent / f".review-{digest}.json"  # no upload has a leading dot


def store(path: str | Path, result: EvidenceResult, decisions: Mapping[str, str],
          saved: Mapping[str, Any] | None = None) -> None:
    """Write a review (the found evidence, the decisions, the saved dataset if any) as JSON,
    atomically."""
    data = {"version": STATE_VERSION, "time": time.time(), "result": result.to_dict(),
            "decisions": dict(decisions), "saved": dict(saved) if saved else None}
    with atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(data, ensure_ascii=False, default=str), encoding="utf-8")


def restore(path: str | Path) -> tuple[EvidenceResult, dict[str, str], dict | None, float] | None:
    """(result, decisions, saved, time) of a stored review; None when there is none, or when
    the file is not one this version wrote whole (a half-written or foreign file is ignored)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != STATE_VERSION:
            return None
        result = EvidenceResult.from_dict(data["result"])
        decisions = {str(k): str(v) for k, v in data["decisions"].items()}
        by_id = {q.qid: q for q in result.questions}
        for qid, decision in decisions.items():
            decide(by_id[qid], decision)  # raises on a decision this result cannot take
        saved = data.get("saved")
        return result, decisions, saved if isinstance(saved, dict) else None, \
            float(data.get("time", 0))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
