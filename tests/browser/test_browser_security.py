"""Hostile names and paths in a real browser (the shared server of tests/browser/conftest.py): a run
whose folder name and id hold script, URL parameters written as Markdown links and images, a
symlink out of the runs root, and a dataset path outside the allowed roots on the Build page.
Nothing may run, link, load or be read; each is shown literally or refused with its reason."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from fixtures.make_run import make_run
from helpers import goto, no_exception, open_from_sidebar, settle, shot
from playwright.sync_api import expect

from ragdash.rundir import Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FOLDER = '<img src=x onerror="document.title=1">run'  # a folder name holds no '/'
RUN_ID = "<iframe srcdoc=\"<script>parent.document.title='pwned'</script>\"></iframe>"
LURE = ("**Session expired** [login](https://evil.example/login) "
        "![x](http://127.0.0.1:9/t.png) :red[alert]")


def _run(path, run_id: str | None = None) -> str:
    make_run(path, n_questions=8, seed=1, llm=False, retrievers=("bm25", "sim"),
             budgets=(100, 200))
    if run_id is not None:
        Run(path).update(id=run_id)
    return str(path)


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    root = server["root"] / "runs"
    plain = _run(root / "plain")
    hostile = _run(root / FOLDER, RUN_ID)
    outside = _run(tmp_path_factory.mktemp("elsewhere") / "secret-run")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    return {"plain": plain, "hostile": hostile, "linked": str(root / "linked")}


def _no_injection(pg, where: str) -> None:
    no_exception(pg, where)
    assert pg.locator("iframe[srcdoc]").count() == 0, where
    assert pg.locator('img[src="x"]').count() == 0, where
    assert pg.locator('a[href*="evil.example"]').count() == 0, where
    assert pg.locator('img[src*="127.0.0.1:9"]').count() == 0, where
    assert pg.title() not in ("1", "pwned"), where


def test_run_name_with_script_is_shown_as_text(server, page, runs):
    page.set_viewport_size({"width": 1500, "height": 2600})
    goto(page, server, f"browser?run={quote(runs['plain'])}&qb_run2={quote(runs['hostile'])}")
    page.get_by_role("heading", name="Question browser").wait_for(timeout=60_000)
    page.get_by_text("Score_IR at N", exact=False).nth(1).wait_for(timeout=60_000)
    _no_injection(page, "two-run browser with a hostile run")
    # the hostile run stands beside the plain one, its id shown literally
    assert page.get_by_text(re.compile(re.escape("<iframe srcdoc="))).count() >= 1
    shot(page, "90-hostile-run-name")
    # its own pages show the name as text too
    goto(page, server, f"?run={quote(runs['hostile'])}")
    _no_injection(page, "overview of the hostile run")
    assert page.get_by_role("heading", name=re.compile(re.escape("Run <iframe"))).count() == 1
    open_from_sidebar(page, "runs")  # as a user goes on, in the same session
    _no_injection(page, "compare runs with a hostile run")


def test_url_parameters_are_shown_as_text(server, page, runs):
    page.set_viewport_size({"width": 1400, "height": 2000})
    goto(page, server, f"?run={quote(LURE)}")
    _no_injection(page, "overview with a lure in ?run=")
    warning = page.get_by_text(re.compile(r"\(from the link\) was not found"))
    assert warning.count() == 1
    assert "**Session expired**" in warning.inner_text()
    goto(page, server, f"browser?run={quote(runs['plain'])}&qb_run2={quote(LURE)}")
    page.get_by_role("heading", name="Question browser").wait_for(timeout=60_000)
    _no_injection(page, "browser with a lure in ?qb_run2=")
    assert page.get_by_text(re.compile(r"\(from the link\) was not found")).count() >= 1
    shot(page, "91-url-lure")


def test_symlink_out_of_the_runs_root_is_neither_listed_nor_opened(server, page, runs):
    page.set_viewport_size({"width": 1400, "height": 2000})
    goto(page, server, f"?run={quote(runs['linked'])}")
    no_exception(page, "overview asked for a linked run")
    assert page.get_by_text(re.compile(r"\(from the link\) was not found")).count() == 1
    assert page.get_by_role("heading", name=re.compile("secret-run|linked")).count() == 0
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    assert options and not any("linked" in o or "secret" in o for o in options), options


def _build_path(pg, srv: dict, dataset: str) -> None:
    goto(pg, srv, "build")
    pg.get_by_text("A file on this server").click()
    box = pg.get_by_label("Dataset path")
    box.fill(dataset)
    box.press("Enter")
    settle(pg)


def _refused(pg, path) -> None:
    """The Build page refuses `path`, named in its message, and cannot start."""
    expect(pg.get_by_text(f"{path} is outside the folders this dashboard may read",
                          exact=False)).not_to_have_count(0)
    expect(pg.get_by_role("button", name=re.compile("Start the run"))).to_be_disabled()


def test_build_page_refuses_a_path_outside_the_allowed_roots(server, page, runs,
                                                             tmp_path_factory):
    secret = tmp_path_factory.mktemp("secret") / "qa.jsonl"
    secret.write_text(json.dumps({"id": "q1", "question": "?", "answer": "a",
                                  "relevant_parts": ["TOP SECRET"]}) + "\n")
    page.set_viewport_size({"width": 1400, "height": 3000})
    _build_path(page, server, str(secret))
    _refused(page, secret)
    no_exception(page, "build with an outside path")
    shot(page, "92-build-outside-path")
    # a symlink inside the runs root that leads outside is refused the same way
    link = server["root"] / "runs" / "qa-link.jsonl"
    link.symlink_to(secret)
    _build_path(page, server, str(link))
    _refused(page, link)
    # a dataset under the runs root is not refused
    inside = server["root"] / "runs" / "qa.jsonl"
    inside.write_text(secret.read_text())
    _build_path(page, server, str(inside))
    expect(page.get_by_text(re.compile("outside the folders this dashboard may read"))
           ).to_have_count(0)
    no_exception(page, "build with an allowed path")
