"""Issue 48 §4: the Label page's model (`ragdash.view.label`), tested without Streamlit: the
sample's box, the progress line, the answer's card (escaped, never the judge's score), what a
label and an undo say, the context the answer had, the agreement between labellers; and issue
49's check that the line before each label never promises an interval the pages will not show
("LLM only: 10 labels (≈15 for ±10)" beside intervals shown only from 20 of a system's labels)
and that no button suggests an answer."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from ragdash import labels
from ragdash.calibration.survey import MIN_SYSTEM_LABELS
from ragdash.labels import headline, sampling, store
from ragdash.labels.exchange import DEFAULT_SAMPLE
from ragdash.rundir import Run
from ragdash.view import label as model

ITEM = store.Item(3, "q<1>", "bm25", "Who built <b>it</b>?", ("Ada & Bob", "A<i>"),
                  "<script>x</script> Ada")


def test_the_sample_box_before_and_after_the_draw():
    box = model.sample_box(None, 300, sampling.RULE_NAMES)
    assert (box.title, box.caption, box.fixed, box.button) == (
        "The sample to label", None, False, "Draw the sample")
    assert (box.size, box.largest, box.rule, box.seed) == (DEFAULT_SAMPLE, 300, "judge", 0)
    assert model.sample_box(None, 12, {}).size == 12  # never more than the answers
    assert model.sample_box(None, 0, {}).largest == 1
    big = DEFAULT_SAMPLE + 10
    drawn = pd.DataFrame({"rule": ["uniform"] * big, "seed": [7] * big,
                          "drawn": ["2026-12-07T01:02:03+00:00"] * big})
    box = model.sample_box(drawn, 300, sampling.RULE_NAMES)
    assert box.fixed and (box.size, box.drawn, box.rule, box.seed) == (big, big, "uniform", 7)
    assert box.title == f"The sample to label: {big} answers"
    assert box.button == "Extend the sample"
    assert model.sample_box(drawn.iloc[:5], 300, {}).size == DEFAULT_SAMPLE  # a larger default
    # the rule in words, not its identifier
    assert box.caption.startswith(f"Drawn 2026-12-07 01:02 UTC by rule "
                                  f"**{sampling.RULE_NAMES['uniform']}**, seed 7, from 300 "
                                  "answers.")


def test_the_progress_line():
    mine = {"sample": 40, "labelled": 10}
    p = model.progress(mine, {"sample": 40, "labelled": 10}, "Ana*", md=lambda s: s + "!")
    assert (p.fraction, p.text) == (0.25, "10 of 40 labelled by Ana*!")
    p = model.progress(mine, {"sample": 40, "labelled": 25}, "Ana")
    assert p.text == "10 of 40 labelled by Ana · 25 of 40 by anyone"
    assert model.progress({"sample": 0, "labelled": 0}, {"sample": 0, "labelled": 0},
                          "x").fraction == 0.0
    assert p.finished.startswith("All 40 answers of the sample are labelled by you.")


def test_the_card_escapes_every_text_and_shows_no_judge_score():
    card = model.card_html(ITEM, '<span class="chip">BM25</span>')
    assert "<script>" not in card and "&lt;script&gt;x&lt;/script&gt; Ada" in card
    assert "Who built &lt;b&gt;it&lt;/b&gt;?" in card and "question q&lt;1&gt;" in card
    assert "<li>Ada &amp; Bob</li><li>A&lt;i&gt;</li>" in card
    assert "Answer 3 of the sample" in card and '<span class="chip">BM25</span>' in card
    assert "judge" not in card.lower()
    no_gold = model.card_html(store.Item(1, "q", "sim", "Q?", (), "A"), "")
    assert "<i>none given</i>" in no_gold


def test_what_a_label_and_an_undo_say():
    assert model.saved_note(ITEM, "wrong", str.upper) == "Saved: wrong (q<1>, BM25)"
    assert model.undone_note(None) == "Nothing to undo"
    assert model.undone_note({"label": "correct", "qid": "q2", "system": "sim"}, str.upper) == \
        "Undone: correct (q2, SIM)"
    assert [c for c, _ in model.CHOICES] == list(store.LABELS)  # every label, one button each
    assert [k for _, k in model.CHOICES] == ["1", "2", "3", "4"]


def test_the_context_of_an_answer():
    examples = pd.DataFrame({"qid": ["q<1>", "q2"], "parts": [["P one.", "P two."], []]})
    assert model.context_of(ITEM, examples, 300) == model.Context(None, ("P one.", "P two."),
                                                                  300)
    llm_only = store.Item(1, "q2", "llm_only", "Q?", (), "A")
    assert model.context_of(llm_only, examples, 300).note == \
        "This answer was generated without retrieval (LLM only)."
    assert model.context_of(ITEM, examples, None) == model.Context(None)
    assert model.context_of(ITEM, examples.iloc[1:], 300).parts == ()


def test_agreement_between_labellers():
    one = pd.DataFrame({"qid": ["a", "b"], "system": ["bm25"] * 2, "label": ["correct"] * 2,
                        "labeller": ["ana"] * 2})
    assert model.agreement(one) is None
    two = pd.DataFrame({"qid": list("abcabc"), "system": ["bm25"] * 6,
                        "label": ["correct", "wrong", "correct", "correct", "correct",
                                  "cannot tell"],
                        "labeller": ["ana"] * 3 + ["bo"] * 3})
    pairs = model.agreement(two)
    assert pairs["labellers"].tolist() == ["ana & bo"]
    assert pairs["n"].tolist() == [2]  # "cannot tell" left out
    assert pairs["same label"].tolist() == [0.5]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A run of 30 questions (3 systems of 30 answers), every answer in a uniform sample, with
    10 LLM-only answers labelled, then 20."""
    from fixtures.make_run import make_run

    run = Run(make_run(tmp_path_factory.mktemp("lb") / "run", n_questions=30, seed=4,
                       retrievers=("bm25", "sim")))
    store.draw_sample(run, len(store.labelable(run)), "uniform", 0)
    return run


def _say(run: Run) -> dict[str, str]:
    """Each system's part of the Label page's line (from the share section every page reads),
    by system."""
    line = headline.intervals_now(labels.current(run)["share"])
    parts = line.split("; ", 1)[1].split(". ", 1)[0].rstrip(".").split(" · ")
    return dict(p.split(": ", 1) for p in parts if ": " in p)


def test_the_line_before_each_label_promises_no_interval_below_its_minimum(labelled):
    llm_only = [i for i in store.sample_items(labelled) if i.system == "llm_only"]
    for i, it in enumerate(llm_only[:10]):
        store.add_label(labelled, it.qid, it.system, "correct" if i % 3 else "wrong", "ana")
    said = _say(labelled)["llm_only"]
    assert said.startswith("10 labels")
    need = re.search(r"≈(\d+) for ±10", said)
    assert need is not None and int(need.group(1)) >= MIN_SYSTEM_LABELS, said
    for i, it in enumerate(llm_only[10:MIN_SYSTEM_LABELS]):
        store.add_label(labelled, it.qid, it.system, "correct" if i % 3 else "wrong", "ana")
    said = _say(labelled)["llm_only"]
    assert re.fullmatch(r"±\d+( \(≈\d+ for ±10\))?", said), said  # the interval, now shown
    share = labels.current(labelled)["share"]["systems"]["llm_only"]
    assert share["ci"] is not None and share["labels"] == MIN_SYSTEM_LABELS


def test_a_system_too_small_for_an_interval_is_promised_none(tmp_path):
    """12 answers a system: no interval below 20 labels, which the line says (it said "5
    labels", and "(≈12 for ±10)" once all were labelled: a promise the pages could not keep);
    all 12 labelled, its share is exact (a census of these answers), said so."""
    from fixtures.make_run import make_run

    run = Run(make_run(tmp_path / "small", n_questions=12, seed=2, retrievers=("bm25",)))
    store.draw_sample(run, len(store.labelable(run)), "uniform", 0)
    first = store.sample_items(run)[0]
    mine = [i for i in store.sample_items(run) if i.system == first.system][:5]
    for i, it in enumerate(mine):
        store.add_label(run, it.qid, it.system, "correct" if i % 2 else "wrong", "ana")
    said = _say(run)
    assert said[first.system] == ("5 labels (12 answers: no interval below 20 labels; exact "
                                  "once all 12 are labelled)")
    for it in [i for i in store.sample_items(run) if i.system == first.system][5:]:
        store.add_label(run, it.qid, it.system, "correct", "ana")
    said = _say(run)
    assert said[first.system] == "exact (every answer labelled)"
    share = labels.current(run)["share"]["systems"][first.system]
    assert share["ci"] == [share["estimate"]] * 2 and share["labels"] == 12
    assert not any("≈" in s for s in said.values()), said
