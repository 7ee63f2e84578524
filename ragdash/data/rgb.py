"""RGB's counterfactual robustness split (Chen et al., AAAI 2024, "Benchmarking Large Language
Models in Retrieval-Augmented Generation", `en_fact`): JSON lines, each a question (`query`),
its true answer (`answer`), a false one (`fakeanswer`), passages stating the true answer
(`positive`), the same passages rewritten with the false answer (`positive_wrong`) and noise
(`negative`). CC BY-NC-SA 4.0: not for commercial use; share alike.

`answer` is a text, or a list whose items must all occur in a reply, an item being a text or a
list of alternative spellings of which one must occur (RGB's `checkanswer`): read here as
`Answer`, a tuple of such groups. A record without a question, answer or counterfactual passage
is skipped with a located error (`ragdash.data.common.IssueLog`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragdash.data.common import BadValue, IssueLog, SeenIds, as_id, as_text, kind, non_empty
from ragdash.data.reading import decode, loads, read_file, undecodable
from ragdash.data.schema import Issue

LICENCE = "RGB data (Chen et al., AAAI 2024) is CC BY-NC-SA 4.0: not for commercial use."

Answer = tuple[tuple[str, ...], ...]
"""The true answer as groups: every group must occur in a reply, any one text of a group."""


@dataclass(frozen=True)
class FactRecord:
    """One counterfactual question of RGB (`en_fact`)."""

    qid: str
    query: str
    answer: Answer
    fake_answer: str
    positive: tuple[str, ...]
    positive_wrong: tuple[str, ...]
    negative: tuple[str, ...]


def as_answer(value: object) -> Answer:
    """RGB's answer field as groups: a text is one group of one; a list gives a group per item,
    a list item being a group of alternatives. BadValue when a group (or the whole) is empty."""
    items = value if isinstance(value, list) else [value]
    groups = []
    for item in items:
        texts = item if isinstance(item, list) else [item]
        group = tuple(t for t in (as_text(x).strip() for x in texts) if t)
        if not group:
            raise BadValue("holds an empty answer")
        groups.append(group)
    if not groups:
        raise BadValue("is empty")
    return tuple(groups)


def _passages(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BadValue(f"expected a list of passages, got {kind(value)}")
    return tuple(as_text(p) for p in value)


def parse_record(record: object) -> FactRecord:
    """The record, or BadValue with the field at fault as its second argument."""
    field = "(record)"
    try:
        if not isinstance(record, dict):
            raise BadValue(f"expected a JSON object, got {kind(record)}")
        field = "id"
        qid = as_id(record.get("id"))
        field = "query"
        query = non_empty(record.get("query"))
        field = "answer"
        answer = as_answer(record.get("answer"))
        field = "fakeanswer"
        fake = as_text(record.get("fakeanswer") or "")
        field = "positive_wrong"
        wrong = _passages(record.get("positive_wrong"))
        if not any(p.strip() for p in wrong):
            raise BadValue("holds no passage: nothing states the false answer")
        field = "positive"
        positive = _passages(record.get("positive"))
        field = "negative"
        negative = _passages(record.get("negative"))
    except BadValue as exc:
        raise BadValue(str(exc), field) from None
    return FactRecord(qid, query, answer, fake, positive, wrong, negative)


def load_fact(path: str | Path, limit: int | None = None) -> tuple[list[FactRecord], list[Issue]]:
    """The records of an RGB counterfactual file (JSON lines, plain or .gz), the first `limit`
    valid ones, and the issues met (one error per skipped record). DataError when the file
    cannot be read."""
    raw = read_file(path)
    text = decode(raw.data)
    log, seen, out = IssueLog(path), SeenIds(), []
    for n, line in enumerate(text.text.splitlines(), start=1):
        if not line.strip():
            continue
        if limit is not None and len(out) >= limit:
            break
        label = f"line {n}"
        try:
            parsed = loads(line)
        except ValueError as exc:
            log.error(label, "(record)", f"is not valid JSON: {exc}")
            continue
        if bad := undecodable(parsed, text):
            log.error(label, *bad)
            continue
        try:
            rec = parse_record(parsed)
        except BadValue as exc:
            log.error(label, exc.args[1], str(exc.args[0]))
            continue
        if seen.is_duplicate(rec.qid, label, log, "id"):
            continue
        out.append(rec)
    return out, log.issues
