"""A corpus of document files in a folder or a .zip (read in memory, never extracted).

Files read (`ragdash.data.readers`): .txt, .md, .pdf, .html/.htm, .docx; PDF pages and the
headings of HTML, DOCX and Markdown are kept as the document's layout. doc_id = the file's path
relative to the folder or zip root (with '/'), title = the file stem. Hidden files and folders
are ignored. A file that cannot be read (encrypted, a PDF without a text layer, corrupt, not
UTF-8, too large: over `MAX_DOCUMENT_BYTES`, of another type than its extension, with a name
that is not UTF-8, a pipe, a socket or a device) is skipped with one error naming it and the
reason; files of other types are
listed; a summary warning, first among the corpus's issues, counts both. One bad file never
fails the corpus; a corpus where no file could be read fails with the first reasons.

A folder's symbolic links (to files or folders) that lead outside it are refused and listed,
as a zip's links and `..` paths are; a link inside it leads to a file read once: a folder
reached through a link is not entered (its files are read where they are) and a link to a file
read under its own name is listed, not read again. A zip of more than MAX_ZIP_ENTRIES entries is
refused before its directory is read.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from ragdash.data import readers
from ragdash.data.common import DocumentSet, IssueLog
from ragdash.data.readers import Unreadable, base, too_large
from ragdash.data.reading import MAX_BYTES, SURROGATE, RawFile, fatal, inflate, zip_entries
from ragdash.data.schema import Document, Issue

MAX_TOTAL_BYTES = MAX_BYTES  # more than this in all is refused
MAX_FILES = 200_000
MAX_ZIP_ENTRIES = 2 * MAX_FILES  # entries of any kind (folders, hidden files), before parsing
MAX_LISTED = 10  # files of other types named in the summary
TYPES = ", ".join(readers.SUFFIXES)

Item = tuple[str, bytes | Unreadable]  # (relative name, content or why it cannot be read)
Found = tuple[str, Path | Unreadable]  # (relative name, real path or why it is refused)


def _hidden(name: str) -> bool:
    return any(p.startswith(".") or p == "__MACOSX" for p in PurePosixPath(name).parts)


def _plural(reason: str) -> str:
    """'corrupt file' -> 'corrupt files', 'PDF without a text layer' -> 'PDFs without ...',
    'file name not in UTF-8' -> 'file names not in UTF-8'."""
    return re.sub(r"\b(file name|file|PDF|page|symlink)\b", r"\1s", reason, count=1)


def _summary(seen: int, skipped: Counter, ignored: list[str]) -> str:
    """One line: how many files were read, skipped (by reason) and ignored (named)."""
    said = []
    if skipped:
        kinds = ", ".join(f"{n} {reason if n == 1 else _plural(reason)}"
                          for reason, n in sorted(skipped.items(), key=lambda x: (-x[1], x[0])))
        said.append(f"{seen - skipped.total()} of {seen} file(s) read into documents; "
                    f"{skipped.total()} skipped ({kinds}), each listed with its reason")
    if ignored:
        names = ", ".join(ignored[:MAX_LISTED])
        more = f" and {len(ignored) - MAX_LISTED} more" if len(ignored) > MAX_LISTED else ""
        said.append(f"{len(ignored)} file(s) of a type ragdash cannot read ignored: {names}"
                    f"{more} (it reads {TYPES})")
    return "; ".join(said)


def _documents(items: Iterable[Item], log: IssueLog) -> list[Document]:
    """Documents from (relative name, content or why it cannot be read) pairs."""
    docs, ignored, skipped, total, seen = DocumentSet(log, strict=True), [], Counter(), 0, 0
    for name, content in items:
        record = f"file {name}"
        if not readers.readable(name) and not isinstance(content, Unreadable):
            ignored.append(name)
            continue
        seen += 1
        try:
            if isinstance(content, Unreadable):
                raise content
            total += len(content)
            if total > MAX_TOTAL_BYTES:
                raise fatal(log.file, f"holds more than {MAX_TOTAL_BYTES} bytes of documents")
            got = readers.read_document(name, content)
        except Unreadable as exc:
            skipped[exc.reason] += 1
            log.error(record, "(file)", str(exc))
            continue
        for note in got.warnings:
            log.warn(record, "(file)", note)
        if not got.text.strip():
            skipped["empty file"] += 1  # DocumentSet warns about it
        docs.add(Document(name, PurePosixPath(name).stem, got.text, got.pages, got.headings),
                 record)
    if not seen:
        found = f"; found e.g. {ignored[0]!r}" if ignored else ""
        raise fatal(log.file, f"holds no file ragdash can read ({TYPES}){found}")
    documents = docs.documents()
    if not documents:
        first = "; ".join(f"{i.record} {i.message}" for i in log.issues[:3])
        raise fatal(log.file, f"no file could be read ({seen} tried): {first}")
    if skipped or ignored:
        log.issues.insert(0, Issue(log.file, "-", "(files)", _summary(seen, skipped, ignored),
                                   "warning"))
    return documents


def _shown(name: str) -> str:
    """A file name as it can be shown and stored: bytes that are not UTF-8 (which os.fsdecode
    turns into lone surrogates) written as \\xNN."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _special() -> Unreadable:
    """Why a pipe, a socket or a device in a folder is skipped (listed with the reason)."""
    return Unreadable("special file", "is not a regular file (a pipe, a socket or a "
                                            "device); skipped: copy what it holds into a file "
                                            "to include it")


def _outside(real: Path, base_dir: Path) -> Unreadable | None:
    """Why a symbolic link to `real` is refused: it leads outside the folder `base_dir`."""
    if real.is_relative_to(base_dir):
        return None
    return Unreadable("symlink to outside the folder",
                      f"is a symbolic link to {_shown(str(real))}, outside the folder; skipped: "
                      "copy what it points to into the folder to include it")


def _walk(root: Path) -> Iterator[tuple[str, Path, bool]]:
    """(relative name, path, is a symbolic link) of the folder's entries that are not hidden:
    its files, and its links to folders (not entered)."""
    for here, folders, files in os.walk(root):  # never enters a linked folder
        at = Path(here)
        folders[:] = [f for f in folders if not _hidden(f)]
        linked = [f for f in folders if (at / f).is_symlink()]
        for entry in files + linked:
            path = at / entry
            if not _hidden(entry):
                yield path.relative_to(root).as_posix(), path, path.is_symlink()


def _folder_files(root: Path) -> list[Found]:
    """The folder's files, sorted, each with its real path or why it is refused (a name that is
    not UTF-8, a link leading outside, a second way to a file already read)."""
    base_dir, found, links = root.resolve(), [], []
    for name, path, is_link in _walk(root):
        if SURROGATE.search(name):
            found.append((_shown(name), Unreadable(
                "file name not in UTF-8", "has a name that is not valid UTF-8 (its bad bytes "
                "shown as \\xNN); skipped: rename it to include it") if readers.readable(name)
                else base_dir / name))
        elif is_link:
            links.append((name, Path(os.path.realpath(path))))  # a loop raises nothing
        elif path.is_file():  # a regular file, not a pipe or a device
            found.append((name, base_dir / name))
        else:  # a pipe, a socket or a device: never opened (a pipe would wait for a writer)
            found.append((name, _special()))
    read = {p: n for n, p in found if isinstance(p, Path) and readers.readable(n)}
    for name, real in sorted(links):  # the first name of a file, in order, reads it
        refused = _outside(real, base_dir)
        if refused is None and real.is_dir():
            continue  # a folder inside: its files are read where they are
        if refused is None and real.exists() and not real.is_file():
            refused = _special()  # a pipe, a socket or a device
        if refused is None and real in read:
            refused = Unreadable("symlink to a file already read",
                                 f"is a symbolic link to a file already read, as {read[real]}; "
                                 "skipped (a file is read once)")
        found.append((name, refused or real))
        if refused is None and readers.readable(name):
            read.setdefault(real, name)
    if len(found) > MAX_FILES:
        raise fatal(root, f"holds more than {MAX_FILES} files")
    return sorted(found, key=lambda f: f[0])


def _folder_items(root: Path) -> Iterator[Item]:
    for name, where in _folder_files(root):
        if isinstance(where, Unreadable):
            yield name, where
            continue
        if not readers.readable(name):
            yield name, b""
            continue
        try:
            if where.stat().st_size > base.MAX_DOCUMENT_BYTES:
                yield name, too_large("is larger than")
                continue
            yield name, where.read_bytes()
        except OSError as exc:
            yield name, Unreadable("unreadable file", f"cannot be read: "
                                                      f"{exc.strerror or exc}")


def _hashed(items: Iterator[Item], digest) -> Iterator[Item]:
    """The items unchanged; the name and content of each readable file go into `digest`."""
    for name, content in items:
        if isinstance(content, bytes) and readers.readable(name):
            digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
        yield name, content


def load_folder(path: str | Path) -> tuple[list[Document], IssueLog, str]:
    """Documents of a folder of document files, the issues, and a sha256 of the files read."""
    root, log = Path(path), IssueLog(path)
    if not root.is_dir():
        raise fatal(root, "folder not found")
    digest = hashlib.sha256()
    docs = _documents(_hashed(_folder_items(root), digest), log)
    return docs, log, digest.hexdigest()


def _unsafe(name: str) -> bool:
    """A zip entry name that would leave the zip's folder if extracted (`..` or absolute)."""
    return name.startswith(("/", "\\")) or ".." in PurePosixPath(name.replace("\\", "/")).parts


def _zip_items(zf: zipfile.ZipFile, path: Path) -> Iterator[Item]:
    infos = [i for i in zf.infolist() if not i.is_dir()
             and (_unsafe(i.filename) or not _hidden(i.filename))]
    if len(infos) > MAX_FILES:
        raise fatal(path, f"holds more than {MAX_FILES} files")
    limit = base.MAX_DOCUMENT_BYTES
    for info in infos:
        name = info.filename.lstrip("/")
        if _unsafe(info.filename):
            yield name, Unreadable("unsafe path", "has a path that leaves the zip's folder "
                                                  "(`..` or absolute); skipped")
        elif stat.S_ISLNK(info.external_attr >> 16):
            yield name, Unreadable("symbolic link", "is a symbolic link in the zip; skipped")
        elif not readers.readable(name):
            yield name, b""
        elif info.flag_bits & 0x1:
            yield name, Unreadable("file encrypted in the zip", "is encrypted in the zip; skipped")
        elif info.file_size > limit:
            yield name, too_large("is larger than")
        else:
            try:
                with zf.open(info) as f:  # the header's sizes may lie: streamed and checked
                    data = inflate(f, path, info.compress_size, f"member {name} ", limit)
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, OSError, EOFError) as exc:
                yield name, Unreadable("corrupt file", f"cannot be decompressed: {exc}")
                continue
            yield name, data if len(data) <= limit else too_large("is larger than")


def load_zip(raw: RawFile) -> tuple[list[Document], IssueLog]:
    """Documents of a .zip of document files, and the issues."""
    log = IssueLog(raw.path)
    if (entries := zip_entries(raw.data)) > MAX_ZIP_ENTRIES:
        raise fatal(raw.path, f"holds {entries:,} entries (files and folders), more than "
                              f"{MAX_ZIP_ENTRIES:,}, the most a corpus zip may hold: split it")
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw.data))
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise fatal(raw.path, f"not a readable zip file: {exc}") from None
    except UnicodeDecodeError as exc:
        bad = exc.object[max(exc.start - 40, 0) : exc.end + 40].decode("utf-8", "backslashreplace")
        raise fatal(raw.path, f"holds a file name marked UTF-8 that is not ({bad!r}): "
                              "re-create the zip with a tool that writes UTF-8 names") from None
    with zf:
        return _documents(_zip_items(zf, raw.path), log), log


def load_document(raw: RawFile) -> tuple[list[Document], IssueLog]:
    """The document of one file (a corpus of one .pdf, .html, .docx, ... file), and the issues."""
    log = IssueLog(raw.path)
    data = raw.data if len(raw.data) <= base.MAX_DOCUMENT_BYTES else too_large("is larger than")
    return _documents([(raw.path.name, data)], log), log


def holds_layout_files(path: str | Path | None) -> bool:
    """Whether a folder or .zip corpus holds a PDF, HTML or DOCX file (types read since documents
    keep their layout); False for anything else or anything unreadable."""
    if not path:
        return False
    p = Path(path)
    try:
        if p.is_dir():
            names: Iterable[str] = (f.name for f in p.rglob("*"))
        elif p.name.lower().endswith(".zip") and p.is_file():
            with zipfile.ZipFile(p) as zf:
                names = zf.namelist()
        else:
            return False
        return any(readers.suffix(n) in readers.LAYOUT_SUFFIXES for n in names)
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError):
        return False
