"""PDF (.pdf) with pypdf: the text layer of every page, pages joined by a blank line, and the
offset where each page starts (so a chunk knows its page).

The work on one PDF is bounded: the page content it decompresses (a stream shared by several
pages counts for each, as each parses it) and the text it gives stay under MAX_DOCUMENT_BYTES,
the extraction stops after MAX_SECONDS (checked between pages), and a page past one of pypdf's
own limits stops it too; such a PDF is skipped with the reason."""

from __future__ import annotations

import io
import logging
from time import monotonic

from ragdash.data.layout import TextBuilder
from ragdash.data.readers import base
from ragdash.data.readers.base import Extracted, Unreadable, too_large

MAX_SECONDS = 60.0  # a PDF whose text takes longer to extract is skipped

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


def _content_bytes(page) -> int:
    """The decompressed size of a page's content streams (pypdf keeps them for extraction)."""
    contents = page.get("/Contents")
    if contents is None:
        return 0
    contents = contents.get_object()
    streams = contents if isinstance(contents, list) else [contents]
    return sum(len(s.get_object().get_data()) for s in streams)


def _too_slow(number: int, pages: int) -> Unreadable:
    return Unreadable("PDF too slow to read",
                      f"is a PDF whose text took more than {MAX_SECONDS:g} s to extract "
                      f"(stopped before page {number} of {pages}); skipped: convert it to text "
                      "(e.g. pdftotext) to include it")


def read_pdf(data: bytes) -> Extracted:
    from pypdf.errors import LimitReachedError

    pages = list(_open(data).pages)
    if not pages:
        raise Unreadable("corrupt file", "is a PDF with no page; skipped")
    out, failed, blank = TextBuilder(), [], []
    started, content, size = monotonic(), 0, 0
    for number, page in enumerate(pages, 1):
        if monotonic() - started > MAX_SECONDS:
            raise _too_slow(number, len(pages))
        out.new_page()
        try:
            content += _content_bytes(page)
            if content > base.MAX_DOCUMENT_BYTES:
                raise too_large(f"is a PDF whose page content (pages 1 to {number}) "
                                "decompresses to more than")
            text = page.extract_text() or ""
        except LimitReachedError as exc:
            raise Unreadable("file too large", f"is a PDF whose page {number} goes past a "
                                               f"limit of pypdf ({exc}); skipped") from None
        except Unreadable:
            raise
        except Exception:  # one damaged page: its text is left out, the others are kept
            failed.append(number)
            continue
        size += len(text)
        if size > base.MAX_DOCUMENT_BYTES:
            raise too_large("holds text longer than", "characters")
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
