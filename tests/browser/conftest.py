"""The browser tests' fixtures. Each pytest worker (xdist) starts one Streamlit server and one
Chromium for all its browser tests (session scope); every test gets a page in a browser context
of its own, so its own Streamlit session. Tests on one server share its runs root: each makes its
runs under a folder name no other test uses and never counts what it did not make. A test that
needs a server of its own (another command, a server it stops) starts it with
`helpers.app_server` or `helpers.streamlit_server`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fixtures.make_run import make_run
from fixtures.requires import require
from helpers import ARGS, CHROMIUM, VIEWPORT, app_server
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
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture
def page(tabs: BrowserContext) -> Iterator[Page]:
    """A fresh tab, so a Streamlit session of its own (Streamlit keeps a session per tab's
    connection, not per cookie); closed after the test."""
    pg = tabs.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    pg.close()
