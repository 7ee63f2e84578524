"""The user's whole path in Chromium: upload a CSV dataset and a zip corpus, leave the Data page
and come back (the upload is still there), build a run with two retrievers, reload mid-run (the
progress panel comes back), open the run and its retrieval pages, see highlighted evidence, then
rename and delete the run with confirmation. On the shared server (tests/browser/conftest.py)."""

from __future__ import annotations

import re
import zipfile

import pytest
from helpers import (
    expect_chosen,
    goto,
    name_run,
    no_exception,
    open_from_sidebar,
    settle,
    shot,
    upload,
    wait_built,
)
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PEOPLE = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald"]
NEXT = ("retrieval", "compare", "browser")
"""The pages a user opens after building a run, in order (the Question browser last: its
highlighted evidence is checked). Every page renders a run without LLM stages in
tests/test_app_pages.py, in a second each instead of Chromium's several."""


def _inputs(tmp_path):
    rows = ["id,question,answer,relevant_parts"]
    for i, who in enumerate(PEOPLE):
        rows.append(f"p{i},Which tower did {who} build?,tower {i},"
                    f"{who} built tower {i} in {1900 + i}.")
    rows.append("bad,,no question,x")  # one invalid record, reported on the Data page
    dataset = tmp_path / "qa.csv"
    dataset.write_text("\n".join(rows) + "\n")
    corpus = tmp_path / "docs.zip"
    with zipfile.ZipFile(corpus, "w") as z:
        for i, who in enumerate(PEOPLE):
            z.writestr(f"people/{who.lower()}.md",
                       f"# {who}\n\n{who} grew up near the sea. {who} built tower {i} in "
                       f"{1900 + i}. The tower still stands.\n")
    return dataset, corpus


def test_upload_build_reload_explore_rename_delete(server, page, tmp_path):
    dataset, corpus = _inputs(tmp_path)
    goto(page, server, "data")
    upload(page, dataset, corpus)
    expect(page.get_by_text("Questions loaded")).to_have_count(1)
    no_exception(page, "data upload")

    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_text("Retrieval scores").click()  # away and back in the same session
    expect(page).to_have_url(re.compile("/retrieval"))
    settle(page)
    nav.get_by_text("Data", exact=True).click()
    expect(page).to_have_url(re.compile("/data"))
    expect(page.get_by_text("Questions loaded")).to_have_count(1)
    settle(page)
    no_exception(page, "data page after coming back")
    assert page.get_by_text("qa.csv").count() >= 1, "the upload was lost on navigation"
    shot(page, "50-path-data-after-navigation")

    nav.get_by_text("Build a run").click()  # in the same session, which holds the upload
    expect(page).to_have_url(re.compile("/build"))
    settle(page)
    page.get_by_text(re.compile(r"^Uploaded on the Data page")).click()
    settle(page)
    chunker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Chunker")
    chunker.click()
    page.get_by_role("option", name=re.compile(r"^none")).click()
    expect_chosen(chunker, "none")
    settle(page)
    rets = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Retrievers")
    rets.click()
    page.get_by_role("option", name="SIM").click()
    page.keyboard.press("Escape")
    expect(rets).to_contain_text("SIM")
    settle(page)
    name_run(page, "path-run")
    start = page.get_by_role("button", name="Start the run")
    assert start.is_enabled(), page.locator('[data-testid="stAlert"]').all_inner_texts()
    start.click()
    page.get_by_text(re.compile(r"Building path-run")).wait_for(timeout=60_000)
    page.reload()  # mid-run: the panel reconnects to the job still running in the server
    page.get_by_text(re.compile(r"(Building|Run) path-run")).wait_for(timeout=60_000)
    shot(page, "51-path-build-after-reload")
    wait_built(page, "path-run")
    run_dir = server["root"] / "runs" / "path-run"
    assert (run_dir / "ir_scores.parquet").exists()

    page.get_by_role("button", name="Open run path-run").click()
    expect(page.get_by_role("heading", name="Run path-run")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"[?&]run="))
    key = re.search(r"[?&]run=([^&]+)", page.url)
    assert key, page.url
    for path in NEXT:  # where a user goes after a build (every page: tests/test_app_pages.py)
        open_from_sidebar(page, path)  # the run opened stays the page's run
        expect(page).to_have_url(re.compile(rf"[?&]run={re.escape(key.group(1))}(&|$)"))
    marks = page.locator(".rd-ctx mark")
    assert marks.count() >= 1, "no highlighted evidence in the question browser"
    first = page.locator(".rd-chunk").first.inner_text()
    assert re.search(r"^# \w+\s*\n", first.split("\n", 1)[1], re.M), first  # heading, own line
    shot(page, "52-path-browser-evidence")

    open_from_sidebar(page, "build")
    page.get_by_role("button", name="Rename").click()
    new = page.get_by_label("New name")
    new.fill("path-run-renamed")
    page.get_by_role("button", name="Rename the run").click()
    page.get_by_text("Renamed path-run to path-run-renamed.").wait_for(timeout=60_000)
    settle(page)
    no_exception(page, "after renaming")
    shot(page, "53-path-renamed")
    assert (server["root"] / "runs" / "path-run-renamed" / "run.json").exists()
    assert not run_dir.exists()
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("button", name="Delete for good").click()
    page.get_by_text("Deleted path-run-renamed.").wait_for(timeout=60_000)
    settle(page)
    no_exception(page, "after deleting")
    assert not (server["root"] / "runs" / "path-run-renamed").exists()
    shot(page, "53-path-deleted")

