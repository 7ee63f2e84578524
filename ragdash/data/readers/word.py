"""Word (.docx) with python-docx: paragraphs and tables in body order, blank lines between
them; paragraphs in Title and Heading 1-3 styles are noted as headings."""

from __future__ import annotations

import io
import re
import zipfile

from ragdash.data.layout import TextBuilder
from ragdash.data.readers.base import Extracted, Unreadable

MAX_UNPACKED_BYTES = 512 * 1024**2  # a .docx that unpacks to more is refused (zip bomb guard)
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # password-protected .docx and old .doc files
_HEADING = re.compile(r"heading (\d)$", re.IGNORECASE)


def _level(style_name: str) -> int | None:
    if style_name.lower() == "title":
        return 1
    m = _HEADING.match(style_name)
    return int(m.group(1)) if m else None


def _check_package(data: bytes) -> None:
    if data.startswith(_OLE):
        raise Unreadable("encrypted or old Word file",
                         "is a password-protected Word file or an old binary .doc renamed "
                         ".docx; skipped: save it as an unprotected .docx to include it")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # not a zip: read_document reports it
        size = sum(i.file_size for i in zf.infolist())
    if size > MAX_UNPACKED_BYTES:
        raise Unreadable("file too large", f"is a .docx file that unpacks to more than "
                                      f"{MAX_UNPACKED_BYTES} bytes; skipped")


def _distinct(cells: list) -> list:
    """A row's cells, a merged cell once (python-docx repeats it for each grid column)."""
    seen, out = set(), []
    for cell in cells:
        if id(cell._tc) not in seen:
            seen.add(id(cell._tc))
            out.append(cell)
    return out


def read_docx(data: bytes) -> Extracted:
    import docx
    from docx.table import Table

    _check_package(data)
    document = docx.Document(io.BytesIO(data))
    out = TextBuilder()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = [" | ".join(" ".join(cell.text.split()) for cell in _distinct(row.cells))
                    for row in block.rows]
            out.add("\n".join(rows))
        else:
            style = block.style.name if block.style is not None else ""
            out.add(block.text, _level(style or ""))
    return Extracted(out.text(), headings=tuple(out.headings))
