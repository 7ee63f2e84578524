"""The chunk preview the Build page shows before a run, and its warnings."""

from ragdash.chunking.preview import preview
from ragdash.data import Document


def _docs(n: int, sentences: int) -> list[Document]:
    return [Document(f"d{i}", f"Doc {i}", " ".join(
        f"Sentence {j} of document {i} says something different about topic {j % 7}."
        for j in range(sentences))) for i in range(n)]


def test_counts_lengths_and_first_chunks():
    pv = preview(_docs(30, 40), "recursive", {"chunk_size": 400}, k=5)
    assert pv.documents == 20 and pv.corpus_documents == 30  # only the first 20 are chunked
    assert pv.chunks > 20 and len(pv.first) == 5
    assert all(n <= 400 for n in pv.lengths) and not pv.warnings


def test_one_chunk_per_long_document_is_flagged():
    pv = preview(_docs(30, 40), "none", k=5)  # whole documents of ~3,000 characters
    assert pv.chunks == 20
    assert any("one chunk per document" in w for w in pv.warnings)


def test_short_documents_as_single_chunks_are_fine():
    assert not preview(_docs(30, 3), "none", k=2).warnings


def test_a_context_covering_the_corpus_is_flagged():
    pv = preview(_docs(4, 10), "recursive", {"chunk_size": 400}, k=10)
    assert any("every Score_IR will be close to 1" in w for w in pv.warnings)
