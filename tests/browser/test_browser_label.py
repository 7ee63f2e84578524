"""Labelling answers in a real browser (the shared server of tests/browser/conftest.py, on runs
of these tests' own): a labeller draws the sample, labels five answers with the keyboard, reloads
and resumes where they were, undoes one, and finds the labels on the Overview (share correct
with its interval and n) and LLM results; on a one-system run, the Overview and LLM results,
opened before any label, show the labels given on the Label page without a server restart, and
the system's tile switches from "too few labels" at 19 labels to an interval at 25."""

from __future__ import annotations

import re
from urllib.parse import quote

import pandas as pd
import pytest
from fixtures.make_run import make_run
from helpers import goto, no_exception, open_from_sidebar, settle, shot
from playwright.sync_api import expect

from ragdash.labels import store
from ragdash.rundir import Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHARE_HEADING = "Share correct, checked against labels"


def _progress(pg, n: int, of: int = 8, who: str = "Ana") -> None:
    pg.get_by_text(re.compile(rf"^{n} of {of} labelled by {who}")).wait_for(timeout=60_000)


def _key(pg, key: str, then: int, of: int = 8, who: str = "Ana") -> None:
    """Press a shortcut with the focus outside every input, then wait for the progress."""
    pg.locator("h1").first.click()
    pg.keyboard.press(key)
    _progress(pg, then, of, who)
    settle(pg)


def _draw_and_name(pg, size: int, who: str) -> None:
    """On the Label page: draw a sample of `size` answers, then give the labeller's name."""
    box = pg.get_by_label("Answers to label")
    box.fill(str(size))
    box.press("Enter")
    settle(pg)
    expect(box).to_have_value(str(size))
    pg.get_by_role("button", name="Draw the sample").click()
    expect(pg.get_by_text("Give your name to start")).to_have_count(1)
    name = pg.get_by_label("Your name (stored with each label)")
    name.fill(who)
    name.press("Enter")
    settle(pg)


def test_label_five_answers_with_the_keyboard_reload_and_resume(server, page):
    """Ana draws a sample of 8, labels five answers by their keys (the judge's score never
    shown), reloads and resumes at the sixth, undoes one and labels it again; the Overview and
    LLM results, opened from the sidebar, show what the five labels say."""
    run = make_run(server["root"] / "runs" / "label-sample", n_questions=40, seed=0)
    run_key = quote(str(run.resolve()))
    page.set_viewport_size({"width": 1400, "height": 2400})
    goto(page, server, f"label?run={run_key}")
    no_exception(page, "label page")
    assert page.get_by_text("Draw the sample first").count() == 1
    _draw_and_name(page, 8, "Ana")
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
    open_from_sidebar(page, "overview")
    page.get_by_role("heading", name=SHARE_HEADING).wait_for(timeout=60_000)
    no_exception(page, "overview with labels")
    shot(page, "95-overview-with-labels")
    # the undo took back "cannot tell": five labels, each counted, too few for an interval
    assert page.get_by_text(re.compile(r"5 labels of the sample so far: (too few labels "
                                       r"for an interval|the labels cover \d of \d systems)")
                            ).count() == 1
    assert page.get_by_text("too few for an interval").count() >= 2  # each system's tile
    # LLM results adds every estimator per system and the judge against the labels
    open_from_sidebar(page, "llm")
    page.get_by_role("heading", name=SHARE_HEADING).wait_for(timeout=60_000)
    no_exception(page, "LLM results with labels")
    assert page.get_by_text("Labels (rows) against the judge's scores (columns):").count() == 1
    shot(page, "96-llm-with-labels")


def _one_system_run(path) -> Run:
    """A run whose answers are all by bm25 (LLM-only answers dropped), its calibration.json's
    label sections brought up to date with them, as the calibrate stage leaves them."""
    from ragdash import labels

    make_run(path, n_questions=40, seed=1, retrievers=("bm25",))
    for name in ("answers", "judgments"):
        table = pd.read_parquet(path / f"{name}.parquet")
        table[table["system"] == "bm25"].to_parquet(path / f"{name}.parquet")
    run = Run(path)
    assert labels.refresh(run) and run.calibration().labels["n"] == 0
    return run


NO_LABEL_YET = "No answer is labelled yet"


def test_pages_opened_before_labelling_show_the_labels_and_the_tile_gets_its_interval(server,
                                                                                    page):
    """Issue 49: the Overview and LLM results, opened before any label (the server keeps what
    they showed), show the share correct with its interval once ten answers are labelled with
    the keyboard on the Label page: by the sidebar, then after a reload, with no server restart.
    Labelling goes on to 19 (the last by the keyboard, those before it on disk as from another
    tab): the Label page says where the intervals stand and the system's tile on the Overview
    still says too few for an interval; at 25 labels it shows the interval. A one-system run, so
    every label counts for its tile."""
    from ragdash import labels
    from ragdash.labels.headline import sentences

    path = server["root"] / "runs" / "label-live"
    run = _one_system_run(path)
    run_key = quote(str(path.resolve()))
    page.set_viewport_size({"width": 1400, "height": 2400})
    goto(page, server, f"?run={run_key}")
    expect(page.get_by_text(NO_LABEL_YET)).to_have_count(1)
    open_from_sidebar(page, "llm")
    expect(page.get_by_text(NO_LABEL_YET)).to_have_count(1)
    open_from_sidebar(page, "label")
    expect(page.get_by_text(re.compile(r"Intervals now: pooled: no label yet"))).to_have_count(0)
    _draw_and_name(page, 25, "Cy")
    expect(page.get_by_text(re.compile(r"Intervals now: pooled: no label yet"))).to_have_count(1)
    for i in range(1, 11):  # each label by its key, as a labeller gives it
        _progress(page, i - 1, 25, "Cy")
        settle(page)
        page.locator("h1").first.click()
        page.keyboard.press("1" if i % 2 else "3")
    _progress(page, 10, 25, "Cy")
    settle(page)
    no_exception(page, "ten labels")
    expect(page.get_by_text(re.compile(r"Intervals now: pooled ±[\d.]+ points"))).to_have_count(1)
    found = labels.current(Run(path))
    assert found["labels"]["n"] == 10 and found["share"]["pooled"]["ci"]
    lead = sentences(found["share"], found["labels"], "judge")[0].replace("**", "")
    said = page.get_by_test_id("stMarkdownContainer").filter(has_text=lead)
    for where in ("overview", "llm"):
        open_from_sidebar(page, where)
        expect(said.first).to_be_visible()
        expect(page.get_by_text(NO_LABEL_YET)).to_have_count(0)
        if where == "overview":
            shot(page, "98-overview-labelled-while-open")
    page.reload()  # a new session on the same server: the same figures
    page.get_by_role("heading", name=SHARE_HEADING).wait_for()
    settle(page)
    no_exception(page, "LLM results reloaded")
    expect(said.first).to_be_visible()
    expect(page.get_by_text(NO_LABEL_YET)).to_have_count(0)

    def label(upto: int) -> None:
        """Labels up to the `upto`-th of the sample: those before it on disk as Cy would from
        another tab (each keyboard label is a full rerun of the page, pressed one by one
        above), then the last by the keyboard on the Label page, opened from the sidebar."""
        mine = store.read_labels(run).query("labeller == 'Cy'")
        seen = set(zip(mine["qid"], mine["system"], strict=True))
        todo = [it for it in store.sample_items(run) if (it.qid, it.system) not in seen]
        for item in todo[: upto - 1 - len(seen)]:
            store.add_label(run, item.qid, item.system,
                            "correct" if item.position % 3 else "wrong", "Cy")
        open_from_sidebar(page, "label")
        name = page.get_by_label("Your name (stored with each label)")
        if name.input_value() != "Cy":
            name.fill("Cy")
            name.press("Enter")
        _progress(page, upto - 1, 25, "Cy")
        settle(page)
        _key(page, "1" if upto % 3 else "3", upto, 25, "Cy")

    def overview() -> None:
        open_from_sidebar(page, "overview")
        page.get_by_role("heading", name=SHARE_HEADING).wait_for(timeout=60_000)
        no_exception(page, f"overview at {store.progress(run, 'Cy')['labelled']} labels")

    label(19)
    # before each label the page says where the intervals stand
    assert page.get_by_text(re.compile(r"Intervals now: pooled ±[\d.]+ points; bm25: 19 "
                                       r"labels", re.I)).count() == 1
    overview()
    assert page.get_by_text("19 labels · too few for an interval").count() == 1
    label(25)
    no_exception(page, "25 labels")
    overview()
    assert page.get_by_text("too few for an interval").count() == 0
    assert page.get_by_text(re.compile(r"^\d+–\d+ % · 25 labels$")).count() == 1
    shot(page, "97-overview-tile-interval")
