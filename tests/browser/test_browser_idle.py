"""The server at rest: started as scripts/start.sh starts it (the project's .streamlit/config.toml,
no watcher option on the command line; a server of its own), with one tab open on the Overview
and nothing happening, the streamlit process uses almost no CPU. A file watcher that walks the
project folder (its .venv alone holds tens of thousands of files) kept a core busy."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest
from fixtures.requires import require
from helpers import CONTEXT, ROOT, free_port, settle, streamlit_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IDLE_SECONDS = 8.0
MAX_CPU_PER_SECOND = 0.1
"""CPU-seconds the idle server may use per wall-clock second (a looping watcher used ~0.95)."""


def start_command(port: int) -> list[str]:
    """scripts/start.sh's `exec` line, with the port and address in place of its "$@"."""
    line = next(s.strip() for s in (ROOT / "scripts" / "start.sh").read_text().splitlines()
                if s.strip().startswith("exec "))
    words = shlex.split(line)[1:]
    assert "$@" in words, f"scripts/start.sh: no \"$@\" in {line!r}"
    assert not any("fileWatcherType" in w for w in words), \
        "scripts/start.sh sets the watcher on the command line; keep it in .streamlit/config.toml"
    at = words.index("$@")
    words[at:at + 1] = ["--server.port", str(port), "--server.address", "127.0.0.1"]
    return [str(ROOT / w) if w.startswith(".venv/") else w for w in words]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (/proc/<pid>/stat utime and stime)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory):
    require("chromium")
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to read the server's CPU time")
    root = tmp_path_factory.mktemp("idle")
    port = free_port()
    with streamlit_server(start_command(port), port, root / "streamlit.log") as proc:
        yield {"url": f"http://127.0.0.1:{port}", "pid": proc.pid, "log": root / "streamlit.log"}


def test_start_command_follows_start_sh():
    cmd = start_command(8599)
    assert cmd[0].endswith(".venv/bin/streamlit") and cmd[1:3] == ["run", "app.py"]
    assert cmd[-4:] == ["--server.port", "8599", "--server.address", "127.0.0.1"]


def test_idle_server_with_one_tab_uses_almost_no_cpu(idle_server, browser):
    server = idle_server
    context = browser.new_context(**CONTEXT)
    try:
        pg = context.new_page()
        pg.set_default_timeout(90_000)
        pg.goto(server["url"])
        pg.wait_for_selector('[data-testid="stHeading"]')
        settle(pg)
        time.sleep(3)  # let caches warm and the first websocket traffic end
        before, t0 = cpu_seconds(server["pid"]), time.monotonic()
        time.sleep(IDLE_SECONDS)  # the measurement itself: the server left alone
        used, wall = cpu_seconds(server["pid"]) - before, time.monotonic() - t0
        assert pg.locator('[data-testid="stHeading"]').count() > 0  # the tab is still open
    finally:
        context.close()
    rate = used / wall
    print(f"idle server: {used:.2f} CPU-s over {wall:.1f} s = {rate:.3f} CPU-s/s")
    assert rate < MAX_CPU_PER_SECOND, (
        f"the idle streamlit server (pid {server['pid']}) used {used:.2f} CPU-s in {wall:.1f} s "
        f"({rate:.2f} per second, limit {MAX_CPU_PER_SECOND}): is a file watcher walking the "
        "project folder? Check server.fileWatcherType in .streamlit/config.toml; log: "
        f"{server['log']}")
