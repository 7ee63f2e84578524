"""PDF (.pdf) with pypdf: the text layer of every page, pages joined by a blank line, and the
offset where each page starts (so a chunk knows its page)."""

from __future__ import annotations

import io
import logging

from ragdash.data.layout import TextBuilder
from ragdash.data.readers.base import Extracted, Unreadable

# pypdf logs repairs of damaged files ("EOF marker not found") without naming the file; the
# reader reports what matters as issues that do
logging.getLogger("pypdf").setLevel(logging.ERROR)


def _open(data: bytes):
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))  # a damaged file raises: read_document reports it
    except DependencyError as exc:
        raise Unreadable("encrypted PDF", f"is an encrypted PDF that needs a missing library "
                                          f"({exc}); skipped") from None
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")  # many PDFs are encrypted with an empty user password
        except (DependencyError, NotImplementedError, PdfReadError) as exc:
            raise Unreadable("encrypted PDF", f"is an encrypted PDF that cannot be opened "
                                              f"({exc}); skipped") from None
        if not opened:
            raise Unreadable("encrypted PDF", "is an encrypted PDF (it needs a password); "
                                              "skipped: save a copy without a password to "
                                              "include it")
    return reader


def read_pdf(data: bytes) -> Extracted:
    pages = list(_open(data).pages)
    if not pages:
        raise Unreadable("corrupt file", "is a PDF with no page; skipped")
    out, failed, blank = TextBuilder(), [], []
    for number, page in enumerate(pages, 1):
        out.new_page()
        try:
            text = page.extract_text() or ""
        except Exception:  # one damaged page: its text is left out, the others are kept
            failed.append(number)
            continue
        if text.strip():
            out.add(text)
        else:
            blank.append(number)
    if not out.blocks:
        if failed:
            raise Unreadable("corrupt file", f"is a PDF whose pages cannot be read (pages "
                                             f"{_numbers(failed)}); skipped")
        raise Unreadable("PDF without a text layer",
                         f"is a PDF with no text layer ({len(pages)} page(s), scanned images or "
                         "blank); skipped: run OCR on it (e.g. ocrmypdf) to include it")
    notes = ((f"the text of page(s) {_numbers(failed)} of {len(pages)} cannot be read; they "
              "are left out",) if failed else ()) + (
        (f"page(s) {_numbers(blank)} of {len(pages)} have no text layer (blank, or scanned "
         "images); nothing is read from them",) if blank else ())
    return Extracted(out.text(), out.page_starts(), warnings=notes)


def _numbers(pages: list[int]) -> str:
    shown = ", ".join(map(str, pages[:10]))
    return shown + (f" and {len(pages) - 10} more" if len(pages) > 10 else "")
