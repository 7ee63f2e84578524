"""Reading input files: size guards, gzip and bzip2, UTF-8 decoding that locates bad bytes,
JSON parsing."""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import io
import json
import os
import re
import stat
import struct
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ragdash.data.schema import DataError, Issue

MAX_BYTES = 1024**3  # refuse any input larger than this, on disk or once decompressed
MAX_RATIO = 100  # compressed data inflating more than this (past BOMB_FLOOR bytes) is refused
BOMB_FLOOR = 32 * 1024**2
BLOCK = 1024**2  # decompression streams in blocks, so a bomb is stopped early

# surrogateescape turns each byte that is not UTF-8 into one of these characters
SURROGATE = re.compile("[\udc80-\udcff]")


def fatal(file: str | Path, message: str, record: str = "-", field: str = "(file)") -> DataError:
    """A DataError located in `file`."""
    return DataError(Issue(str(file), record, field, message))


class FileTooLarge(DataError):
    """A file over the limit it was read with (`read_regular`)."""


@dataclass
class RawFile:
    """A file's content (decompressed when it ends in .gz or .bz2) and the sha256 of its bytes
    on disk."""

    path: Path
    data: bytes
    sha256: str


def read_file(path: str | Path) -> RawFile:
    """Read a whole file; DataError naming the path when it is missing, unreadable or too large."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_BYTES)
    except FileNotFoundError:
        raise fatal(p, "file not found") from None
    except OSError as exc:
        raise fatal(p, f"cannot be read: {exc.strerror or exc}") from None
    name = p.name.lower()
    data = _gunzip(p, raw) if name.endswith(".gz") else _bunzip(p, raw) \
        if name.endswith(".bz2") else raw
    return RawFile(p, data, hashlib.sha256(raw).hexdigest())


def open_regular(path: Path) -> BinaryIO:
    """A regular file opened for reading. DataError naming the path for a folder, a pipe, a
    device or a socket: it is opened without blocking (a pipe with no writer would wait forever)
    and checked before a byte is read. OSError when it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise fatal(path, "is a folder, expected a file" if stat.S_ISDIR(mode) else
                          "is not a regular file (a pipe, a device or a socket): give a file")
    return os.fdopen(fd, "rb")


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file (`open_regular`) of at most `limit` bytes; FileTooLarge
    naming the path for a file over `limit`, by its size or by what it holds (one that grows
    while it is read is never read past `limit` + 1 bytes)."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        out = bytearray()
        while (size <= limit and len(out) <= limit
               and (block := f.read(min(BLOCK, limit + 1 - len(out))))):
            out += block
    if size > limit or len(out) > limit:
        raise FileTooLarge(Issue(str(path), "-", "(file)", f"is larger than {limit:,} bytes, "
                                                           "the limit of an input file"))
    return bytes(out)


def loads(text: str | bytes, where: str | None = None) -> object:
    """`json.loads` for text from outside (a record of a file, a cell, an LLM reply): a value
    nested too deeply for the parser is a ValueError (naming `where` when given), as malformed
    JSON is (a json.JSONDecodeError, raised as it is), instead of a RecursionError that no
    `except ValueError` catches."""
    try:
        return json.loads(text)
    except RecursionError:
        said = f"{where}: " if where else ""
        raise ValueError(f"{said}nested too deeply (more than about "
                         f"{sys.getrecursionlimit():,} levels of lists and objects, the most "
                         "the JSON parser takes)") from None


def zip_entries(data: bytes) -> int:
    """How many entries a zip's central directory holds, counted in its bytes before zipfile
    parses it (zipfile builds an object for every entry: a directory of millions fills the
    memory): the entry signatures in the directory's span, at least as many as zipfile reads;
    0 when the file has no end record (zipfile then refuses it)."""
    import zipfile

    f = io.BytesIO(data)
    try:
        end = zipfile._EndRecData(f)  # noqa: SLF001 (zipfile's own reading of the end record)
    except (OSError, ValueError, struct.error):
        return 0
    if end is None:
        return 0
    location = end[zipfile._ECD_LOCATION]  # noqa: SLF001
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:  # noqa: SLF001
        location -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
    start = max(location - end[zipfile._ECD_SIZE], 0)  # noqa: SLF001
    return data.count(zipfile.stringCentralDir, start, max(location, start))


def check_inflation(path: Path | str, packed: int, unpacked: int, what: str = "") -> None:
    """DataError when `packed` compressed bytes inflate past MAX_BYTES, or more than MAX_RATIO
    times past BOMB_FLOOR (a decompression bomb: a small upload that would fill the memory of a
    dashboard shared by several users)."""
    if unpacked > MAX_BYTES:
        raise fatal(path, f"{what}decompresses to more than {MAX_BYTES:,} bytes uncompressed")
    if unpacked > BOMB_FLOOR and unpacked > MAX_RATIO * max(packed, 1):
        raise fatal(path, f"{what}inflates {packed:,} compressed bytes to more than "
                          f"{unpacked:,} uncompressed (over {MAX_RATIO}:1): refused as a likely "
                          "decompression bomb; unpack it yourself if it is genuine")


def inflate(stream, path: Path | str, packed: int, what: str = "",
            limit: int = MAX_BYTES) -> bytes:
    """Read a decompressing stream in blocks, checking the inflation after each; at most
    `limit` + 1 bytes are read (the caller decides what a larger file means)."""
    out = bytearray()
    while len(out) <= limit:
        block = stream.read(min(BLOCK, limit + 1 - len(out)))
        if not block:
            break
        out += block
        check_inflation(path, packed, len(out), what)
    return bytes(out)


def _bunzip(path: Path, raw: bytes) -> bytes:
    try:
        with bz2.BZ2File(io.BytesIO(raw)) as f:
            return inflate(f, path, len(raw))
    except (OSError, EOFError, ValueError) as exc:
        raise fatal(path, f"is not a valid bzip2 file: {exc}") from None


def _gunzip(path: Path, raw: bytes) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            return inflate(f, path, len(raw))
    except (OSError, EOFError, zlib.error) as exc:
        raise fatal(path, f"is not a valid gzip file: {exc}") from None


@dataclass
class Text:
    """Decoded text. Bytes that are not UTF-8 become lone surrogates, one per byte, in file order;
    `where` turns them back into byte offsets and line numbers, in the same order."""

    text: str
    data: bytes
    bad: list[int] = field(default_factory=list)  # byte offsets of the bytes that are not UTF-8
    _next: int = 0
    _line_at: tuple[int, int] = (0, 1)  # (byte offset, line) of the last lookup, for speed

    def where(self, count: int) -> str:
        """Consume the next `count` bad bytes; describe the first one as 'byte X (line L)'."""
        if not self.bad:
            return "an unknown position"
        offset = self.bad[min(self._next, len(self.bad) - 1)]
        self._next += count
        start, line = self._line_at if self._line_at[0] <= offset else (0, 1)
        line += self.data.count(b"\n", start, offset)
        self._line_at = (offset, line)
        return f"byte {offset} (line {line})"


def decode(data: bytes) -> Text:
    """Decode UTF-8 (a leading BOM is dropped) without failing on bytes that are not UTF-8."""
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return Text(data[skip:].decode("utf-8"), data)
    except UnicodeDecodeError:
        text = data[skip:].decode("utf-8", "surrogateescape")
    bad, pos, last = [], skip, 0
    for m in SURROGATE.finditer(text):
        pos += len(text[last : m.start()].encode("utf-8"))
        bad.append(pos)
        pos, last = pos + 1, m.end()
    return Text(text, data, bad)


def bad_bytes(obj: object, path: str = "") -> Iterator[tuple[str, int]]:
    """(field path, count) for each string in a parsed JSON value that holds undecodable bytes,
    in file order."""
    if isinstance(obj, str):
        n = len(SURROGATE.findall(obj))
        if n:
            yield path or "(value)", n
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from bad_bytes(key, path or "(key)")
            yield from bad_bytes(value, f"{path}.{key}" if path else str(key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from bad_bytes(value, f"{path}[{i}]")


def undecodable(obj: object, text: Text) -> tuple[str, str] | None:
    """(field, message) when a record parsed from `text` holds bytes that are not UTF-8."""
    if not text.bad:
        return None
    found = list(bad_bytes(obj))
    if not found:
        return None
    where = text.where(sum(n for _, n in found))
    return found[0][0], f"holds bytes that are not valid UTF-8, first at {where}"


def parse_json(raw: RawFile) -> tuple[object, Text]:
    """Parse a whole-file JSON document; DataError with line and column when it is malformed."""
    text = decode(raw.data)
    try:
        return json.loads(text.text), text
    except json.JSONDecodeError as exc:
        hint = " (one JSON value per line? name the file .jsonl)" if exc.msg == "Extra data" else ""
        raise fatal(raw.path, f"invalid JSON: {exc.msg} (line {exc.lineno}, column "
                              f"{exc.colno}){hint}", record=f"line {exc.lineno}",
                    field="(json)") from None
    except RecursionError:
        raise fatal(raw.path, "invalid JSON: nested too deeply", field="(json)") from None
