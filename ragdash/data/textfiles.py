"""A corpus of .txt/.md files in a folder or a .zip (read in memory, never extracted).

doc_id = the file's path relative to the folder or zip root (with '/'), title = the file stem.
Hidden files and folders are ignored; other file types are ignored with one warning.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ragdash.data.common import DocumentSet, IssueLog
from ragdash.data.reading import RawFile, fatal
from ragdash.data.schema import Document

SUFFIXES = (".txt", ".md")
MAX_FILE_BYTES = 64 * 1024**2  # larger files are skipped with an error
MAX_TOTAL_BYTES = 2 * 1024**3  # more text than this in all is refused
MAX_FILES = 200_000


def _hidden(name: str) -> bool:
    return any(p.startswith(".") or p == "__MACOSX" for p in PurePosixPath(name).parts)


def _documents(items: Iterator[tuple[str, bytes | str]], log: IssueLog) -> list[Document]:
    """Documents from (relative name, content or error message) pairs."""
    docs, ignored, total, seen = DocumentSet(log, strict=True), [], 0, 0
    for name, content in items:
        record = f"file {name}"
        if not name.lower().endswith(SUFFIXES):
            ignored.append(name)
            continue
        seen += 1
        if isinstance(content, str):
            log.error(record, "(file)", content)
            continue
        total += len(content)
        if total > MAX_TOTAL_BYTES:
            raise fatal(log.file, f"holds more than {MAX_TOTAL_BYTES} bytes of text")
        if content.startswith(b"\xef\xbb\xbf"):
            content = content[3:]
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = content.count(b"\n", 0, exc.start) + 1
            log.error(record, "(file)", f"holds bytes that are not valid UTF-8, first at byte "
                                        f"{exc.start} (line {line})")
            continue
        docs.add(Document(name, PurePosixPath(name).stem, text), record)
    if ignored:
        log.warn("-", "(file)", f"{len(ignored)} file(s) that are not {'/'.join(SUFFIXES)} "
                                f"ignored, e.g. {ignored[0]!r}")
    if not seen:
        raise fatal(log.file, f"holds no {' or '.join(SUFFIXES)} file")
    return docs.documents()


def _folder_items(root: Path) -> Iterator[tuple[str, bytes | str]]:
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and not _hidden(p.relative_to(root).as_posix()))
    if len(files) > MAX_FILES:
        raise fatal(root, f"holds more than {MAX_FILES} files")
    for path in files:
        name = path.relative_to(root).as_posix()
        if not name.lower().endswith(SUFFIXES):
            yield name, b""
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                yield name, f"is larger than {MAX_FILE_BYTES} bytes; skipped"
                continue
            yield name, path.read_bytes()
        except OSError as exc:
            yield name, f"cannot be read: {exc.strerror or exc}"


def load_folder(path: str | Path) -> tuple[list[Document], IssueLog, str]:
    """Documents of a folder of text files, the issues, and a sha256 of the files read."""
    root, log = Path(path), IssueLog(path)
    if not root.is_dir():
        raise fatal(root, "folder not found")
    digest, items = hashlib.sha256(), []
    for name, content in _folder_items(root):
        if isinstance(content, bytes) and name.lower().endswith(SUFFIXES):
            digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
        items.append((name, content))
    return _documents(iter(items), log), log, digest.hexdigest()


def _zip_items(zf: zipfile.ZipFile) -> Iterator[tuple[str, bytes | str]]:
    infos = [i for i in zf.infolist() if not i.is_dir() and not _hidden(i.filename)]
    if len(infos) > MAX_FILES:
        raise fatal(zf.filename or "zip", f"holds more than {MAX_FILES} files")
    for info in infos:
        name = info.filename.lstrip("/")
        if not name.lower().endswith(SUFFIXES):
            yield name, b""
        elif info.flag_bits & 0x1:
            yield name, "is encrypted; skipped"
        elif info.file_size > MAX_FILE_BYTES:
            yield name, f"is larger than {MAX_FILE_BYTES} bytes; skipped"
        else:
            try:
                with zf.open(info) as f:
                    data = f.read(MAX_FILE_BYTES + 1)  # the header's size may lie
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError, EOFError) as exc:
                yield name, f"cannot be decompressed: {exc}"
                continue
            yield name, (data if len(data) <= MAX_FILE_BYTES
                         else f"is larger than {MAX_FILE_BYTES} bytes; skipped")


def load_zip(raw: RawFile) -> tuple[list[Document], IssueLog]:
    """Documents of a .zip of text files, and the issues."""
    log = IssueLog(raw.path)
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw.data))
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise fatal(raw.path, f"not a readable zip file: {exc}") from None
    with zf:
        return _documents(_zip_items(zf), log), log
