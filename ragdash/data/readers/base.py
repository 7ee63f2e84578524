"""What every corpus file reader returns, and how it says a file cannot be used."""

from __future__ import annotations

from dataclasses import dataclass

from ragdash.data.layout import Heading

MAX_DOCUMENT_BYTES = 64 * 1024**2
"""The one size limit of a corpus document, whatever its type: its file, the XML parts a .docx
unpacks to, the page content a PDF decompresses to and the text extracted from it are each at
most this (text in characters); a document over it is skipped as too large, before parsing where
the size is known beforehand."""


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


def too_large(what: str, unit: str = "bytes") -> Unreadable:
    """Unreadable('file too large') saying `what` MAX_DOCUMENT_BYTES `unit` (e.g. 'is larger
    than'); the limit is read at call time."""
    return Unreadable("file too large", f"{what} {MAX_DOCUMENT_BYTES:,} {unit}, the limit of one "
                                        "document; skipped: split it to include it")
