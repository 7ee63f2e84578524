"""Reading one corpus file into text and layout, by its extension: .txt and .md (UTF-8), .pdf
(pypdf), .html/.htm (trafilatura) and .docx (python-docx).

    extracted = read_document("handbook.pdf", data)   # Extracted(text, pages, headings)

A file that cannot be used raises `Unreadable` with a short reason (counted in the corpus
summary) and a message saying why; any failure inside a parser is reported as a corrupt file. A
file whose first bytes show another type than its extension (`magic`) is skipped before any
parser sees it, and so is text past the one limit of a document (`MAX_DOCUMENT_BYTES`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from ragdash.data.readers import base, magic
from ragdash.data.readers.base import Extracted, Unreadable, too_large
from ragdash.data.readers.pdf import read_pdf
from ragdash.data.readers.plain import read_markdown, read_text
from ragdash.data.readers.webpage import read_html
from ragdash.data.readers.word import read_docx

READERS: dict[str, tuple[str, Callable[[bytes], Extracted]]] = {
    ".txt": ("text", read_text), ".md": ("Markdown", read_markdown), ".pdf": ("PDF", read_pdf),
    ".html": ("HTML", read_html), ".htm": ("HTML", read_html), ".docx": ("Word", read_docx),
}
"""Extension -> (kind of file, reader)."""
SUFFIXES = tuple(READERS)
LAYOUT_SUFFIXES = (".pdf", ".html", ".htm", ".docx")
"""Types read since documents keep their layout (earlier versions ignored them)."""


def suffix(name: str) -> str:
    return PurePosixPath(name).suffix.lower()


def readable(name: str) -> bool:
    return suffix(name) in READERS


def read_document(name: str, data: bytes) -> Extracted:
    """The text and layout of file `name` (its extension picks the reader); Unreadable if not."""
    ext = suffix(name)
    kind, reader = READERS[ext]
    other = magic.mismatch(ext, data)
    if other:
        raise Unreadable("mislabelled file", f"has the extension {ext} but is {other}; "
                                             "skipped: give it the extension of its type")
    try:
        got = reader(data)
    except Unreadable:
        raise
    except Exception as exc:  # parsers of untrusted files fail in many ways: one bad file
        if "text node too long" in str(exc).lower() or "huge text node" in str(exc).lower():
            raise Unreadable("file too large", f"is a {kind} file with a run of text of more "
                             "than 10,000,000 characters in one piece (one XML text node, the "
                             "most the XML parser reads); skipped: break it into paragraphs "
                             "to include it") from None
        raise Unreadable("corrupt file", f"is not a readable {kind} file "
                                          f"({type(exc).__name__}: {exc}); skipped") from None
    if len(got.text) > base.MAX_DOCUMENT_BYTES:
        raise too_large("holds text longer than", "characters")
    return got


__all__ = ["LAYOUT_SUFFIXES", "READERS", "SUFFIXES", "Extracted", "Unreadable", "read_document",
           "readable", "suffix", "too_large"]
