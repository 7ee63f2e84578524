"""Word (.docx) with python-docx: paragraphs and tables in body order, blank lines between
them; paragraphs in Title and Heading 1-3 styles are noted as headings.

Only the package's XML parts are unpacked, each through a bounded stream, and they are refused
past MAX_DOCUMENT_BYTES in all (from the zip's directory first: before anything is unpacked) or
past MAX_ELEMENTS XML elements in all (python-docx's memory and time grow with them: 8 MiB of
empty paragraphs took 28 s and 350 MB); a package of more than MAX_PARTS parts (zip entries) is
refused before zipfile reads its directory. python-docx then parses a copy of the package that holds
just them, so neither a zip bomb nor a zip directory that understates sizes can make it unpack
more."""

from __future__ import annotations

import io
import re
import zipfile

from ragdash.data.layout import TextBuilder
from ragdash.data.readers import base
from ragdash.data.readers.base import Extracted, Unreadable, too_large
from ragdash.data.readers.magic import OLE
from ragdash.data.reading import zip_entries

XML_PARTS = (".xml", ".rels")  # the parts that hold text, styles and the package's structure
BLOCK = 1024**2  # parts are unpacked in blocks of this size
MAX_ELEMENTS = 1_000_000  # XML elements of all parts (hundreds of pages of formatted text)
MAX_PARTS = 10_000  # zip entries of a package, counted before zipfile reads its directory
_HEADING = re.compile(r"heading (\d)$", re.IGNORECASE)


def _level(style_name: str) -> int | None:
    if style_name.lower() == "title":
        return 1
    m = _HEADING.match(style_name)
    return int(m.group(1)) if m else None


def _is_xml(info: zipfile.ZipInfo) -> bool:
    return info.filename.lower().endswith(XML_PARTS)


def _unpack(zf: zipfile.ZipFile, info: zipfile.ZipInfo, room: int) -> bytes:
    """A member's bytes, unpacked in blocks; at most `room` + 1 are read (the directory's size
    may understate it)."""
    out = bytearray()
    with zf.open(info) as f:
        while len(out) <= room and (block := f.read(min(BLOCK, room + 1 - len(out)))):
            out += block
    return bytes(out)


def _elements(xml: bytes) -> int:
    """The number of elements in `xml`: its start tags, empty-element tags included."""
    return xml.count(b"<") - xml.count(b"</") - xml.count(b"<?") - xml.count(b"<!")


def _text_parts(data: bytes) -> io.BytesIO:
    """The package with its XML parts alone (other parts, e.g. images, left empty), unpacked
    under MAX_DOCUMENT_BYTES and MAX_ELEMENTS in all; Unreadable when it is an OLE file or too
    large."""
    if data.startswith(OLE):
        raise Unreadable("encrypted or old Word file",
                         "is a password-protected Word file or an old binary .doc renamed "
                         ".docx; skipped: save it as an unprotected .docx to include it")
    if (parts := zip_entries(data)) > MAX_PARTS:
        raise Unreadable("file too large", f"is a .docx file of {parts:,} parts (zip entries), "
                                           f"more than {MAX_PARTS:,}, the limit of one Word "
                                           "document; skipped: split it to include it")
    limit, elements, out = base.MAX_DOCUMENT_BYTES, 0, io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # not a zip: read_document reports it
        if sum(i.file_size for i in zf.infolist() if _is_xml(i)) > limit:
            raise too_large("is a .docx file whose XML parts unpack to more than")
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
            for info in zf.infolist():
                part = _unpack(zf, info, limit) if _is_xml(info) else b""
                limit -= len(part)
                if limit < 0:
                    raise too_large("is a .docx file whose XML parts unpack to more than")
                elements += _elements(part)
                if elements > MAX_ELEMENTS:
                    raise Unreadable("file too large",
                                     f"is a .docx file whose XML holds more than "
                                     f"{MAX_ELEMENTS:,} elements, the limit of one Word "
                                     "document; skipped: split it to include it")
                copy.writestr(info.filename, part)
    return out


def _distinct(cells: list) -> list:
    """A row's cells, a merged cell once (python-docx repeats it for each grid column)."""
    seen, out = set(), []
    for cell in cells:
        if id(cell._tc) not in seen:
            seen.add(id(cell._tc))
            out.append(cell)
    return out


def _style_names(document) -> tuple[dict[str, str], str]:
    """Paragraph style id -> name, and the default paragraph style's name, looked up once
    (python-docx scans every style for each paragraph: minutes for a long document)."""
    from docx.enum.style import WD_STYLE_TYPE

    kind = WD_STYLE_TYPE.PARAGRAPH
    names = {s.style_id: s.name or "" for s in document.styles if s.type == kind}
    default = document.styles.default(kind)
    return names, (default.name or "") if default is not None else ""


def read_docx(data: bytes) -> Extracted:
    import docx
    from docx.table import Table

    document = docx.Document(_text_parts(data))
    names, default = _style_names(document)
    out = TextBuilder()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = [" | ".join(" ".join(cell.text.split()) for cell in _distinct(row.cells))
                    for row in block.rows]
            out.add("\n".join(rows))
        else:
            out.add(block.text, _level(names.get(block._p.style, default)))
    return Extracted(out.text(), headings=tuple(out.headings))
