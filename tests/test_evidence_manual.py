"""A person's own evidence (ragdash.evidence.manual): a pasted passage is found verbatim in the
corpus with case and spacing ignored, a search proposes corpus sentences, and the chosen part is
saved as the document's own span with `parts_method` "user"."""

from __future__ import annotations

import pytest

from ragdash.data.schema import Document
from ragdash.evidence import output, review
from ragdash.evidence.locate import Corpus
from ragdash.evidence.manual import Searchable, with_part
from ragdash.evidence.records import EvidenceResult, QuestionEvidence

DOCS = [Document("a", "A", "Armstrong was the first man to step onto the lunar surface.\n"
                           "He flew on Apollo 11. Aldrin followed him."),
        Document("b", "B", "Apollo 11 landed in July 1969. He flew on Apollo 11.")]


@pytest.fixture
def corpus() -> Searchable:
    return Searchable(Corpus(DOCS))


def test_a_pasted_passage_is_the_documents_own_span(corpus):
    part = corpus.find('  "the FIRST man\nto step onto"  ')
    assert (part.doc_id, part.text, part.method) == ("a", "the first man to step onto", "user")
    assert DOCS[0].text[part.start:part.end] == part.text


def test_the_candidates_documents_are_searched_first(corpus):
    assert corpus.find("He flew on Apollo 11.").doc_id == "a"
    assert corpus.find("He flew on Apollo 11.", prefer=["b"]).doc_id == "b"


@pytest.mark.parametrize("passage, why", [
    ("the first woman to step onto", "occurs in no document"),
    ("Armstrong", "at least 2 words"),
    ("   ", "at least 2 words"),
])
def test_a_passage_that_is_no_span_is_refused_with_the_reason(corpus, passage, why):
    with pytest.raises(ValueError, match=why):
        corpus.find(passage)


def test_search_proposes_sentences_sharing_words_best_first(corpus):
    found = corpus.suggest("Who first walked on the moon? Neil Armstrong")
    assert found[0].text == "Armstrong was the first man to step onto the lunar surface."
    assert all(c.bm25 > 0 for c in found) and len(found) <= 5
    assert corpus.suggest("zebra quantum") == []


def test_the_chosen_part_is_saved_reviewed_with_method_user(corpus):
    qe = QuestionEvidence("moon", "Who first walked on the moon?", "Neil Armstrong",
                          reason="the answer occurs verbatim in no document")
    part = corpus.suggest("first man lunar surface")[0]
    new, i = with_part(qe, part)
    again, j = with_part(new, part)  # the same part is added once
    assert (i, j, len(again.candidates)) == (0, 0, 1)
    decisions = {"moon": review.pick(i)}
    assert review.describe(new, decisions["moon"]) == "Use your own part (candidate 1)"
    [row] = output.dataset_rows(review.apply(EvidenceResult([new]), decisions))
    assert row["relevant_parts"] == [part.text]
    assert (row["parts_source"], row["parts_method"]) == ("reviewed", "user")
