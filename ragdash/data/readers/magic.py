"""What a file's first bytes say it is, to catch a file whose extension lies (a Word file renamed
.html, a PDF named .txt, a binary blob named .md): such a file is skipped with what it really is,
never read as the type its extension claims."""

from __future__ import annotations

OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # old .doc/.xls files and password-protected .docx
PDF = b"%PDF-"
PDF_HEADER_WITHIN = 1024  # readers accept a PDF header after this much leading junk
ZIP = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
SNIFFED = 8192  # bytes of a text file looked at for NUL bytes
SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (PDF, "a PDF file"),
    (ZIP[0], "a zip file (a .docx, .xlsx, .pptx, .zip, ...)"),
    (ZIP[1], "an empty zip file"),
    (OLE, "an old or password-protected Office file (.doc, .xls, ...)"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\x1f\x8b", "a gzip file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip file"),
    (b"Rar!\x1a\x07", "a RAR file"),
    (b"\x7fELF", "a program (ELF)"),
)
"""Leading bytes -> what a file that starts with them is."""


def identify(data: bytes) -> str | None:
    """What the signature at the start of `data` says it is (e.g. 'a PDF file'); None if no
    known signature is there."""
    return next((kind for magic, kind in SIGNATURES if data.startswith(magic)), None)


def mismatch(suffix: str, data: bytes) -> str | None:
    """Why `data` is not a file of type `suffix` ('.pdf', '.docx', '.txt', ...): what it is
    instead; None when nothing shows it is another type (a broken file is the reader's to say)."""
    found = identify(data)
    if suffix == ".pdf":
        return None if PDF in data[:PDF_HEADER_WITHIN] or found is None else found
    if suffix == ".docx":
        return None if found is None or data.startswith((*ZIP, OLE)) else found
    if found is not None:
        return found
    if b"\0" in data[:SNIFFED] and not data.startswith(UTF16_BOMS):
        return "binary data (it holds NUL bytes; or text in UTF-16: save it as UTF-8)"
    return None
