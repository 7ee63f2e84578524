"""The Data page's evidence review in a real browser: upload a dataset with only id, question and
answer plus a corpus, find evidence, review it (reject one question, reload mid-review and get
the review back, pick another candidate for one question), save, check the saved file and that
the Build page uses it, take the saved dataset up again after a reload, then go back to the
upload and give your own evidence (a sentence searched for, a candidate trimmed). One upload and
one "Find evidence" job for all of that; the LLM's quotes need a job of their own. On the shared
server (tests/browser/conftest.py); screenshots go to test-artifacts/screenshots/ (30-*)."""

from __future__ import annotations

import csv
import json
import re

import pytest
from fakes.llm_server import FakeLLMServer
from helpers import (
    choose,
    expect_chosen,
    expect_metric,
    goto,
    new_files,
    no_exception,
    settle,
    shot,
    upload,
)
from playwright.sync_api import expect

from ragdash.evidence.review import REVIEWED_MARK

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE = '<img src=x onerror="alert(1)">'


MOON = "Armstrong was the first man to step onto the lunar surface, in July 1969."


def _files(tmp_path, moon: bool = False, note: str = ""):
    """The dataset and corpus, with one more document naming this attempt's folder (and `note`):
    files that differ from other tests' and from a failed first attempt's on the shared server,
    which keeps their reviews (a retry would otherwise find the review, not the button)."""
    note = f"{note} Written for {tmp_path.name}.".strip()
    qa = tmp_path / "towers_qa.csv"
    with open(qa, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        for i in range(4):
            w.writerow([f"t{i}", f"What did person {i} build in {1900 + i}?", f"tower {i}"])
        w.writerow(["moon", "Who first walked on the moon?", "Neil Armstrong"])
    corpus = tmp_path / "towers_docs.jsonl"
    corpus.write_text("\n".join(json.dumps({
        "doc_id": f"d{i}", "title": f"Doc {i}",
        "text": f"Visitors climb tower {i} every summer. Person {i} built tower {i} in "
                f"{1900 + i}. Tower {i} is made of stone{' ' + HOSTILE if i == 0 else ''}."})
        for i in range(4)) + (("\n" + json.dumps({"doc_id": "apollo", "title": "Apollo",
                                                   "text": MOON})) if moon else "")
        + (("\n" + json.dumps({"doc_id": "note", "title": "Note", "text": note})) if note
           else ""))
    return qa, corpus


def _pick_question(pg, qid: str) -> None:
    # chosen from the open list, reopened when a rerun redraws it (typing the id raced one)
    text = choose(pg, "Question to review",
                  re.compile(rf"^(?:{re.escape(REVIEWED_MARK)} )?{re.escape(qid)} · "))
    # the rerun that draws this question's card and radio may start after `settle` returns:
    # wait for its question text, so a decision never lands on the previous question's radio
    expect(pg.locator(".ev-q").first).to_contain_text(text.split(" · ", 1)[-1][:60])
    settle(pg)


def _decide(pg, text: str) -> None:
    # inside the radio group itself: the option's text is also drawn in a hidden copy
    # (react-aria) that strict mode counts as a second match
    pg.get_by_role("radiogroup", name="Decision").get_by_text(text, exact=False).click()
    settle(pg)


SAVE = "Save the reviewed dataset for the Build page"


def test_find_review_reload_save_build_and_give_your_own_evidence(server, page, tmp_path):
    """One upload, one "Find evidence" job, the whole review:
    - found: the metrics and statistics describe the parts found, not the upload's none;
    - a reload mid-review (one question rejected) loses nothing: the URL names the upload, which
      comes back with its review by itself and is offered under "Continue where you left off";
      the same files uploaded again find the review too;
    - review: a question's candidates with the answer marked and a hostile document shown as
      text; another candidate picked (the kept card moves), a question without evidence says
      why, a decision is remembered; save: the file holds the decisions; a later decision asks
      for a new save; the Build page builds from the reviewed file;
    - after a reload the saved dataset is offered and becomes the current dataset;
    - back on the upload, your own evidence: an answer in other words ('Neil Armstrong' where
      the corpus says 'Armstrong') gets its supporting sentence from a search of the documents,
      a candidate is trimmed by pasting part of it, a passage in no document is refused with
      the reason; the saved file has both."""
    qa, corpus = _files(tmp_path, moon=True)
    datasets = server["root"] / "runs" / "_datasets"
    before = set(datasets.glob("towers_qa-evidence-*.jsonl"))
    page.set_viewport_size({"width": 1400, "height": 3000})
    goto(page, server, "data")
    upload(page, qa, corpus)
    expect(page.get_by_text("This dataset has no relevant parts")).to_have_count(1)
    no_exception(page, "data upload without parts")
    page.get_by_role("button", name="Find evidence").click(timeout=120_000)
    page.get_by_text("Questions with evidence").wait_for(timeout=180_000)
    settle(page)
    no_exception(page, "evidence found")
    expect_metric(page, "Questions with evidence", "4")
    expect_metric(page, "Without evidence (left out)", "1")
    # the statistics describe the parts just found, not the upload's none
    lengths = page.locator(".js-plotly-plot").filter(has_text="characters over")
    assert "over 4 parts" in lengths.inner_text(), lengths.inner_text()

    # a reload mid-review, one decision made
    _pick_question(page, "t1")
    _decide(page, "Reject")
    expect_metric(page, "Reviewed", "1")
    page.reload()  # the URL names the upload: it comes back with its review by itself
    expect(page.get_by_text("Review restored from this server: 1 decision")).to_have_count(1)
    settle(page)
    no_exception(page, "reloaded")
    for name in ("Reviewed", "Rejected"):
        expect_metric(page, name, "1")
    page.get_by_text("Continue where you left off").click()  # and it is offered there too
    recent = page.locator('[data-testid="stSelectbox"]').filter(has_text="Recent uploads")
    assert "towers_qa.csv + towers_docs.jsonl" in recent.locator("input").input_value()
    shot(page, "36-data-continue")
    page.get_by_role("button", name="Continue with it").click()
    expect(page.get_by_text("Review restored from this server: 1 decision")).to_have_count(1)
    settle(page)
    no_exception(page, "continued")
    goto(page, server, "data")  # a new session, no upload in the URL: the same files
    upload(page, qa, corpus)  # uploaded again find the review as well
    expect(page.get_by_text("Review restored from this server: 1 decision")).to_have_count(1)

    # the review goes on: another candidate, a question without evidence, a decision remembered
    _pick_question(page, "t0")
    cards = page.locator(".rd-chunk")
    # the chosen question's cards, once the rerun has replaced the previous question's
    expect(page.locator(".ev-kept").first).to_contain_text("Person 0 built tower 0")
    expect(cards).to_have_count(3)  # three sentences hold 'tower 0'
    assert page.locator(".ev-kept").first.inner_text().count("Person 0 built tower 0") == 1
    assert page.locator("mark").count() >= 3  # the answer highlighted in each candidate
    assert page.get_by_text(HOSTILE, exact=False).count() > 0  # shown as text
    assert page.locator("img[src='x']").count() == 0
    page.get_by_role("heading", name="Find evidence").scroll_into_view_if_needed()
    shot(page, "30-evidence-review")
    _decide(page, "Use candidate 2 instead")
    expect(page.locator(".ev-kept")).to_have_count(1)  # the card that will be saved moved
    expect(page.locator(".ev-kept")).to_contain_text("Visitors climb tower 0")
    no_exception(page, "pick a candidate")
    # the note counted the decisions restored: outdated by this one, it is gone
    expect(page.get_by_text("Review restored from this server")).to_have_count(0)
    picked = page.locator('[data-testid="stRadio"]').filter(has_text="Decision").inner_text()
    _pick_question(page, "moon")
    expect(page.get_by_text("No evidence: the answer occurs verbatim in no document")
           ).to_have_count(1)
    _pick_question(page, "t0")  # the decision made before is remembered
    checked = page.locator('[data-testid="stRadio"] input[type="radio"]:checked')
    expect(checked).to_have_count(1)  # once the question's radio is drawn
    assert "candidate 2" in picked
    expect_metric(page, "Reviewed", "2")
    shot(page, "31-evidence-decided")

    page.get_by_role("button", name=SAVE).click()
    expect(page.get_by_text("Build a run now uses this file")).to_have_count(1)
    settle(page)
    no_exception(page, "save")
    saved = new_files(datasets, "towers_qa-evidence-*.jsonl", before)
    assert len(saved) == 1
    rows = {r["id"]: r for r in map(json.loads, saved[0].read_text().splitlines())}
    assert rows["t0"]["parts_source"] == "reviewed"
    assert rows["t0"]["relevant_parts"] != ["Person 0 built tower 0 in 1900."]
    assert rows["t1"]["relevant_parts"] == [] and rows["t1"]["parts_note"] == "rejected in review"
    assert rows["t2"]["parts_source"] == "auto"
    assert rows["t2"]["relevant_parts"] == ["Person 2 built tower 2 in 1902."]
    assert rows["moon"]["parts_source"] == "none"
    shot(page, "32-evidence-saved")
    _pick_question(page, "t3")  # a later decision asks for a new save
    _decide(page, "Accept the found part")
    changed = page.get_by_text("Decisions changed since the last save")
    expect(changed).to_have_count(1)
    page.get_by_role("button", name=SAVE).click()
    expect(changed).to_have_count(0)
    expect(page.get_by_text("Build a run now uses this file")).to_have_count(1)
    newest = new_files(datasets, "towers_qa-evidence-*.jsonl", before | set(saved))
    assert len(newest) == 1
    rows = {r["id"]: r for r in map(json.loads, newest[0].read_text().splitlines())}
    assert rows["t3"]["parts_source"] == "reviewed" and rows["t2"]["parts_source"] == "auto"

    data_url = page.url  # names the upload
    page.get_by_text("Build a run from this dataset").click()
    expect(page.get_by_text("3 valid questions", exact=False)).to_have_count(1)
    expect(page.get_by_text("(evidence reviewed)", exact=False).first).to_be_visible()
    settle(page)
    no_exception(page, "build with the reviewed dataset")
    shot(page, "33-build-uses-reviewed-dataset")

    # back on the Data page after a reload: the saved dataset is offered and becomes current
    page.goto(data_url)
    page.get_by_text("Continue where you left off").click()
    kept = page.locator('[data-testid="stSelectbox"]').filter(has_text="Saved datasets")
    expect_chosen(kept, "evidence reviewed for towers_qa.csv")
    settle(page)
    page.get_by_role("button", name="Use it").click()
    expect(page.get_by_text("Current upload: towers_qa-evidence-", exact=False)
           ).not_to_have_count(0)
    settle(page)
    no_exception(page, "a saved dataset used")
    body = page.inner_text("body")
    assert "Current upload: towers_qa-evidence-" in body and "towers_docs.jsonl" in body
    expect_metric(page, "Questions loaded", "3")  # of 5: t1 rejected, moon without evidence

    # back to the upload (its review comes with it): your own evidence for two questions
    page.get_by_role("button", name="Continue with it").click()
    expect_metric(page, "Reviewed", "3")
    settle(page)
    _pick_question(page, "moon")
    expect(page.get_by_text("left out of the dataset unless you give its evidence")
           ).to_have_count(1)
    page.get_by_role("button", name="Search the documents").click()  # question + answer
    first = page.locator(".rd-chunk").first
    expect(first).to_contain_text(MOON)
    expect(first).to_contain_text("apollo")
    settle(page)
    no_exception(page, "search the documents")
    shot(page, "34-evidence-search")
    page.get_by_role("button", name="Use sentence 1").click()
    expect(page.locator(".ev-kept")).to_contain_text("chosen by you")
    settle(page)
    no_exception(page, "use a sentence")
    radio = page.locator('[data-testid="stRadio"]').filter(has_text="Decision")
    assert radio.locator("input:checked").count() == 1
    assert "Use your own part (candidate 1)" in radio.inner_text()

    _pick_question(page, "t0")
    page.get_by_text("Your own evidence: trim a candidate").click()  # closed: t0 has evidence
    paste = page.get_by_label("Passage from a document")
    expect(paste).to_have_count(1)  # t0's, once moon's panel is gone
    settle(page)
    paste.fill("tower 0 was painted red")  # in no document
    page.get_by_role("button", name="Use this passage").click()
    expect(page.get_by_text("Not used: the passage occurs in no document")).to_have_count(1)
    paste.fill("  person 0 BUILT\ntower 0 ")  # case and spacing differ from the document
    page.get_by_role("button", name="Use this passage").click()
    expect(page.get_by_text("Not used:")).to_have_count(0)
    settle(page)
    no_exception(page, "paste a trimmed candidate")
    assert page.locator(".ev-kept").inner_text().strip().endswith("Person 0 built tower 0")
    shot(page, "35-evidence-trimmed")

    page.get_by_role("button", name=SAVE).click()
    expect(page.get_by_text("Build a run now uses this file")).to_have_count(1)
    own = new_files(datasets, "towers_qa-evidence-*.jsonl", before | set(saved) | set(newest))
    assert len(own) == 1
    rows = {r["id"]: r for r in map(json.loads, own[0].read_text().splitlines())}
    assert rows["moon"]["relevant_parts"] == [MOON]
    assert (rows["moon"]["parts_method"], rows["moon"]["parts_source"]) == ("user", "reviewed")
    assert rows["t0"]["relevant_parts"] == ["Person 0 built tower 0"]
    assert rows["t2"]["parts_source"] == "auto"


def test_the_llm_quotes_evidence_for_an_answer_in_other_words(server, page, tmp_path):  # noqa: F811
    """'Neil Armstrong' occurs in no document; with the LLM option the model is asked for the
    supporting sentence, and its quote (verbatim in a document) becomes the evidence. Its calls
    are estimated first, with none sent: the one call the job then sends."""
    qa, corpus = _files(tmp_path, moon=True, note="Uploaded for the LLM quote test.")
    page.set_viewport_size({"width": 1400, "height": 3000})
    goto(page, server, "data")
    upload(page, qa, corpus)
    page.get_by_text("Also ask an LLM which sentences support").click()
    choose(page, "Backend", "openai", exact=True)
    with FakeLLMServer(default=MOON) as llm:
        page.get_by_label("Model (empty: the backend's default)").fill("fake-model")
        page.get_by_label("Base URL (empty: default)").fill(llm.openai_url)
        page.keyboard.press("Enter")
        settle(page)
        # what the option would send, first: priced with nothing sent, the count the job sends
        page.get_by_role("button", name="Estimate the LLM's calls").click()
        expect(page.get_by_text("The LLM would be asked: fake-model: 1 calls", exact=False)
               ).to_have_count(1)
        settle(page)
        no_exception(page, "the LLM's calls estimated")
        assert llm.chat_requests() == []
        page.get_by_role("button", name="Find evidence").click()
        page.get_by_text("Questions with evidence").wait_for(timeout=180_000)
        settle(page)
        assert len(llm.chat_requests()) == 1  # only the question without verbatim evidence
    no_exception(page, "evidence with the LLM")
    expect_metric(page, "Questions with evidence", "5")
    _pick_question(page, "moon")
    kept = page.locator(".ev-kept")
    expect(kept).to_contain_text("quoted by the LLM")
    expect(kept).to_contain_text(MOON)
    shot(page, "37-evidence-llm-quote")
