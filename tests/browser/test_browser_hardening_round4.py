"""Issue 31, round four, in a real browser (the shared server of tests/browser/conftest.py): bare
URLs in a run's id and description make no link anywhere they are shown (item 9), and the Build
page refuses a sweep's tokenizer outside the allowed roots (item 10)."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from fixtures.make_run import make_run
from helpers import goto, no_exception, open_from_sidebar, settle, shot
from playwright.sync_api import expect

from ragdash.rundir import Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

URL, WWW, MAIL = "http://evil.example/x", "www.evil.example", "a@evil.example"


@pytest.fixture(scope="module")
def url_runs(server):
    root = server["root"] / "runs"
    kw = {"n_questions": 8, "seed": 1, "llm": False, "retrievers": ("bm25", "sim"),
          "budgets": (100, 200)}
    plain = make_run(root / "r4-plain", **kw)
    named = Run(make_run(root / "r4-url", **kw))
    named.update(id=URL, config={**named.manifest["config"],
                                 "description": f"See {WWW}, {URL} or write to {MAIL}"})
    return {"plain": str(plain), "url": str(named.path)}


def _no_link(pg, where: str) -> None:
    no_exception(pg, where)
    links = pg.locator('a[href*="evil.example"]')
    assert links.count() == 0, f"{where}: {links.first.evaluate('a => a.outerHTML')}"


def test_bare_urls_in_a_run_id_and_description_make_no_link(server, page, url_runs):
    page.set_viewport_size({"width": 1500, "height": 2600})
    sidebar = page.get_by_test_id("stSidebar")
    goto(page, server, f"?run={quote(url_runs['url'])}")
    for path in ("", "retrieval"):  # the sidebar caption on every page
        if path:
            open_from_sidebar(page, path)  # the same run, as a user goes on
        expect(sidebar.get_by_text(re.compile("^See www"))).to_have_count(1)
        _no_link(page, f"{path or 'overview'} of the run named {URL}")
    # beside another run in the question browser: its column header and "Retrievers of …"
    goto(page, server, f"browser?run={quote(url_runs['plain'])}&qb_run2={quote(url_runs['url'])}")
    page.get_by_role("heading", name="Question browser").wait_for(timeout=60_000)
    expect(page.get_by_text(re.compile(r"^Retrievers of http"))).to_have_count(1)
    page.get_by_text("Score_IR at N", exact=False).nth(1).wait_for(timeout=60_000)
    settle(page)
    _no_link(page, "question browser beside the run")
    assert page.get_by_text(re.compile(r"^http.*evil.*example/x")).count() >= 1  # shown as text
    shot(page, "93-bare-url-run")


def test_build_page_refuses_a_sweep_tokenizer_outside_the_roots(server, page,
                                                                tmp_path_factory):
    secret = tmp_path_factory.mktemp("secret-tokenizer") / "tokenizer.json"
    secret.write_text("{}")
    page.set_viewport_size({"width": 1400, "height": 3000})
    goto(page, server, "build")
    page.get_by_text("Vary one or two settings: one run per combination").click()
    settle(page)
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Setting 1")
    box.click()
    page.get_by_role("option", name="tokenizer", exact=True).click()
    settle(page)
    values = page.get_by_label("Values of setting 1 (comma-separated)")
    values.fill(f"llama3, {secret}")
    values.press("Enter")
    settle(page)
    expect(page.get_by_text(f"{secret} is outside the folders this dashboard may read",
                            exact=False)).not_to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("Start the"))).to_be_disabled()
    no_exception(page, "build with a sweep tokenizer outside the roots")
    shot(page, "94-build-sweep-tokenizer-outside")
