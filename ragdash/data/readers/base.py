"""What every corpus file reader returns, and how it says a file cannot be used."""

from __future__ import annotations

from dataclasses import dataclass

from ragdash.data.layout import Heading


@dataclass(frozen=True)
class Extracted:
    """A file's text and layout (page starts and headings as character offsets in `text`), and
    problems that did not stop the file from being read (e.g. one damaged page)."""

    text: str
    pages: tuple[int, ...] = ()
    headings: tuple[Heading, ...] = ()
    warnings: tuple[str, ...] = ()


class Unreadable(Exception):
    """A file that is skipped: `reason` is a short kind counted in the corpus summary (e.g.
    'encrypted PDF': a noun phrase whose first 'file', 'PDF' or 'page' takes the plural), the
    message says what is wrong and, where possible, what to do."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
