"""The records every loader produces, and the problems it reports."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from ragdash.data.layout import Heading

Severity = Literal["error", "warning"]

PARTS_AUTO = "auto"
"""`parts_source` of parts found by the evidence finder (`parts_method` says how)."""
PARTS_REVIEWED = "reviewed"
"""`parts_source` of parts a person accepted or picked on the Data page."""
PARTS_NONE = "none"
"""`parts_source` of a question left without evidence (`parts_note` says why): loading the
dataset skips it."""


def gold_answers(answer: str, more: Iterable[str] = ()) -> tuple[str, ...]:
    """Every gold answer of a question: `answer` first, then `more`, verbatim, without blank
    ones or repeats."""
    return tuple(dict.fromkeys(a for a in (answer, *more) if a.strip()))


@dataclass(frozen=True)
class Example:
    """One evaluation triple (Q, A, P) plus free-form metadata (type, level, ...).

    `answers`: every gold answer (SQuAD gives several), `answer` first; filled from `answer`
    alone when not given (see `gold_answers`)."""

    qid: str
    question: str
    answer: str
    parts: list[str]
    meta: dict = field(default_factory=dict)
    answers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "answers", gold_answers(self.answer, self.answers))


@dataclass(frozen=True)
class Document:
    """One corpus document before chunking. Documents read from PDF, HTML, DOCX or Markdown
    files also keep their layout (`ragdash.data.layout`): `pages`, the offset in `text` where each
    page starts (PDF), and `headings`, the section headings with their offsets."""

    doc_id: str
    title: str
    text: str
    pages: tuple[int, ...] = ()
    headings: tuple[Heading, ...] = ()


@dataclass(frozen=True)
class Issue:
    """A problem found in an input file, located by file, record and field.

    `error` issues mean the record was skipped; `warning` issues keep it.
    """

    file: str
    record: str
    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.file}: record {self.record}, field '{self.field}': {self.message}"


class DataError(Exception):
    """A fatal input problem (unreadable file, missing column): nothing can be loaded."""

    def __init__(self, issue: Issue):
        super().__init__(str(issue))
        self.issue = issue

    def read_as_given(self, fmt: str, given_by: str, instead: str) -> DataError:
        """This error of a file read in the format `fmt` someone gave (`given_by`, e.g. a
        command-line option), saying so and how to have the format detected (`instead`)."""
        i = self.issue
        return DataError(Issue(i.file, i.record, i.field, f"{i.message} (read as '{fmt}' "
                               f"because the format was given: {given_by}; {instead})",
                               i.severity))


@dataclass
class Dataset:
    """Examples and corpus loaded from files, with every problem met on the way."""

    examples: list[Example]
    documents: list[Document]
    issues: list[Issue] = field(default_factory=list)
    source: dict = field(default_factory=dict)

    @property
    def skipped(self) -> int:
        """Number of records skipped because of an error."""
        return sum(1 for i in self.issues if i.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for i in self.issues if i.severity == "warning")
