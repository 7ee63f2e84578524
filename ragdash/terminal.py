"""Untrusted text made safe to print on a terminal.

File names, column names, labeller names and file content reach the terminal inside messages
(`ragdash: error: …`, log lines). A raw ESC, NUL, carriage return or bidi override in them would
drive the terminal (colours, a title, a rewritten line) or hide what follows, so every control
character is written as its Python escape (`\\x1b`, `\\u202e`), and a name quoted from a file is
cut to a length a line can hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""C0 controls but tab and line feed, DEL, C1 controls, line and paragraph separators and the
bidirectional overrides and isolates."""
NAME_CHARS = 60
"""Characters of a name from a file shown in a message (escapes count)."""
NAMES_SHOWN = 12
"""Names of a list shown in a message; the rest are counted."""
LINE_CHARS = 2000
"""Characters of one line of a message printed on the terminal."""


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    return repr(c)[1:-1] if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def safe(text: object, line_chars: int | None = LINE_CHARS) -> str:
    """`text` with every control character but tab and line feed escaped (`\\x1b`, `\\r`,
    `\\u202e`), each line cut at `line_chars` characters (None: not cut), saying how much
    was left out."""
    lines = _UNSAFE.sub(_escape, str(text)).split("\n")
    if line_chars is not None:
        lines = [_cut(x, line_chars) for x in lines]
    return "\n".join(lines)


def _cut(text: str, most: int) -> str:
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text) - most:,} more characters)"


def name(text: object, most: int = NAME_CHARS) -> str:
    """A name from a file (a column, a sheet, a labeller) quoted as Python writes a string
    (`'pk\\x00'`, tabs and line breaks escaped too), cut after `most` characters."""
    shown = repr(str(text))
    if len(shown) <= most + 2:
        return shown
    return f"{shown[:most + 1]}…{shown[0]} ({len(shown) - 2 - most:,} more characters)"


def names(items: Iterable[object], most: int = NAMES_SHOWN) -> str:
    """The first `most` names of `items` as a list, each by `name`, then how many more there
    are: `['id', 'q\\x00', … (30 more)]`."""
    items = list(items)
    shown = [name(x) for x in items[:most]]
    if len(items) > most:
        shown.append(f"… ({len(items) - most:,} more)")
    return f"[{', '.join(shown)}]"
