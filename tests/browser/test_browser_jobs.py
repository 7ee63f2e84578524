"""Build jobs outside the Streamlit process, in Chromium: start a build on the Build page, kill
the Streamlit server mid-run and start a new one on the same runs root; the page reconnects to
the job, which goes on and finishes. A second build is cancelled from the page: it shows it
cancelled, and the run is resumable (its lock is free, its stages kept)."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.requires import require
from helpers import (
    BUNDLED,
    ROOT,
    free_port,
    name_run,
    no_exception,
    settle,
    shot,
    stop_jobs,
    streamlit_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict]:
    """How to start (and restart) a Streamlit server on one port and runs root (with its own
    embedding cache, so a build has MiniLM to load and texts to embed: seconds of work); every
    job process still running at the end is killed."""
    require("chromium")
    root = tmp_path_factory.mktemp("browser_jobs")
    port = free_port()
    from ragdash.rundir.root import EMBED_CACHE_DIR_ENV, INDEX_CACHE_DIR_ENV

    # the runs root's own embedding and index caches, not the session's: where an earlier test
    # embedded the sample's texts, the survivor build finished before the test could kill its
    # server
    env = {**{k: v for k, v in os.environ.items()
              if k not in (EMBED_CACHE_DIR_ENV, INDEX_CACHE_DIR_ENV)},
           "RAGDASH_DEMO_RUN": os.pathsep.join(str(ROOT / d) for d in BUNDLED),
           "RAGDASH_RUNS_ROOT": str(root / "runs")}
    cmd = [str(Path(sys.executable).with_name("streamlit")), "run", str(ROOT / "app.py"),
           "--server.headless", "true", "--server.port", str(port), "--server.address",
           "127.0.0.1", "--server.fileWatcherType", "none", "--browser.gatherUsageStats",
           "false"]
    starts = iter(range(1, 100))

    def serve():
        return streamlit_server(cmd, port, root / f"streamlit-{next(starts)}.log", env,
                                start_s=60)

    yield {"url": f"http://127.0.0.1:{port}", "root": root, "serve": serve}
    stop_jobs(root / "runs")


def open_build(pg, site) -> None:
    """The Build page (no quiet-time wait: a followed job redraws its panel every second)."""
    pg.goto(f"{site['url']}/build")
    pg.wait_for_selector('[data-testid="stHeading"], [data-testid="stException"]')
    pg.get_by_label("Run name (folder under the runs root)").wait_for()
    no_exception(pg, "build page")


def start_build(pg, name: str, questions: int) -> None:
    """Start a build of the first `questions` of the bundled sample (0: all of it, minutes of
    CPU; semantic chunks, the default retrievers) and wait until its panel says it builds."""
    size = pg.get_by_label("Sample size: the first N questions (0 = all)")
    size.fill(str(questions))
    size.press("Enter")
    settle(pg)
    name_run(pg, name)
    pg.get_by_role("button", name="Start the run").click()
    pg.get_by_text(re.compile(f"Building {name}")).wait_for(timeout=90_000)


def holder(run_dir: Path) -> int | None:
    from ragdash.rundir.lock import holder as lock_holder

    return lock_holder(run_dir)


def job_process(run_dir: Path, server_pid: int) -> int:
    """The pid of the job process that holds `run_dir`, once it has adopted the lock the
    server took for it: a process of its own, not the server."""
    deadline = time.time() + 60
    while holder(run_dir) in (None, server_pid) and time.time() < deadline:
        time.sleep(0.2)
    pid = holder(run_dir)
    assert pid and pid != server_pid, pid
    return pid


def test_a_build_survives_a_server_restart_and_a_second_is_cancelled(site, page):
    page.set_viewport_size({"width": 1400, "height": 2200})
    runs = site["root"] / "runs"
    with site["serve"]() as first:
        open_build(page, site)
        start_build(page, "survivor", 10)  # seconds of work: it outlives the kill
        shot(page, "70-jobs-building")
        job_pid = job_process(runs / "survivor", first.pid)
        first.kill()  # the server crashes mid-run
        first.wait()
        killed = time.time()
    time.sleep(1)
    assert holder(runs / "survivor") == job_pid, "the job should outlive the server"
    with site["serve"]() as second:
        open_build(page, site)  # a new server finds the job on disk and follows it (or, on a
        # fast machine, shows how it ended)
        page.get_by_text(re.compile(r"(Building survivor|Run survivor finished)")).wait_for(
            timeout=60_000)
        shot(page, "71-jobs-reconnected")
        start_build(page, "doomed", 0)
        job_process(runs / "doomed", second.pid)
        page.get_by_role("button", name="Cancel doomed").click()
        page.get_by_text(re.compile(r"Run doomed cancelled after")).wait_for(timeout=90_000)
        time.sleep(2)  # the page has redrawn the whole panel
        shot(page, "72-jobs-cancelled")
        assert page.get_by_text(re.compile("The run is resumable")).count() >= 1
        assert holder(runs / "doomed") is None  # free to start again
        from ragdash import jobs
        from ragdash.rundir import Run

        assert jobs.status(runs / "doomed").state == "cancelled"
        stages = Run(runs / "doomed").manifest["stages"]
        assert "interrupted" in {s["status"] for s in stages.values()}
        assert "running" not in {s["status"] for s in stages.values()}
        page.get_by_text(re.compile(r"Run survivor (finished|failed|was interrupted)")).wait_for(
            timeout=900_000)
        settle(page)
        no_exception(page, "after the survivor finished")
        shot(page, "73-jobs-survivor-finished")
        assert page.get_by_text(re.compile(r"Run survivor finished in")).count() == 1, \
            page.locator('[data-testid="stAlert"]').all_inner_texts()
        assert (runs / "survivor" / "ir_scores.parquet").exists()
        survivor = jobs.status(runs / "survivor")
        assert survivor.state == "finished" and survivor.ended > killed
        assert survivor.pid == job_pid  # the same process, from before the restart
