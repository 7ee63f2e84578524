"""Eight browser sessions on Thresholds move the k slider while both cores are busy as under a
build job (tests/browser/conftest.py's Chromium, a server of its own). The suite runs this file
last (tests/conftest.py, `LAST`): it takes both cores by design, so beside another browser test
it starved that test's waits."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from fixtures.make_run import make_run
from helpers import CONTEXT, app_server, no_exception, settle
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextlib.contextmanager
def cpu_load(cores: int = 2) -> Iterator[list[subprocess.Popen]]:
    """What a build job does to the server's CPU, without the build: `cores` busy loops at the
    job's niceness (`ragdash.jobs.NICE`), stopped on exit. A full semantic build of the sample
    took minutes of CPU that the other tests of the suite then lacked."""
    from ragdash.jobs import NICE

    procs = [subprocess.Popen(["nice", "-n", str(NICE), sys.executable, "-c",
                               "while True: pass"]) for _ in range(cores)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@pytest.fixture
def own_server(tmp_path) -> Iterator[dict]:
    """A server for one test, pointed at a small synthetic run (its own sessions only): two
    retrievers and 20 questions draw Thresholds with the same widgets as a large run, in a
    fraction of the browser's time per rerun."""
    demo = make_run(tmp_path / "demo", n_questions=20, seed=0, retrievers=("bm25", "sim"))
    with app_server(tmp_path, [demo]) as srv:
        yield srv


def _k_seen(pg) -> tuple[float, float, float | None]:
    """The k slider's thumb, the caption's k and the URL's thr_k of one session."""
    thumb = pg.locator('[data-testid="stSlider"]').filter(
        has_text="k (correct above)").locator('[data-testid="stSliderThumbValue"]')
    caption = re.search(r"Sliders now: h = [0-9.]+, k = (\d+\.\d+)",
                        pg.get_by_text(re.compile("Sliders now")).inner_text())
    url = parse_qs(urlparse(pg.url).query).get("thr_k")
    return (round(float(thumb.inner_text()), 3),
            round(float(caption.group(1)), 3), round(float(url[0]), 3) if url else None)


PRESSES = 3
"""Key presses in a row per session: each starts a rerun that the next one interrupts, as a
hand on the keyboard does. One round of them in all eight sessions before any is checked:
every press is a full rerun of Thresholds in its session (about 1.5 CPU-s of Chromium and
Streamlit), so a second round doubled the test's cost (129 CPU-s) and tested nothing more."""


@pytest.mark.timeout(900)
def test_eight_sessions_moving_sliders_under_a_build_jobs_load(own_server, browser):
    """Eight browser sessions on Thresholds move the k slider in turn while both cores are
    busy as under a build job: every session's caption reaches the value it asked for, no
    connection-error modal appears, and after settling each session's thumb, caption and URL
    show one k."""
    server = own_server
    tabs = browser.new_context(**CONTEXT)  # one cache for all
    url = f"{server['url']}/thresholds"
    first = tabs.new_page()
    pages = [first]
    try:
        first.set_default_timeout(90_000)
        first.goto(url)  # alone first: it fills the context's caches
        expect(first.get_by_text(re.compile("Sliders now"))).to_have_count(1)
        # then seven more tabs, opened by the first as a user's window.open would: they share
        # its renderer process (a tab of its own cost each a renderer's start and first draw:
        # 107 CPU-s of Chromium for the test against 40 so), and each is a Streamlit session of
        # its own all the same (a page load opens a connection of its own)
        for _ in range(7):
            with tabs.expect_page() as opened:
                first.evaluate("(url) => { window.open(url); }", url)
            pages.append(opened.value)
            pages[-1].set_default_timeout(90_000)
        for pg in pages:
            expect(pg.get_by_text(re.compile("Sliders now"))).to_have_count(1)
            settle(pg)
            no_exception(pg, "thresholds")
        caption = re.compile(r"Sliders now: h = [0-9.]+, k = (\d+\.\d+)")
        lost = 0
        with cpu_load() as burners:  # both cores busy while the sliders move
            wanted = []
            for pg in pages:  # every session moves k by PRESSES steps before any is checked
                thumb = pg.locator('[data-testid="stSlider"]').filter(
                    has_text="k (correct above)").get_by_role("slider")
                k0 = float(caption.search(pg.get_by_text(caption).inner_text()).group(1))
                thumb.focus()
                for _ in range(PRESSES):
                    pg.keyboard.press("ArrowLeft" if k0 > 0.5 else "ArrowRight")
                step = PRESSES * 0.001
                wanted.append(round(k0 + (-step if k0 > 0.5 else step), 3))
            for pg, k in zip(pages, wanted, strict=True):
                try:
                    pg.wait_for_function(
                        "(k) => [...document.querySelectorAll("
                        "'[data-testid=\"stCaptionContainer\"]')].some(e => "
                        "e.innerText.includes('Sliders now') && "
                        "e.innerText.includes('k = ' + k.toFixed(3)))", arg=k, timeout=90_000,
                        polling=100)  # not every animation frame of each of eight tabs
                except Exception:  # noqa: BLE001 (a lost update is counted, not raised)
                    lost += 1
            still = all(b.poll() is None for b in burners)
        modals = sum(pg.get_by_text(re.compile("Connection error|Cached ForwardMsg")).count()
                     for pg in pages)
        disagree = []
        for i, pg in enumerate(pages):
            settle(pg)
            no_exception(pg, f"session {i}")
            seen = _k_seen(pg)
            if len(set(seen)) != 1:
                disagree.append((i, seen))
        assert (lost, modals, disagree) == (0, 0, []), \
            f"{lost} of 8 updates lost, {modals} modals, thumb/caption/URL " \
            f"disagree: {disagree}"
        assert still, "the load should last while the sliders move"
    finally:
        tabs.close()
