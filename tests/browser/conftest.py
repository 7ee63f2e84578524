"""The browser tests' fixtures. Each pytest worker (xdist) starts one Streamlit server and one
Chromium for all its browser tests (session scope), with one browser context and one tab; every
test gets that tab on a blank page, so a Streamlit session of its own. Tests on one server share
its runs root: each makes its runs under a folder name no other test uses and never counts what
it did not make. A test that needs a server of its own (another command, a server it stops)
starts it with `helpers.app_server` or `helpers.streamlit_server`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fixtures.make_run import make_run
from fixtures.requires import require
from helpers import ARGS, CHROMIUM, CONTEXT, VIEWPORT, app_server
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

# what `expect` waits for may take a while on a loaded machine (its default is 5 s)
expect.set_options(timeout=60_000)

# Chromium and Streamlit share two cores with the rest of the suite, so a wait can still run out
# under load: a browser test gets one more try (pytest-rerunfailures) and fails if it fails again.
# The summary lists every rerun ("R"), so a test that needed one is seen, not hidden.
BROWSER_RERUNS = 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("flaky"):
            item.add_marker(pytest.mark.flaky(reruns=BROWSER_RERUNS))


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Iterator[dict]:
    """The shared server: a synthetic run of 40 questions (`demo`, listed first, so the default
    run), then the two bundled demos; runs root `root`/runs. {"url", "root", "pid"}."""
    require("chromium")
    root = tmp_path_factory.mktemp("browser")
    demo = make_run(root / "demo", n_questions=40, seed=0)
    with app_server(root, [demo]) as srv:
        yield srv


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    require("chromium")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def tabs(browser: Browser) -> Iterator[BrowserContext]:
    """One browser context for the worker's tests: its HTTP and compiled-code caches keep
    Streamlit's 23 MB of JavaScript between tests, which a context per test loaded and
    compiled again (about a third of Chromium's CPU time in the suite)."""
    context = browser.new_context(**CONTEXT)
    yield context
    context.close()


@pytest.fixture(scope="session")
def _tab(tabs: BrowserContext) -> Iterator[list[Page]]:
    """The worker's one tab (in a list, so a test that closed it gets a new one)."""
    held = [tabs.new_page()]
    yield held
    if not held[0].is_closed():
        held[0].close()


@pytest.fixture
def page(_tab: list[Page], tabs: BrowserContext) -> Iterator[Page]:
    """The worker's tab on a blank page, at the default size and timeout: a Streamlit session of
    its own (Streamlit keeps a session per page connection, and a page load makes a new one, as
    a reload does), without a new tab: a new tab's renderer process cost about 5 CPU-s of
    Chromium to draw its first page, a load in a used tab about 1.3. Left blank after the test,
    which ends its session."""
    if _tab[0].is_closed():
        _tab[0] = tabs.new_page()
    pg = _tab[0]  # blank: the test before left it so
    pg.set_viewport_size(VIEWPORT)
    pg.set_default_timeout(60_000)
    yield pg
    if not pg.is_closed():
        pg.goto("about:blank")
