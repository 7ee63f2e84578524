"""The Runs page in a real browser (the shared server of tests/browser/conftest.py): two synthetic
runs on one dataset are picked by their group's button, ranked and compared; a link opens a
question in the question browser with both runs side by side; a reload keeps that view, and the
comparison's link opens the same comparison (both are in the URL). What needs no browser is in
tests/test_runs_pages_model.py: runs of different datasets refused on both pages, and the cut
moving both runs' columns."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from fixtures.make_run import make_run_reading
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]




@pytest.fixture(scope="module")
def two_runs(server):
    """Two runs of one dataset (sha256 ab…, no other run reads it)."""
    runs = server["root"] / "runs"
    return (str(make_run_reading(runs / "run-a", ("bm25", "sim"), "ab" * 32, llm=True)),
            str(make_run_reading(runs / "run-b", ("sim", "bm25"), "ab" * 32)))


def test_pick_rank_follow_and_reload(server, page, two_runs):
    a, b = two_runs
    page.set_viewport_size({"width": 1400, "height": 2600})
    goto(page, server, "runs")
    # the user picks the two runs of one dataset with its button (the server's runs root also
    # holds other tests' runs: the button of this dataset's group)
    group = page.get_by_test_id("stHorizontalBlock").filter(has_text="abababab")
    group.get_by_role("button", name="Compare these 2 runs").click()
    # N: the runs' default (800) on a server of their own; here, where the first visit
    # auto-picked another group, the N that group showed (one N follows the user across
    # pages: `widgets.shared_budget`), moved to the nearest of these runs' budgets
    who = page.get_by_role("heading", name=re.compile(r"^Who wins at N = (100|200|400|800)$"))
    expect(who).to_have_count(1)
    n = who.inner_text().rsplit(" ", 1)[-1]
    expect(page).to_have_url(re.compile("rn_runs=.*rn_runs="))
    settle(page)
    no_exception(page, "runs picked")
    picked = parse_qs(urlparse(page.url).query).get("rn_runs")
    assert sorted(picked) == sorted([a, b])
    assert page.get_by_role("heading", name="Leaderboard", exact=True).count() == 1
    assert page.get_by_text(re.compile(rf"(leads|tie) at N = {n}\b")).count() >= 1
    assert page.locator(".js-plotly-plot").count() >= 4  # dots, curves, scatter, difference
    shot(page, "30-runs-leaderboard")
    url = page.url
    # follow the link to the question with the largest difference
    link = page.get_by_text(re.compile("Open the largest difference"))
    link.scroll_into_view_if_needed()
    link.click()
    # (a loaded machine can take a while to draw the new page: wait for it, then check)
    page.get_by_role("heading", name="Question browser").wait_for(timeout=60_000)
    at_n = page.get_by_text(re.compile(rf"^Score_IR at N = {n}\b"))
    at_n.nth(1).wait_for(timeout=60_000)
    settle(page)
    no_exception(page, "two-run browser")
    assert "/browser" in page.url and "qb_q=" in page.url
    shot(page, "31-browser-from-runs")
    # the two (run, retriever) pairs stand side by side, each with its Score_IR at that N
    query = parse_qs(urlparse(page.url).query)
    assert {query["run"][0], query["qb_run2"][0]} == {a, b}, page.url
    assert at_n.count() == 2
    for path in (a, b):
        assert page.get_by_text(path.rsplit("/", 1)[-1] + " ·", exact=False).count() >= 1
    # a reload keeps the two-run view, cut where the link put it
    page.reload()
    at_n.nth(1).wait_for(timeout=60_000)
    settle(page)
    no_exception(page, "two-run browser reloaded")
    assert at_n.count() == 2 and page.get_by_text("run-b ·", exact=False).count() >= 1
    # back to the comparison by its link (a load of the URL, as a reload is): the same view
    goto(page, server, url.split("/", 3)[3])
    page.get_by_role("heading", name="Leaderboard", exact=True).wait_for(timeout=60_000)
    settle(page)
    no_exception(page, "runs reloaded")
    assert sorted(parse_qs(urlparse(page.url).query).get("rn_runs")) == sorted([a, b])
    assert page.get_by_role("heading", name="Leaderboard", exact=True).count() == 1
