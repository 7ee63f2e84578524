"""Synthetic pairs built on layout or on no real question are rejected (ragdash synth's checks):
an answer that is only a heading or a list marker ("3" from "3. Other rules"), and a question
that is not one question on one line ending with '?'."""

from __future__ import annotations

import pytest

from ragdash.chunking import Chunk
from ragdash.data.schema import Document
from ragdash.synth.records import Attempt
from ragdash.synth.reply import Reply
from ragdash.synth.verify import Verifier, is_one_question
from ragdash.text import in_layout, is_heading

RULES = ("House rules\n"
         "1. Booking\n"
         "A booking holds for 14 nights per stay and is paid in advance.\n"
         "3. Other rules\n"
         "Pets are welcome on request, and the garden closes at 22:00.\n"
         "Check-in | 15:00\n")


def _check(question: str, answer: str, span: str, text: str = RULES) -> Attempt:
    doc = Document("rules", "rules", text)
    attempt = Attempt("synth-001", (Chunk("rules#0", "rules", "rules", text, 0, len(text)),),
                      reply=Reply(question, answer, (span,)))
    Verifier([doc]).check(attempt)
    return attempt


@pytest.mark.parametrize("line, heading", [
    ("3. Other rules", True), ("House rules", False), ("HOUSE RULES", True), ("Booking", True),
    ("## Pets", True), ("2.1 Arrival", True), ("IV. Payment", True),
    ("Check-in | 15:00", False), ("Check-in 15:00", False), ("2024 Annual Report", False),
    ("Pets are welcome on request.", False), ("Guests may stay 3 nights", False),
    ("The Louvre Was Built By Napoleon Bonaparte In Paris, France Long Ago", False), ("", False),
])
def test_heading_lines(line, heading):
    assert is_heading(line) is heading


def test_a_list_marker_and_a_heading_are_layout_a_sentence_is_not():
    three = RULES.index("3. Other")
    assert in_layout(RULES, three, three + 1)  # the marker
    other = RULES.index("Other rules")
    assert in_layout(RULES, other, other + len("Other rules"))  # on a heading line
    fourteen = RULES.index("14")
    assert not in_layout(RULES, fourteen, fourteen + 2)  # inside a sentence
    time = RULES.index("15:00")
    assert not in_layout(RULES, time, time + 5)  # a table row is content


def test_an_answer_taken_from_a_list_marker_is_rejected():
    a = _check("How many nights per night does the stay rule give?", "3",
               "3. Other rules\nPets are welcome on request")
    assert a.reason == "answer_in_layout" and not a.kept
    assert "only a heading or a list marker" in a.why()


def test_an_answer_that_is_a_heading_is_rejected_but_the_same_words_in_a_sentence_are_kept():
    heading = _check("Which rules apply besides booking?", "Other rules",
                     "3. Other rules\nPets are welcome on request")
    assert heading.reason == "answer_in_layout"
    # "booking" is a heading ("1. Booking") and a word of the sentence the span also holds
    kept = _check("What must be paid in advance for a stay?", "a booking",
                  "1. Booking\nA booking holds for 14 nights per stay")
    assert kept.kept, kept.why()


def test_content_answers_beside_layout_are_kept():
    assert _check("For how many nights does a booking hold?", "14 nights",
                  "A booking holds for 14 nights per stay").kept
    assert _check("When does check-in start?", "15:00", "Check-in | 15:00").kept
    plain = "The Louvre was built by Napoleon in 1850 and houses the Mona Lisa."
    assert _check("When was the Louvre built?", "1850", plain, text=plain).kept


@pytest.mark.parametrize("question, one", [
    ("When was the Louvre built?", True),
    ('"When was the Louvre built?"', True),
    ("Is the garden open at night?", True),
    ("When was the Louvre built", False),  # no question mark
    ("When was it built? Who built it?", False),  # two questions
    ("When was it built?\nBy whom?", False),
    ("Built when?", False),  # fewer than three words
    ("The Louvre was built in 1850.", False),
    ("", False),
])
def test_one_question(question, one):
    assert is_one_question(question) is one


def test_a_reply_that_is_not_one_question_is_rejected_with_the_question_shown():
    a = _check("Booking rules. Pets", "on request", "Pets are welcome on request")
    assert a.reason == "not_a_question" and "Booking rules. Pets" in a.detail
