"""Evidence found in documents extracted from PDF/HTML/DOCX carries no layout: a heading on the
line above a paragraph, a table before a sentence, or a list marker is a unit of its own, so a
found part is the sentence that holds the answer (ragdash.evidence.locate units)."""

from __future__ import annotations

import numpy as np

from ragdash.data.schema import Document, Example
from ragdash.evidence.finder import find_evidence
from ragdash.evidence.locate import unit_spans
from ragdash.text import is_layout_line, starts_list_item

HOUSE = ("House rules\n"
         "Booking\n"
         "A booking holds for 14 nights per stay and is\n"
         "paid in advance. Cancellation is free.\n"
         "Prices\n"
         "Season  Price  Nights\n"
         "Low  60 EUR  3\n"
         "High | 90 EUR | 7\n"
         "Guests may stay 21 nights at most in a year.\n"
         "Rules:\n"
         "- Pets are welcome on request\n"
         "- No smoking\n"
         "3. Other rules\n"
         "The garden closes at 22:00.")


def _units(text: str) -> list[str]:
    return [text[s:e] for s, e in unit_spans(text)]


def test_layout_lines_and_list_items_are_units_of_their_own():
    assert _units(HOUSE) == [
        "House rules", "Booking",
        "A booking holds for 14 nights per stay and is\npaid in advance.",  # wrap kept
        "Cancellation is free.", "Prices", "Season  Price  Nights", "Low  60 EUR  3",
        "High | 90 EUR | 7", "Guests may stay 21 nights at most in a year.", "Rules:",
        "- Pets are welcome on request", "- No smoking", "3. Other rules",
        "The garden closes at 22:00."]


def test_a_sentence_wrapped_over_lines_is_one_unit_and_an_initial_does_not_cut():
    text = "The Eiffel Tower was built by\nGustave Eiffel in 1889. He met J. Smith."
    assert _units(text) == ["The Eiffel Tower was built by\nGustave Eiffel in 1889.",
                            "He met J. Smith."]  # English sentences (issue 33)


def test_layout_line_kinds():
    assert is_layout_line("Season  Price  Nights") and is_layout_line("a | b")
    assert is_layout_line("3. Other rules") and is_layout_line("PRICES")
    assert not is_layout_line("Guests may stay 21 nights at most in a year.")
    assert not is_layout_line("The Eiffel Tower was built by")  # a wrapped sentence's line
    assert starts_list_item("- No smoking") and starts_list_item("b) second")
    assert not starts_list_item("Booking")


def _embed(texts: list[str]) -> np.ndarray:
    """Letter counts: enough to rank the few candidates of these questions."""
    out = np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts],
                   dtype=float) + 1e-3
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_found_parts_are_sentences_without_the_heading_or_table_before_them():
    result = find_evidence(
        [Example("q1", "For how many nights does a booking hold?", "14 nights", []),
         Example("q2", "How many nights a year may guests stay at most?", "21 nights", []),
         Example("q3", "When does the garden close?", "22:00", [])],
        [Document("house", "House", HOUSE)], embed=_embed)
    parts = {q.qid: [p.text for p in q.parts] for q in result.questions}
    assert parts == {
        "q1": ["A booking holds for 14 nights per stay and is\npaid in advance."],
        "q2": ["Guests may stay 21 nights at most in a year."],
        "q3": ["The garden closes at 22:00."]}
    for q in result.questions:
        p = q.parts[0]
        assert HOUSE[p.start:p.end] == p.text  # still the document's own span


def test_progress_starts_after_the_model_is_loaded_and_shows_the_embedding(monkeypatch):
    """`ragdash evidence` sat at 0/15 for minutes: the model loaded and every candidate was
    embedded behind the first bar. Now the model loads under its own step, before any other,
    and embedding reports as it goes."""
    import ragdash.evidence.finder as finder

    events: list = []

    def fake_minilm():
        events.append("model loaded")
        return _embed

    monkeypatch.setattr(finder, "minilm", fake_minilm)
    monkeypatch.setattr(finder, "EMBED_BATCH", 2)
    find_evidence([Example(f"q{i}", f"How long does booking {i} hold?", "14 nights", [])
                   for i in range(3)], [Document("house", "House", HOUSE)],
                  progress=lambda m, d, t: events.append((m, d, t)))
    assert events[:3] == [("evidence: loading the embedding model", 0, 1), "model loaded",
                          ("evidence: loading the embedding model", 1, 1)]
    steps = [e[0] for e in events[3:]]
    assert steps == sorted(steps, key=["evidence: locating answers",
                                       "evidence: embedding candidates",
                                       "evidence: ranking candidates"].index)
    embedding = [(d, t) for m, d, t in events[3:] if m == "evidence: embedding candidates"]
    assert len(embedding) >= 2 and embedding[-1][0] == embedding[-1][1]  # batches, to the end
    assert [d for d, _ in embedding] == sorted(d for d, _ in embedding)
