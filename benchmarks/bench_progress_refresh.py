"""Benchmark: what following a running job costs the dashboard server (issue 33: the Build
page's progress display took a third of a core).

A run under a temporary runs root is made to look busy: this process holds its lock and
reports progress in its job record every second, as a `ragdash job` does. A Streamlit server
(`app.py`) is started on that runs root and the Build page is opened in headless Chromium.
The server's CPU time (user + system, its children included) is read from /proc over
`--seconds` seconds twice: with the job running (the page follows it) and, as the baseline in
the same process, with the job ended (the same page, nothing to follow). Printed and written to
benchmarks/results/progress-refresh.json: the share of one core each takes, and the difference.
Measured on the 2-core machine: a redraw every second cost 13 % of a core, every
`ragdash.ui.jobs.REFRESH_S` = 4 s, 3.4 %.

    .venv/bin/python benchmarks/bench_progress_refresh.py --seconds 40
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.requires import chromium_path  # noqa: E402

from ragdash import jobs  # noqa: E402
from ragdash.config import load_config  # noqa: E402
from ragdash.rundir import Run  # noqa: E402
from ragdash.rundir import lock as run_lock  # noqa: E402

CHROMIUM = chromium_path()
OUT = ROOT / "benchmarks" / "results" / "progress-refresh.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of `pid` and its waited-for children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


def busy_run(root: Path) -> Path:
    """A run whose job record says it is generating answers, its lock held by this process."""
    home = root / "busy"
    run_lock.acquire(home)
    jobs.queue(home, "build", load_config(), ("ingest", "generate"))
    Run(home).set_stage("generate", status="running")
    jobs.write(home, state="running", pid=os.getpid(), message="generating answers",
               done=0, total=600)
    return home


def report(home: Path, stop: threading.Event) -> None:
    done = 0
    while not stop.is_set():
        done += 1
        jobs.write(home, done=done, eta=600.0 - done, heartbeat_ts=time.time())
        stop.wait(1.0)


def measure(pid: int, seconds: float) -> float:
    t0, c0 = time.monotonic(), cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / (time.monotonic() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=40.0)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        home = busy_run(root)
        stop = threading.Event()
        threading.Thread(target=report, args=(home, stop), daemon=True).start()
        port = free_port()
        env = {**os.environ, "RAGDASH_RUNS_ROOT": str(root)}
        cmd = [str(Path(sys.executable).with_name("streamlit")), "run", str(ROOT / "app.py"),
               "--server.headless", "true", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
        server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.3)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
                page = browser.new_page(viewport={"width": 1400, "height": 2000})
                page.goto(f"http://127.0.0.1:{port}/build", timeout=120_000)
                page.get_by_text("generating answers").first.wait_for(timeout=120_000)
                time.sleep(5)  # the page's first run is over
                following = measure(server.pid, args.seconds)
                stop.set()
                jobs.write(home, state="finished", ended_ts=time.time())
                run_lock.release(home)
                page.reload()
                page.get_by_text("Earlier runs").first.wait_for(timeout=120_000)
                time.sleep(5)
                idle = measure(server.pid, args.seconds)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    from ragdash.ui.jobs import REFRESH_S

    result = {"seconds": args.seconds, "refresh_s": REFRESH_S,
              "following_core_share": round(following, 4),
              "idle_core_share": round(idle, 4),
              "progress_cost_core_share": round(following - idle, 4)}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
