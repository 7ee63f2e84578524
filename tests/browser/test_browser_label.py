"""Labelling answers in a real browser (the shared server of tests/browser/conftest.py, on a run
of this test's own): a labeller draws the sample, labels five answers with the keyboard, reloads
and resumes where they were, undoes one, and finds the labels on the Overview (share correct
with its interval and n)."""

from __future__ import annotations

import re
from urllib.parse import quote

import pandas as pd
import pytest
from fixtures.make_run import make_run
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _progress(pg, n: int, of: int = 8) -> None:
    pg.get_by_text(re.compile(rf"^{n} of {of} labelled by Ana")).wait_for(timeout=60_000)


def _key(pg, key: str, then: int) -> None:
    """Press a shortcut with the focus outside every input, then wait for the progress."""
    pg.locator("h1").first.click()
    pg.keyboard.press(key)
    _progress(pg, then)
    settle(pg)


def test_label_five_answers_with_the_keyboard_reload_and_resume(server, page):
    run = make_run(server["root"] / "runs" / "label-sample", n_questions=40, seed=0)
    run_key = quote(str(run.resolve()))
    page.set_viewport_size({"width": 1400, "height": 2400})
    goto(page, server, f"label?run={run_key}")
    no_exception(page, "label page")
    assert page.get_by_text("Draw the sample first").count() == 1
    size = page.get_by_label("Answers to label")
    size.fill("8")
    size.press("Enter")
    settle(page)
    expect(size).to_have_value("8")
    page.get_by_role("button", name="Draw the sample").click()
    expect(page.get_by_text("Give your name to start")).to_have_count(1)
    name = page.get_by_label("Your name (stored with each label)")
    name.fill("Ana")
    name.press("Enter")
    settle(page)
    _progress(page, 0)
    no_exception(page, "sample drawn")
    # the judge's score is never shown while labelling
    assert page.get_by_text(re.compile("Judge score|judged", re.I)).count() == 0
    assert "Answer 1 of the sample" in page.locator(".rd-note").first.inner_text()
    shot(page, "93-label-first")
    for i, key in enumerate("13124", start=1):
        _key(page, key, i)
    assert "Answer 6 of the sample" in page.locator(".rd-note").first.inner_text()
    no_exception(page, "five labels")
    stored = pd.read_parquet(run / "labels.parquet")
    assert sorted(stored["label"]) == sorted(["correct", "wrong", "correct", "partly correct",
                                              "cannot tell"])
    assert set(stored["labeller"]) == {"Ana"}
    # a reload keeps the labeller (in the URL) and resumes at the sixth answer
    page.reload()
    settle(page)
    _progress(page, 5)
    assert "Answer 6 of the sample" in page.locator(".rd-note").first.inner_text()
    # undo takes the last label back; labelling it again restores the count
    _key(page, "u", 4)
    assert "Answer 5 of the sample" in page.locator(".rd-note").first.inner_text()
    _key(page, "1", 5)
    shot(page, "94-label-resumed")
    assert len(pd.read_parquet(run / "labels.parquet")) == 5
    # the Overview shows what the labels say, and how many it rests on
    goto(page, server, f"?run={run_key}")
    page.get_by_role("heading", name="Share correct, checked against labels").wait_for(
        timeout=60_000)
    no_exception(page, "overview with labels")
    shot(page, "95-overview-with-labels")
    # the undo took back "cannot tell": five labels, each counted
    assert page.get_by_text(re.compile(r"from 5 labels")).count() >= 1
    # LLM results adds every estimator per system and the judge against the labels
    goto(page, server, f"llm?run={run_key}")
    page.get_by_role("heading", name="Share correct, checked against labels").wait_for(
        timeout=60_000)
    no_exception(page, "LLM results with labels")
    assert page.get_by_text("Labels (rows) against the judge's scores (columns):").count() == 1
    shot(page, "96-llm-with-labels")
