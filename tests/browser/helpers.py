"""Helpers for the browser tests (tests/browser/): Debian Chromium driven by PyPI playwright
(never `playwright install`), a Streamlit server of `app.py` on a free local port, and page
steps that wait with Playwright's `expect` for what they need. Screenshots go to
test-artifacts/screenshots/ when RAGDASH_SCREENSHOTS is set."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.requires import chromium_path
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
SHOTS.mkdir(parents=True, exist_ok=True)  # drag timings are written here with or without shots
CHROMIUM = chromium_path()
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1800}
CONTEXT = {"viewport": VIEWPORT, "reduced_motion": "reduce"}
"""A browser context as the tests use it: tall, and asking pages for reduced motion (as a user's
system setting can), so Streamlit's spinners and transitions draw no animation frames: about a
fifth less Chromium CPU over a tour of five pages (18 vs 22 CPU-s, alternated runs)."""
BUNDLED = ("data/demo_squad", "data/demo_run")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(cmd: list[str], port: int, log_path: Path, env: dict | None = None,
                     start_s: float = 90) -> Iterator[subprocess.Popen]:
    """A Streamlit server started by `cmd` in the project folder, once `port` answers (the
    test fails with the log's end otherwise); stopped on exit."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + start_s
            while time.time() < deadline:
                if proc.poll() is not None:
                    pytest.fail("streamlit exited: " + log_path.read_text()[-2000:])
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    time.sleep(0.3)
            else:
                pytest.fail("streamlit did not start: " + log_path.read_text()[-2000:])
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def app_server(root: Path, demos: list[Path]) -> Iterator[dict]:
    """`streamlit run app.py` listing `demos` (then the two bundled demos) with its runs root
    at `root`/runs: {"url", "root", "pid"}."""
    port = free_port()
    env = {**os.environ, "RAGDASH_RUNS_ROOT": str(root / "runs"),
           "RAGDASH_DEMO_RUN": os.pathsep.join([*map(str, demos),
                                                *(str(ROOT / d) for d in BUNDLED)])}
    streamlit = Path(sys.executable).with_name("streamlit")
    cmd = [str(streamlit), "run", str(ROOT / "app.py"), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    with streamlit_server(cmd, port, root / "streamlit.log", env, start_s=60) as proc:
        yield {"url": f"http://127.0.0.1:{port}", "root": root, "pid": proc.pid}
    stop_jobs(root / "runs")


def stop_jobs(runs_root: Path) -> None:
    """Kill the job processes the dashboard started under `runs_root` (builds run in processes
    of their own, which outlive the server)."""
    from ragdash import jobs

    for job in jobs.jobs_under(runs_root):
        if jobs.cancellable(job):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job.pid, signal.SIGKILL)


def new_files(folder: Path, pattern: str, before: set[Path]) -> list[Path]:
    """Files matching `pattern` in `folder` that were not in `before`: what this attempt wrote
    on the shared server, where a failed first attempt (a rerun) leaves its own files."""
    return sorted(set(folder.glob(pattern)) - before)


def expect_chosen(box: Locator, text: str) -> None:
    """Wait until selectbox `box` shows an option containing `text` as its choice."""
    expect(box.locator("input")).to_have_value(re.compile(re.escape(text)))


def expect_metric(pg: Page, label: str, value: str) -> None:
    """Wait until exactly one metric labelled `label` is drawn and it reads `value`. A rerun can
    briefly draw the old metric beside the new one, so both are checked in one retrying wait."""
    name = pg.get_by_test_id("stMetricLabel").filter(has_text=re.compile(rf"^{re.escape(label)}$"))
    values = pg.get_by_test_id("stMetric").filter(has=name).get_by_test_id("stMetricValue")
    expect(values).to_have_text([value])


def settle(pg: Page, timeout: float = 90) -> None:
    """Wait until the app's script is not running and no placeholder is left. It cannot tell
    whether a rerun has yet to start: after an action, wait for its result with `expect`."""
    app = pg.get_by_test_id("stApp")
    expect(app).to_have_attribute("data-test-script-state", "notRunning",
                                  timeout=timeout * 1000)
    expect(pg.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout * 1000)


def no_exception(pg: Page, where: str) -> None:
    errs = pg.get_by_test_id("stException")
    assert errs.count() == 0, f"{where}: {errs.first.inner_text()[:800]}"


SHOTS_ON = bool(os.environ.get("RAGDASH_SCREENSHOTS"))
"""Screenshots are for people to look at, and no test reads one: a tall one costs Chromium about
1 CPU-s to paint and encode (82 in the suite), so they are taken only when RAGDASH_SCREENSHOTS
is set (README: "Look at the pages")."""


def shot(what: Page | Locator, name: str) -> None:
    """The page (or one element) as it is now, to test-artifacts/screenshots/`name`.png (when
    SHOTS_ON)."""
    if SHOTS_ON:
        SHOTS.mkdir(parents=True, exist_ok=True)
        what.screenshot(path=str(SHOTS / f"{name}.png"))


def goto(pg: Page, server: dict, path: str) -> None:
    """Open `path` of the app; return once its script has drawn (every page starts with a
    title, or an exception) and stopped, with no exception and no "Page not found"."""
    pg.goto(f"{server['url']}/{path}")
    pg.locator('[data-testid="stHeading"], [data-testid="stException"]').first.wait_for()
    drawn(pg, path)


def drawn(pg: Page, where: str) -> None:
    """Wait until the page's script stopped; no exception and no "Page not found"."""
    settle(pg)
    no_exception(pg, where)
    assert pg.get_by_text("Page not found").count() == 0, f"{where}: page not found"


def open_from_sidebar(pg: Page, name: str) -> None:
    """Open the page app_pages/<name>.py as a user does, by its link in the sidebar: the same
    session and no page load (a load costs Chromium a start of the app's JavaScript). Returns
    once the URL is the page's, its title has replaced the last page's and its script stopped,
    with no exception."""
    from ragdash.ui.navigation import PAGES

    spec = next(s for s in PAGES if s.name == name and not s.hidden)
    title = pg.locator('[data-testid="stHeading"]').first
    before = title.inner_text()
    pg.get_by_test_id("stSidebarNav").get_by_text(spec.title, exact=True).click()
    at = "" if spec.default else spec.url_path  # the default page (the Overview) is at /
    expect(pg).to_have_url(re.compile(rf"^https?://[^/]+/{at}(\?|$)"))
    expect(title).not_to_have_text(before)
    drawn(pg, f"{name} from the sidebar")


def choose(pg: Page, label: str, option: str | re.Pattern, exact: bool = False) -> str:
    """In the selectbox labelled `label`, choose the option named `option` (its whole name when
    `exact`), wait until the box shows it and the page has rerun; return the option's text.
    A rerun that redraws the box closes its open list: the list is opened again (3 tries)."""
    box = pg.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    choice = pg.get_by_role("option", name=option, exact=exact or None)
    for attempt in range(3):
        settle(pg)  # a click while the page still draws can land on a list that is redrawn
        box.click()
        try:
            expect(choice).to_have_count(1, timeout=15_000)
            text = choice.inner_text(timeout=15_000).strip()
            choice.click(timeout=15_000)
            break
        except (AssertionError, PlaywrightTimeout):
            if attempt == 2:
                raise
            pg.keyboard.press("Escape")
    expect_chosen(box, text)
    settle(pg)
    return text


def open_until(pg: Page, header: str, shown: Locator) -> None:
    """Click `header` (an expander's or a button's text) until `shown` appears: a click that
    lands while the page reruns can be lost with the element it hit (3 tries)."""
    for attempt in range(3):
        settle(pg)
        if shown.count():
            return
        pg.get_by_text(header).click()
        try:
            expect(shown).not_to_have_count(0, timeout=20_000)
            return
        except AssertionError:
            if attempt == 2:
                raise


def pick_no_chunker(pg: Page) -> None:
    """On the Build page: choose the chunker `none` (documents as chunks: a fast build)."""
    choose(pg, "Chunker", re.compile(r"^none"))


def name_run(pg: Page, name: str) -> None:
    """On the Build page: type the run's folder name and wait until the page kept it."""
    box = pg.get_by_label("Run name (folder under the runs root)")
    box.fill(name)
    box.press("Enter")
    settle(pg)
    expect(box).to_have_value(name)


def wait_built(pg: Page, name: str, timeout: float = 300) -> None:
    """On the Build page, once a run was started: wait until run `name` finished (a failure
    fails the test with the page's alerts) and the page has rerun, with no exception."""
    pg.get_by_text(re.compile(rf"Run {re.escape(name)} (finished|failed)")).wait_for(
        timeout=timeout * 1000)
    settle(pg)
    no_exception(pg, f"build page after run {name}")
    assert pg.get_by_text(f"Run {name} finished").count() == 1, \
        pg.locator('[data-testid="stAlert"]').all_inner_texts()


def upload(pg: Page, dataset: Path, corpus: Path) -> None:
    """On the Data page: put a dataset and a corpus file into its two uploaders, and wait
    until both are listed as uploaded."""
    boxes = pg.get_by_test_id("stFileUploader")
    for i, path in enumerate((dataset, corpus)):
        _upload_into(pg, boxes, i, path)
        settle(pg)


def _upload_into(pg: Page, boxes: Locator, i: int, path: Path) -> None:
    """Give `path` to uploader `i` until it is listed, three tries at most (a file given while
    the page reruns can be dropped); then fail with what the server answered to each upload
    request (seen once: a corpus never listed, no error in the server's log)."""
    answers: list[str] = []

    def answered(response) -> None:
        if "/_stcore/upload_file" in response.url:
            answers.append(f"{response.request.method} {response.status}")

    pg.on("response", answered)
    try:
        for _ in range(3):
            settle(pg)
            boxes.nth(i).locator('input[type="file"]').set_input_files(str(path))
            try:
                expect(boxes.nth(i)).to_contain_text(path.name, timeout=30_000)
                return
            except AssertionError as e:
                missed = e
    finally:
        pg.remove_listener("response", answered)
    raise AssertionError(f"{path.name} never listed in uploader {i} of {boxes.count()} "
                         f"({boxes.nth(i).inner_text()!r}); upload requests answered: "
                         f"{answers or 'none'}") from missed
