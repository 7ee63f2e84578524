"""Plain text (.txt) and Markdown (.md): UTF-8 text kept verbatim; Markdown's # headings noted."""

from __future__ import annotations

import re

from ragdash.data.layout import MAX_LEVEL, Heading
from ragdash.data.readers.base import Extracted, Unreadable

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def decode_utf8(data: bytes) -> str:
    """UTF-8 text without a leading BOM; Unreadable locating the first bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable("file not in UTF-8", f"holds bytes that are not valid UTF-8, first "
                                              f"at byte {exc.start} (line {line})") from None


def read_text(data: bytes) -> Extracted:
    return Extracted(decode_utf8(data))


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX headings (# to ###) outside fenced code blocks, at the offset of their line."""
    out, fence, pos = [], None, 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        m = _FENCE.match(body)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not body.strip()[len(mark):]:
                fence = None
        elif fence is None:
            h = _ATX.match(body)
            if h and len(h.group(1)) <= MAX_LEVEL:
                out.append(Heading(pos, len(h.group(1)), h.group(2).strip()))
        pos += len(line)
    return tuple(out)


def read_markdown(data: bytes) -> Extracted:
    text = decode_utf8(data)
    return Extracted(text, headings=markdown_headings(text))
