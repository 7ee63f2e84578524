"""Matching a system's records to the run's questions: by id, else by the question's text
exactly, then with whitespace collapsed and case folded. A record that matches no question, or
several, and a second record for a question already matched are listed with their place in the
file (warnings); the first record of a question is kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ragdash.data.schema import DataError, Issue
from ragdash.systems.formats import SystemFile, SystemRecord
from ragdash.terminal import name as shown

LISTED = 20
"""Records of each kind of problem listed by name (the rest are counted)."""


def normalized(text: str) -> str:
    """`text` with runs of whitespace as one space, trimmed, case folded."""
    return " ".join(text.split()).casefold()


@dataclass
class Matched:
    """A system's records matched to the run's questions: `records` {qid: record} in the
    dataset's order, how each was matched (`by`: id, text, normalized), the problems (located
    warnings) and their counts."""

    name: str
    file: SystemFile
    records: dict[str, SystemRecord]
    questions: int
    by: dict[str, int] = field(default_factory=dict)
    unmatched: list[SystemRecord] = field(default_factory=list)
    ambiguous: list[tuple[SystemRecord, list[str]]] = field(default_factory=list)
    duplicates: list[tuple[SystemRecord, str]] = field(default_factory=list)

    @property
    def missing(self) -> int:
        """Questions of the run the file has no record for."""
        return self.questions - len(self.records)

    def issues(self) -> list[Issue]:
        """Every problem as a located warning (at most LISTED of each kind, then a count)."""
        path, out = self.file.path, list(self.file.warnings)
        kinds = [
            (self.unmatched, lambda r: (r.record, "question", "matches no question of the run "
                                        "by id or text: " + _said(r))),
            (self.ambiguous, lambda x: (x[0].record, "question", "matches "
                                        f"{len(x[1])} questions of the run by text "
                                        f"({', '.join(shown(q, 30) for q in x[1][:5])}): "
                                        "give it an id; left out")),
            (self.duplicates, lambda x: (x[0].record, "question", "is a second record for "
                                         f"question {shown(x[1], 40)} (the first is "
                                         f"{self.records[x[1]].record}); left out")),
        ]
        for items, say in kinds:
            for item in items[:LISTED]:
                record, field_, message = say(item)
                out.append(Issue(path, record, field_, message, "warning"))
            if len(items) > LISTED:
                out.append(Issue(path, "-", "question", f"and {len(items) - LISTED:,} more "
                                 "such records", "warning"))
        return out

    def summary(self) -> dict:
        """The counts the run's manifest keeps."""
        return {"file": self.file.path, "format": self.file.format,
                "records": len(self.file.records), "matched": len(self.records),
                "questions": self.questions, "by": dict(self.by),
                "unmatched": len(self.unmatched), "ambiguous": len(self.ambiguous),
                "duplicates": len(self.duplicates),
                "answers": sum(1 for r in self.records.values() if r.answer)}


def _said(record: SystemRecord) -> str:
    parts = []
    if record.qid is not None:
        parts.append(f"id {shown(record.qid, 40)}")
    if record.questions:
        parts.append(shown(record.questions[0], 80))
    return ", ".join(parts) or "(no id or question)"


def match(name: str, file: SystemFile, qids: Sequence[str], questions: Sequence[str]
          ) -> Matched:
    """`file`'s records matched to the run's questions (`qids`, `questions`, in the dataset's
    order). DataError when not one record matches: the file is another dataset's, or its ids
    and questions are written otherwise."""
    exact: dict[str, list[str]] = {}
    loose: dict[str, list[str]] = {}
    for q, text in zip(qids, questions, strict=True):
        exact.setdefault(str(text), []).append(str(q))
        loose.setdefault(normalized(str(text)), []).append(str(q))
    known = set(map(str, qids))
    found: dict[str, SystemRecord] = {}
    out = Matched(name, file, {}, len(known))
    for rec in file.records:
        qid, how, many = _find(rec, known, exact, loose)
        if many:
            out.ambiguous.append((rec, many))
            continue
        if qid is None:
            out.unmatched.append(rec)
            continue
        if qid in found:
            out.duplicates.append((rec, qid))
            continue
        found[qid] = rec
        out.by[how] = out.by.get(how, 0) + 1
    out.records = {str(q): found[str(q)] for q in qids if str(q) in found}
    if not out.records:
        first = file.records[0] if file.records else None
        said = f" (its first, {first.record}: {_said(first)})" if first else ""
        raise DataError(Issue(file.path, "-", "question", f"not one of its {len(file.records):,} "
                              f"records matches a question of the run by id or by question "
                              f"text{said}: is it the results of this dataset's questions?"))
    return out


def _find(rec: SystemRecord, known: set[str], exact: dict[str, list[str]],
          loose: dict[str, list[str]]) -> tuple[str | None, str, list[str]]:
    """(qid, how, the qids when the text matches several) of one record."""
    if rec.qid is not None and rec.qid in known:
        return rec.qid, "id", []
    for table, how, key in ((exact, "text", str), (loose, "normalized", normalized)):
        for text in rec.questions:
            hits = list(dict.fromkeys(table.get(key(text), [])))
            if len(hits) == 1:
                return hits[0], how, []
            if len(hits) > 1:
                return None, how, hits
    return None, "", []
