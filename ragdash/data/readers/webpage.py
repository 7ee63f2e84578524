"""HTML (.html, .htm) with trafilatura: the page's main text, without navigation, menus,
footers and other boilerplate; h1-h3 headings are noted. Nothing is fetched from the network.

The work on one page is bounded. A page over MAX_HTML_BYTES is skipped unread. trafilatura's
time grows with the square of a page's elements (a 1 MB page of one-letter paragraphs takes
28 s, 4 MB would take minutes), so no byte limit alone bounds it: it runs in a child process
(one per thread reading HTML, kept for the next pages: started once, ~0.3 s) whose address space
is capped at MAX_HTML_MEMORY. A page not parsed within MAX_HTML_SECONDS has its child killed,
which really interrupts the parse (a check between steps could not), and is skipped with the
reason, as is one that needs more memory. The child's CPU time is capped per page too, so it
cannot outlive a parent killed during a parse."""

from __future__ import annotations

import atexit
import os
import select
import signal
import struct
import subprocess
import sys
import threading
from time import monotonic

from ragdash.data.layout import TextBuilder
from ragdash.data.readers.base import Extracted, Unreadable

MAX_HTML_BYTES = 4 * 1024**2  # a larger page is skipped before parsing
MAX_HTML_SECONDS = 30.0  # a page whose parse takes longer is skipped (its parser killed)
MAX_HTML_MEMORY = 768 * 1024**2  # the parser's address space: a page needing more is skipped
RECYCLE_BYTES = 1024**2  # the parser that read a page this large is ended (its memory freed)
START_SECONDS = 60.0  # the longest wait for a parser to start
MAX_IDLE = 2  # parsers kept for the next pages (one per thread reading HTML at once)

_REQUEST = struct.Struct("!QdQ")  # page bytes, seconds, address space
_REPLY = struct.Struct("!BQ")  # kind, payload bytes
_XML, _EMPTY, _MEMORY, _FAILED = range(4)
_OPTIONS = {"output_format": "xml", "include_tables": True, "include_comments": False,
            "include_links": False, "include_images": False, "favor_recall": True}
_CHILD = "from ragdash.data.readers.webpage import _serve; _serve()"


def _text(el) -> str:
    for lb in el.iter("lb"):  # line breaks inside a paragraph
        lb.tail = "\n" + (lb.tail or "")
    return "".join(el.itertext())


def _level(el) -> int:
    rend = (el.get("rend") or "").lower()
    return int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1].isdigit() else 2


def _add_block(out: TextBuilder, el) -> None:
    tag = el.tag
    if tag == "head":
        out.add(_text(el), _level(el))
    elif tag == "list":
        out.add("\n".join(f"- {' '.join(_text(item).split())}" for item in el.iter("item")))
    elif tag == "table":
        out.add("\n".join(" | ".join(" ".join(_text(cell).split()) for cell in row.iter("cell"))
                          for row in el.iter("row")))
    elif tag in ("div", "main", "quote") and len(el):
        out.add(el.text or "")
        for child in el:
            _add_block(out, child)
            out.add(child.tail or "")
    else:
        out.add(_text(el))


# --- the parser process -----------------------------------------------------------------------


def _read_exact(stream, size: int) -> bytes:
    out = bytearray()
    while len(out) < size and (block := stream.read(size - len(out))):
        out += block
    return bytes(out)


def _limit(kind: int, soft: int) -> None:
    import resource

    hard = resource.getrlimit(kind)[1]
    resource.setrlimit(kind, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _serve() -> None:
    """The child: reads requests (page, seconds, address space) from stdin until it closes and
    answers each with trafilatura's XML; its CPU time is capped per page (SIGXCPU ends it)."""
    import resource

    import trafilatura

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints goes to stderr, never into the replies
    out.write(b"R")
    out.flush()
    while head := _read_exact(sys.stdin.buffer, _REQUEST.size):
        size, seconds, memory = _REQUEST.unpack(head)
        data = _read_exact(sys.stdin.buffer, size)
        used = resource.getrusage(resource.RUSAGE_SELF)
        _limit(resource.RLIMIT_CPU, int(used.ru_utime + used.ru_stime + seconds) + 5)
        _limit(resource.RLIMIT_AS, memory)
        try:
            xml = trafilatura.extract(data, **_OPTIONS)
            kind, payload = (_XML, xml.encode("utf-8")) if xml else (_EMPTY, b"")
        except MemoryError:
            kind, payload = _MEMORY, b""
        except Exception as exc:  # a damaged page: the parent reports it  # noqa: BLE001
            kind, payload = _FAILED, f"{type(exc).__name__}: {exc}".encode()
        out.write(_REPLY.pack(kind, len(payload)) + payload)
        out.flush()


class _Stopped(Exception):
    """The parser process ended, or did not answer in time (`late`); `sent`: after it was
    given the page (before, it was not ready: another one may be tried)."""

    def __init__(self, late: bool, sent: bool):
        super().__init__("late" if late else "stopped")
        self.late, self.sent = late, sent


class _Parser:
    """One parser process, used by one thread at a time."""

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked copy of this process must not share the pipes
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     bufsize=0)
        self.ready = False

    def usable(self) -> bool:
        return self.pid == os.getpid() and self.proc.poll() is None

    def _read(self, size: int, deadline: float, sent: bool = True) -> bytes:
        fd, out = self.proc.stdout.fileno(), bytearray()
        while len(out) < size:
            left = deadline - monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Stopped(late=True, sent=sent)
            block = os.read(fd, size - len(out))
            if not block:
                raise _Stopped(late=False, sent=sent)
            out += block
        return bytes(out)

    def extract(self, data: bytes, seconds: float, memory: int) -> tuple[int, bytes]:
        """(kind, payload) of trafilatura's answer; _Stopped when it ends or is late."""
        if not self.ready:
            self._read(1, monotonic() + START_SECONDS, sent=False)
            self.ready = True
        request = memoryview(_REQUEST.pack(len(data), seconds, memory) + data)
        try:
            while request:  # it reads the whole request before it parses
                request = request[self.proc.stdin.write(request):]
        except OSError:  # it ended since it last answered
            raise _Stopped(late=False, sent=False) from None
        deadline = monotonic() + seconds
        kind, size = _REPLY.unpack(self._read(_REPLY.size, deadline))
        return kind, self._read(size, deadline + START_SECONDS)  # already written

    def close(self) -> None:
        if self.pid != os.getpid():
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            pipe.close()


_idle: list[_Parser] = []
_lock = threading.Lock()


def _take() -> _Parser:
    with _lock:
        while _idle:
            parser = _idle.pop()
            if parser.usable():
                return parser
            parser.close()
    return _Parser()


def _give(parser: _Parser) -> None:
    with _lock:
        if len(_idle) < MAX_IDLE and parser.usable():
            _idle.append(parser)
            return
    parser.close()


@atexit.register
def _close_all() -> None:
    with _lock:
        while _idle:
            _idle.pop().close()


def _ended(parser: _Parser) -> int | None:
    """The parser's exit status (negative: the signal that ended it), None while it runs."""
    try:
        return parser.proc.wait(5)
    except subprocess.TimeoutExpired:
        return None


def _ask(data: bytes, seconds: float, memory: int) -> tuple[int, bytes]:
    """trafilatura's (kind, payload) for a page, from a parser process (another is tried when
    the first ends before it has the page); Unreadable when the parse takes more than `seconds`
    (its process is killed) or its process ends."""
    for attempt in (1, 2):
        parser, keep = _take(), False
        try:
            kind, payload = parser.extract(data, seconds, memory)
            keep = kind in (_XML, _EMPTY) and len(data) < RECYCLE_BYTES
            return kind, payload
        except _Stopped as exc:
            code = None if exc.late else _ended(parser)
            if exc.late and exc.sent or code == -signal.SIGXCPU:  # late, or its CPU limit hit
                raise _too_slow(seconds) from None
            if attempt == 1 and not exc.sent:
                continue
            ending = ("did not start in time" if code is None else f"signal {-code}"
                      if code < 0 else f"exit code {code}")
            raise Unreadable("corrupt file", f"is an HTML page whose parser stopped ({ending});"
                                             " skipped") from None
        finally:
            if keep:
                _give(parser)
            else:
                parser.close()
    raise AssertionError("unreachable")


def _too_slow(seconds: float) -> Unreadable:
    return Unreadable("HTML page too slow to read",
                      f"is an HTML page that took more than {seconds:g} s to parse (its parser "
                      "was stopped); skipped: save its main text as .txt to include it")


def _parse(data: bytes) -> str | None:
    """trafilatura's XML of the page (None: no main text found); Unreadable when the page
    takes more than MAX_HTML_SECONDS or MAX_HTML_MEMORY, or its parse fails."""
    memory = MAX_HTML_MEMORY
    kind, payload = _ask(data, MAX_HTML_SECONDS, memory)
    if kind == _MEMORY:
        raise Unreadable("HTML page too large",
                         f"is an HTML page that needs more than {memory / 1024**2:,.0f} MiB of "
                         "memory to parse; skipped: save its main text as .txt to include it")
    if kind == _FAILED:
        raise Unreadable("corrupt file", f"is not a readable HTML file "
                                         f"({payload.decode('utf-8', 'replace')}); skipped")
    return payload.decode("utf-8") if kind == _XML else None


def read_html(data: bytes) -> Extracted:
    from lxml import etree

    if len(data) > MAX_HTML_BYTES:
        raise Unreadable("HTML page too large",
                         f"is an HTML page larger than {MAX_HTML_BYTES / 1024**2:g} MiB "
                         f"({MAX_HTML_BYTES:,} bytes), the limit of one page; skipped: save its "
                         "main text as .txt or split it to include it")
    xml = _parse(data)
    if not xml:
        raise Unreadable("HTML page without main text", "is an HTML page with no main text "
                         "found (empty, only navigation, or not HTML); skipped")
    out = TextBuilder()
    for main in etree.fromstring(xml.encode("utf-8")).iter("main"):
        _add_block(out, main)
    return Extracted(out.text(), headings=tuple(out.headings))
