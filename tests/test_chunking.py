"""Chunking: the paper's semantic rules, offsets of every method, max_chars, parameters."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

from ragdash.chunking import (
    CHUNKERS,
    Chunk,
    chunk_documents,
    default_params,
    describe,
    resolve_params,
    split_text,
)
from ragdash.chunking import semantic as sem
from ragdash.data.schema import Document

HOTPOT = (Path(__file__).resolve().parent.parent / "data"
          / "hotpot_dev_distractor_v1_subset1186.json.gz")  # the bundled sample


class KeywordEmbedder:
    """Fake embeddings: one axis per keyword, counted in the text; records every call."""

    def __init__(self, words=("alpha", "beta", "gamma")):
        self.words, self.calls = words, []

    def embed_documents(self, texts):
        self.calls.append(list(texts))
        return [[float(t.count(w)) for w in self.words] for t in texts]


class AngleEmbedder:
    """Fake embeddings: the text's `deg<N>` tag as the unit vector at N degrees."""

    def embed_documents(self, texts):
        out = []
        for t in texts:
            a = math.radians(float(re.search(r"deg(\d+)", t).group(1)))
            out.append([math.cos(a), math.sin(a)])
        return out


class HashEmbedder:
    """Fake embeddings: a pseudo-random vector per distinct text."""

    def embed_documents(self, texts):
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            out.append(np.random.default_rng(seed).normal(size=8).tolist())
        return out


class NoEmbedder:
    def embed_documents(self, texts):
        raise AssertionError(f"nothing should be embedded, got {len(texts)} texts")


def doc(text: str, doc_id: str = "d") -> Document:
    return Document(doc_id, f"title {doc_id}", text)


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


# --- the merge rule ------------------------------------------------------------------------


def test_merge_keeps_candidates_under_min_chars_in_the_buffer():
    # candidate lengths: 1 + n, then buffer + 1 + n; < 200 stays, >= 200 is emitted
    assert sem.merge_sentences([50, 50, 50, 50]) == [(0, 4)]  # 51, 102, 153, 204
    assert sem.merge_sentences([100, 97, 5]) == [(0, 3)]  # 101, 199 (kept), 205
    assert sem.merge_sentences([100, 98, 5]) == [(0, 2), (2, 3)]  # 200 is emitted
    assert sem.merge_sentences([250, 10, 10]) == [(0, 1), (1, 3)]  # leftover buffer emitted
    assert sem.merge_sentences([]) == []
    assert sem.merge_sentences([5, 5], min_chars=0) == [(0, 1), (1, 2)]


def test_reference_spacing_leading_space_and_double_spaces():
    a, b = "A" * 249 + ".", "B" * 249 + "."
    d = doc(f"{a} {b}")
    ref = chunk_documents([d], spacing="reference", embedder=NoEmbedder())
    exact = chunk_documents([d], embedder=NoEmbedder())
    # two pieces " A..." and " B...", never split, joined with a space
    assert texts(ref) == [f" {a}  {b}"]
    assert texts(exact) == [d.text]
    assert (ref[0].start, ref[0].end) == (exact[0].start, exact[0].end) == (0, len(d.text))
    short = chunk_documents([doc("Hi there. Bye now!")], spacing="reference")
    assert texts(short) == [" Hi there. Bye now!"]  # one merged piece: a leading space


def test_leftover_buffer_is_emitted_and_trailing_break_kept_in_reference_mode():
    a = "A" * 249 + "."
    d = doc(f"{a} Tail one. Tail two. ")
    sents = sem.sentences(d.text)
    assert sents[-1] == (len(d.text), len(d.text))  # re.split's empty last sentence
    ref = chunk_documents([d], spacing="reference", embedder=NoEmbedder())
    assert texts(ref) == [f" {a}  Tail one. Tail two. "]  # candidate buffer + " " + ""
    exact = chunk_documents([d], embedder=NoEmbedder())
    assert texts(exact) == [d.text.rstrip()]
    assert texts(chunk_documents([doc("Only. ")], spacing="reference")) == [" Only. "]


def test_empty_blank_and_one_piece_documents():
    docs = [doc("", "e"), doc("  \n ", "b"), doc("One sentence only.", "o")]
    out = chunk_documents(docs, embedder=NoEmbedder())
    assert [(c.chunk_id, c.text) for c in out] == [("o#0", "One sentence only.")]
    for method in CHUNKERS:
        extra = {"embedder": NoEmbedder()} if method == "semantic" else {}
        assert chunk_documents(docs[:2], method, **extra) == []


# --- breakpoints ---------------------------------------------------------------------------


def test_breakpoints_strictly_greater_than_the_percentile():
    assert sem.breakpoints(np.array([0.0, 0.0, 1.0, 0.0]), 80) == [2]  # threshold 0.4
    assert sem.breakpoints(np.array([0.0, 1.0, 1.0, 1.0]), 80) == []  # threshold 1: ties
    assert sem.breakpoints(np.array([0.0, 1.0, 1.0, 1.0]), 20) == [1, 2, 3]  # threshold 0.6
    assert sem.breakpoints(np.array([]), 80) == []


def test_single_distance_never_breaks():
    rng = random.Random(7)
    for _ in range(200):
        assert sem.breakpoints(np.array([rng.random() * 2]), rng.uniform(0, 100)) == []


def test_semantic_breaks_on_strict_rule_with_fake_embeddings():
    d = doc("alpha one. alpha two. beta three. alpha four. beta five.")
    kw = dict(min_chars=0, buffer_size=0, embedder=KeywordEmbedder())
    # distances [0, 1, 1, 1]: 80th percentile = 1, nothing is strictly greater
    assert texts(chunk_documents([d], **kw)) == [d.text]
    assert texts(chunk_documents([d], percentile=20, **kw)) == [
        "alpha one. alpha two.", "beta three.", "alpha four.", "beta five."]


def test_two_pieces_never_split():
    d = doc("alpha one. beta two.")
    for p in (0, 50, 80, 100):
        out = chunk_documents([d], min_chars=0, buffer_size=0, percentile=p,
                              embedder=KeywordEmbedder())
        assert texts(out) == [d.text]


def test_threshold_is_per_document():
    small = doc("deg0 a. deg1 b. deg2 c. deg3 d. deg10 e.", "small")
    large = doc("deg0 a. deg60 b. deg120 c. deg180 d. deg270 e.", "large")
    out = chunk_documents([small, large], min_chars=0, buffer_size=0, embedder=AngleEmbedder())
    # a corpus-wide threshold (60 degrees) would leave `small` whole
    assert texts(out) == ["deg0 a. deg1 b. deg2 c. deg3 d.", "deg10 e.",
                          "deg0 a. deg60 b. deg120 c. deg180 d.", "deg270 e."]
    assert [c.chunk_id for c in out] == ["small#0", "small#1", "large#0", "large#1"]


def test_windows_and_batched_unique_embedding():
    assert sem.windows(["a", "b", "c", "d"], 1) == ["a b", "a b c", "b c d", "c d"]
    assert sem.windows(["a", "b"], 3) == ["a b", "a b"]
    five = " ".join(f"alpha {i}." for i in range(5))
    four = " ".join(f"beta {i}." for i in range(4))
    emb = KeywordEmbedder()
    chunk_documents([doc(five, "x"), doc(four, "y"), doc(five, "z")], min_chars=0, embedder=emb)
    # one call for all documents; 4 pieces with buffer 3 have identical windows (not embedded);
    # 5 pieces give 3 distinct windows, shared by the two identical documents
    assert len(emb.calls) == 1 and len(emb.calls[0]) == 3


def test_progress_callback():
    seen = []
    d = doc(" ".join(f"alpha {i}." for i in range(6)))
    chunk_documents([d], min_chars=0, buffer_size=0, embedder=KeywordEmbedder(),
                    progress=lambda msg, done, total: seen.append((done, total)))
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)  # 6 distinct windows


# --- the real model ------------------------------------------------------------------------


def paper_chunks(text: str, embedder) -> list[str]:
    """The paper's chunker written literally as the paper's code does it (one document)."""
    pieces, buffer = [], ""
    for s in re.split(r"(?<=[.?!])\s+", text):
        candidate, buffer = buffer + " " + s, ""
        if len(candidate) < 200:
            buffer = candidate
        else:
            pieces.append(candidate)
    if buffer:
        pieces.append(buffer)
    if len(pieces) == 1:
        return pieces
    wins = [" ".join(pieces[max(0, i - 3): i + 4]) for i in range(len(pieces))]
    v = np.asarray(embedder.embed_documents(wins), dtype=np.float64)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    d = [1 - float(v[i] @ v[i + 1]) for i in range(len(v) - 1)]
    threshold = np.percentile(d, 80)
    chunks, start = [], 0
    for i, x in enumerate(d):
        if x > threshold:
            chunks.append(" ".join(pieces[start: i + 1]))
            start = i + 1
    chunks.append(" ".join(pieces[start:]))
    return chunks


def test_real_minilm_matches_the_paper_on_hotpotqa():
    from ragdash.embeddings import get_embedder

    class Memo:  # the real model, each window embedded once for the paper's code and ours
        def __init__(self):
            self.vectors: dict[str, list[float]] = {}

        def embed_documents(self, texts):
            todo = [t for t in texts if t not in self.vectors]
            self.vectors.update(zip(todo, get_embedder().embed_documents(todo), strict=True))
            return [self.vectors[t] for t in texts]

    with gzip.open(HOTPOT) as fh:
        records = json.load(fh)
    docs = [doc("".join(s), t) for t, s in records[4]["context"]]
    memo = Memo()
    ref = chunk_documents(docs, spacing="reference", embedder=memo)
    exact = chunk_documents(docs)  # the product path: model name -> get_embedder
    expected = [c for d in docs for c in paper_chunks(d.text, memo)]
    assert texts(ref) == expected
    assert len(expected) > len(docs)  # some documents were split
    assert [(c.start, c.end) for c in ref] == [(c.start, c.end) for c in exact]
    by_id = {d.doc_id: d.text for d in docs}
    assert all(by_id[c.doc_id][c.start: c.end] == c.text for c in exact)


# --- offsets for every method ---------------------------------------------------------------

WORDS = ["the", "U.S.", "Army", "é", "naïve", "日本", "🙂", "x" * 40, "Mr.", "end!", "why?",
         "a.b", "—", "ok."]
SEPS = [" ", " ", " ", "  ", "\n", "\n\n", "\t", " \u00a0"]


def random_text(rng: random.Random) -> str:
    n = rng.choice([0, 1, 3, 10, 40, 120])
    out = [rng.choice(SEPS) if rng.random() < 0.1 else ""]
    for _ in range(n):
        out.append(rng.choice(WORDS) + rng.choice(SEPS))
    text = "".join(out)
    return text if rng.random() < 0.5 else text.rstrip()


METHOD_PARAMS = [
    ("semantic", dict(embedder=HashEmbedder(), min_chars=40)),
    ("semantic", dict(embedder=HashEmbedder(), buffer_size=1, min_chars=0, percentile=50)),
    ("recursive", dict(chunk_size=60, chunk_overlap=15)),
    ("tokens", dict(size=12, overlap=4, tokenizer="whitespace")),
    ("tokens", dict(size=16, overlap=5)),  # llama3
    ("none", {}),
]


@pytest.mark.parametrize("max_chars", [None, 37])
@pytest.mark.parametrize(("method", "params"), METHOD_PARAMS)
def test_offsets_are_exact_slices(method, params, max_chars):
    rng = random.Random(f"{method}{sorted(params)}{max_chars}")
    docs = [doc(random_text(rng), f"doc{i}") for i in range(60)]
    chunks = chunk_documents(docs, method, max_chars=max_chars, **params)
    by_id = {d.doc_id: d for d in docs}
    counts: dict[str, int] = {}
    for c in chunks:
        d = by_id[c.doc_id]
        assert c.title == d.title and c.text.strip()
        assert d.text[c.start: c.end] == c.text
        assert c.chunk_id == f"{c.doc_id}#{counts.get(c.doc_id, 0)}"
        counts[c.doc_id] = counts.get(c.doc_id, 0) + 1
        if max_chars:
            assert len(c.text) <= max_chars
    if method in ("semantic", "none"):  # a partition: no text lost, nothing repeated
        for d in docs:
            mine = [c for c in chunks if c.doc_id == d.doc_id]
            assert all(a.end <= b.start for a, b in zip(mine, mine[1:], strict=False))
            assert "".join("".join(c.text.split()) for c in mine) == "".join(d.text.split())


@pytest.mark.parametrize("max_chars", [None, 37])
def test_reference_spacing_offsets_cover_the_same_text(max_chars):
    rng = random.Random(3)
    docs = [doc(random_text(rng), f"doc{i}") for i in range(60)]
    chunks = chunk_documents(docs, spacing="reference", embedder=HashEmbedder(), min_chars=40,
                             max_chars=max_chars)
    by_id = {d.doc_id: d.text for d in docs}
    for c in chunks:
        assert "".join(c.text.split()) == "".join(by_id[c.doc_id][c.start: c.end].split())
        assert c.start < c.end and (max_chars is None or len(c.text) <= max_chars)


def test_tokens_windows_and_overlap():
    d = doc(" ".join(f"w{i}" for i in range(10)))
    out = chunk_documents([d], "tokens", size=4, overlap=1, tokenizer="whitespace")
    assert texts(out) == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert texts(chunk_documents([d], "tokens", size=20, overlap=0, tokenizer="whitespace")) \
        == [d.text]


def test_recursive_uses_langchain_sizes():
    d = doc("\n\n".join("para " + "word " * 30 for _ in range(6)))
    out = chunk_documents([d], "recursive", chunk_size=200, chunk_overlap=20)
    assert len(out) > 1 and all(len(c.text) <= 200 for c in out)
    assert all(d.text[c.start: c.end] == c.text for c in out)


def test_none_is_whole_documents():
    docs = [doc("First doc. Two sentences.", "a"), doc("Second.", "b")]
    out = chunk_documents(docs, "none")
    assert [(c.chunk_id, c.doc_id, c.title, c.text, c.start, c.end) for c in out] == [
        ("a#0", "a", "title a", docs[0].text, 0, len(docs[0].text)),
        ("b#0", "b", "title b", "Second.", 0, 7)]


# --- max_chars -----------------------------------------------------------------------------


def test_max_chars_prefers_sentences_then_whitespace_then_hard_cuts():
    t = "Aaaa. Bbbb. Cccc."
    assert [t[s:e] for s, e in split_text(t, 12)] == ["Aaaa. Bbbb.", "Cccc."]
    t = "one two three four five"
    assert [t[s:e] for s, e in split_text(t, 9)] == ["one two", "three", "four five"]
    t = "x" * 25
    assert [t[s:e] for s, e in split_text(t, 10)] == ["x" * 10, "x" * 10, "x" * 5]
    d = doc("Short one. " + "y" * 30 + " tail.")
    out = chunk_documents([d], "none", max_chars=12)
    assert texts(out) == ["Short one.", "y" * 12, "y" * 12, "y" * 6 + " tail."]
    assert all(d.text[c.start: c.end] == c.text for c in out)
    assert [c.chunk_id for c in out] == [f"d#{i}" for i in range(4)]


# --- parameters ----------------------------------------------------------------------------


def test_default_params_are_discoverable():
    assert default_params("semantic") == {
        "buffer_size": 3, "percentile": 80.0, "min_chars": 200,
        "model": "all-MiniLM-L6-v2", "spacing": "exact"}
    assert default_params("recursive") == {"chunk_size": 1000, "chunk_overlap": 100}
    assert default_params("tokens") == {"size": 200, "overlap": 50, "tokenizer": "llama3"}
    assert default_params("none") == {}
    assert all(describe(m) for m in CHUNKERS)
    assert resolve_params("semantic", {"percentile": "95", "buffer_size": "1"}) == {
        **default_params("semantic"), "percentile": 95.0, "buffer_size": 1}


@pytest.mark.parametrize(("method", "kwargs", "message"), [
    ("fancy", {}, "unknown chunking method 'fancy'"),
    ("semantic", {"window": 2}, r"unknown parameter\(s\) \['window'\]"),
    ("none", {"size": 2}, "unknown parameter"),
    ("semantic", {"spacing": "loose"}, "spacing must be one of exact, reference"),
    ("semantic", {"buffer_size": "two"}, "semantic.buffer_size must be a whole number"),
    ("semantic", {"percentile": 120}, "percentile"),
    ("semantic", {"buffer_size": -1}, "buffer_size"),
    ("tokens", {"size": 10, "overlap": 10}, "overlap < size"),
    ("recursive", {"chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap < chunk_size"),
    ("none", {"max_chars": 0}, "max_chars must be a positive integer"),
    ("tokens", {"tokenizer": "nope"}, "unknown tokenizer"),
])
def test_bad_parameters(method, kwargs, message):
    with pytest.raises(ValueError, match=message):
        chunk_documents([doc("Some text. More text.")], method, **kwargs)


def test_duplicate_doc_ids_rejected():
    with pytest.raises(ValueError, match="duplicate doc_id 'a'"):
        chunk_documents([doc("x.", "a"), doc("y.", "a")], "none")
