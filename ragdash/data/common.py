"""Pieces every loader shares: the issue log, value checks, id and document registries."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ragdash.data.reading import loads
from ragdash.data.schema import Document, Example, Issue


class IssueLog:
    """Collects the issues found in one input file.

    Loaders log exactly one `error` per skipped record, so `Dataset.skipped` counts records.
    """

    def __init__(self, file: object):
        self.file = str(file)
        self.issues: list[Issue] = []

    def error(self, record: str, field: str, message: str) -> None:
        self.issues.append(Issue(self.file, record, field, message, "error"))

    def warn(self, record: str, field: str, message: str) -> None:
        self.issues.append(Issue(self.file, record, field, message, "warning"))


@dataclass
class Loaded:
    """What a dataset loader returns: examples with their record labels, and its own corpus."""

    examples: list[Example] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    records: int = 0
    extra: dict = field(default_factory=dict)


MAX_CHARS = {"question": 10_000, "answer": 50_000, "part": 50_000}
"""The longest question, answer and relevant part a dataset may hold, in characters: a longer
one is almost surely a mistake (a whole document pasted into a field) and would make scoring
slow or fragile, so its record is skipped with a located error."""


def within_limits(loaded: Loaded, log: IssueLog) -> None:
    """Drop from `loaded` the examples whose question, answer or a relevant part is longer than
    MAX_CHARS allows, one located error each."""
    kept, labels = [], []
    for ex, label in zip(loaded.examples, loaded.labels, strict=True):
        fields = [("question", "question", ex.question), ("answer", "answer", ex.answer),
                  *((f"relevant_parts[{i}]", "part", p) for i, p in enumerate(ex.parts))]
        over = next(((f, k, len(v)) for f, k, v in fields if len(v) > MAX_CHARS[k]), None)
        if over is None:
            kept.append(ex)
            labels.append(label)
            continue
        name, what, n = over
        log.error(label, name, f"the {what} is {n:,} characters long, over the limit of "
                               f"{MAX_CHARS[what]:,}; this record is skipped (was a whole "
                               "document pasted into the field?)")
    loaded.examples, loaded.labels = kept, labels


class BadValue(ValueError):
    """A field value that cannot be used; the message says why."""


def kind(value: object) -> str:
    return {dict: "an object", list: "a list", type(None): "null"}.get(
        type(value), type(value).__name__)


def as_text(value: object) -> str:
    """A text field: str, UTF-8 bytes, or a number (converted). Raises BadValue otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadValue(f"holds bytes that are not valid UTF-8, first at byte {exc.start} "
                           "of the value") from None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise BadValue("is missing")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise BadValue(f"expected text, got {kind(value)}")


def as_id(value: object) -> str:
    """An id: non-empty text or an integer (5.0, as pandas writes ints with gaps, gives '5')."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = as_text(value).strip()
    if not text:
        raise BadValue("is empty")
    return text


def optional_text(value: object) -> str:
    """A text field that may be missing (None or NaN give "")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return as_text(value)


def non_empty(value: object) -> str:
    text = as_text(value)
    if not text.strip():
        raise BadValue("is empty")
    return text


def parse_parts(value: object) -> list[object]:
    """A list of relevant parts: a list, a JSON list in a string, or a '||'-separated string
    (whose parts are stripped of surrounding whitespace)."""
    if isinstance(value, list | tuple):
        return list(value)
    text = as_text(value)
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            parsed = loads(stripped)
        except json.JSONDecodeError as exc:
            raise BadValue(f"looks like a JSON list but is not valid JSON: {exc.msg} "
                           f"(column {exc.colno})") from None
        except ValueError as exc:  # nested too deeply
            raise BadValue(f"looks like a JSON list but is not valid JSON: {exc}") from None
        if not isinstance(parsed, list):
            raise BadValue(f"expected a JSON list, got {kind(parsed)}")
        return parsed
    return [p.strip() for p in text.split("||")]


def clean_parts(parts: list[object], log: IssueLog, record: str, field: str) -> list[str]:
    """The non-empty parts, verbatim; each empty one is left out with a warning.
    Raises BadValue when an item is not text or when no part is left."""
    kept, empty = [], []
    for i, part in enumerate(parts):
        if not isinstance(part, str):
            raise BadValue(f"item {i} is {kind(part)}, expected text")
        if part.strip():
            kept.append(part)
        else:
            empty.append(i)
    if not kept:
        raise BadValue("has no non-empty relevant part" if parts else "has no relevant part")
    for i in empty:
        log.warn(record, f"{field}[{i}]", "relevant part is empty; it is left out")
    return kept


class SeenIds:
    """Question ids already kept, to skip duplicates."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}

    def is_duplicate(self, qid: str, record: str, log: IssueLog, field: str = "id") -> bool:
        """Log an error and return True when `qid` was kept before; otherwise remember it."""
        if qid in self.first:
            log.error(record, field, f"duplicate id '{qid}' (first used at {self.first[qid]}); "
                                     "this record is skipped")
            return True
        self.first[qid] = record
        return False


class DocumentSet:
    """Documents by id, in first-seen order.

    Empty texts are skipped with a warning. A repeated id is kept once; when its text differs,
    the first is kept and the repeat is an error (`strict`, one bad record of a corpus file) or a
    warning (a paragraph that a dataset file repeats with another text).
    """

    def __init__(self, log: IssueLog, *, strict: bool):
        self.log, self.strict = log, strict
        self.docs: dict[str, tuple[Document, str]] = {}

    def add(self, doc: Document, record: str, field: str = "text") -> None:
        if not doc.text.strip():
            self.log.warn(record, field, f"document '{doc.doc_id}' has an empty text; "
                                         "it is skipped")
            return
        first = self.docs.get(doc.doc_id)
        if first is None:
            self.docs[doc.doc_id] = (doc, record)
            return
        if first[0].text == doc.text:
            if self.strict:
                self.log.warn(record, "doc_id", f"duplicate doc id '{doc.doc_id}' (same text as "
                                                f"{first[1]}); kept once")
            return
        message = (f"duplicate doc id '{doc.doc_id}' with a different text from {first[1]}; "
                   "the first is kept")
        if self.strict:
            self.log.error(record, "doc_id", message)
        else:
            self.log.warn(record, field, message)

    def documents(self) -> list[Document]:
        return [doc for doc, _ in self.docs.values()]
