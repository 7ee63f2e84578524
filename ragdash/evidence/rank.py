"""Ranking candidate evidence by similarity to the question, and the rule that keeps 1 to 3.

Score of a candidate c of question q (in [0, 1]):

    score(c) = 0.5 * BM25(q, c) / max over q's candidates of BM25(q, c')
             + 0.5 * max(0, cos(MiniLM(q), MiniLM(c)))

BM25 is `bm25s` (Lucene variant, k1 = 1.2, b = 0.75, English stop words, no stemming) over
every unit of the corpus, so rare question words weigh more; the lexical half is relative to
the question's best candidate (0 for all when no candidate shares a word with the question).
The semantic half is absolute. The score is the part's confidence.

Kept: the best candidate, plus the next ones (up to `max_parts` in all) whose score is within
`margin` of the best's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

Embed = Callable[[list[str]], np.ndarray]
"""Texts -> L2-normalised vectors (one row per text)."""

LEXICAL_WEIGHT = 0.5
K1 = 1.2
PRESELECT = 20
"""Candidates per question scored with MiniLM: the best by BM25 (ties in corpus order); this
bounds the embedding cost of answers that occur in many sentences."""


class Lexical:
    """BM25 (bm25s) over a list of texts; `scores(query)` gives one score per text."""

    def __init__(self, texts: Sequence[str]):
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index at DEBUG
        self._bm25s = bm25s
        self.size = len(texts)
        self.model = bm25s.BM25(k1=K1, b=0.75, method="lucene")
        self._df: dict[str, int] = {}
        if texts:
            tokens = self._tokens(list(texts))
            self.model.index(tokens, show_progress=False)
            for words in tokens:
                for w in set(words):
                    self._df[w] = self._df.get(w, 0) + 1

    def _tokens(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(texts, lower=True, stopwords="en", return_ids=False,
                                    show_progress=False)

    def ideal(self, query: str) -> float:
        """BM25 of `query` against a text of average length holding each of its words once:
        the sum of their Lucene IDFs over (1 + k1); a word found in no text has the highest
        IDF. The scale for a lexical share in [0, 1] (`ragdash.evidence.align`)."""
        n = self.size
        return sum(float(np.log(1 + (n - self._df.get(w, 0) + 0.5) / (self._df.get(w, 0) + 0.5)))
                   for w in self._tokens([query])[0] if w) / (1 + K1)

    def scores(self, query: str) -> np.ndarray:
        if not self.size:
            return np.zeros(0)
        vocab = self.model.vocab_dict
        words = [w for w in self._tokens([query])[0] if w and w in vocab]
        if not words:
            return np.zeros(self.size)
        return np.asarray(self.model.get_scores(words), dtype=float)


@lru_cache(maxsize=2)
def minilm(model: str = "all-MiniLM-L6-v2") -> Embed:
    """The bundled MiniLM as an `Embed` (loaded once per process)."""
    from ragdash.embeddings import get_embedder

    embedder = get_embedder(model)

    def embed(texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.asarray(embedder.embed_documents(texts), dtype=np.float32)

    return embed


class Vectors:
    """Embeddings of texts, each text embedded once."""

    def __init__(self, embed: Embed):
        self.embed = embed
        self._rows: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def add(self, texts: Sequence[str]) -> None:
        new = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if not new:
            return
        vectors = np.asarray(self.embed(new), dtype=np.float32)
        if vectors.shape[0] != len(new):
            raise ValueError(f"the embedder gave {vectors.shape[0]} vectors for {len(new)} texts")
        start = len(self._rows)
        self._rows.update({t: start + i for i, t in enumerate(new)})
        self._matrix = vectors if not start else np.vstack([self._matrix, vectors])

    def cosine(self, query: str, texts: Sequence[str]) -> np.ndarray:
        self.add([query, *texts])
        q = self._matrix[self._rows[query]]
        return np.array([float(self._matrix[self._rows[t]] @ q) for t in texts])


def combine(bm25: np.ndarray, cosine: np.ndarray) -> np.ndarray:
    """The documented score (module docstring), in [0, 1]."""
    bm25 = np.asarray(bm25, dtype=float)
    top = float(bm25.max()) if bm25.size else 0.0
    lexical = bm25 / top if top > 0 else np.zeros_like(bm25)
    semantic = np.clip(np.asarray(cosine, dtype=float), 0.0, 1.0)
    return np.clip(LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * semantic, 0.0, 1.0)


def order(scores: np.ndarray) -> list[int]:
    """Indices by score, best first; ties keep the given (corpus) order."""
    return [int(i) for i in np.argsort(-np.asarray(scores, dtype=float), kind="stable")]


def keep(scores: Sequence[float], max_parts: int, margin: float) -> list[int]:
    """The kept indices, best first: the best, and up to `max_parts - 1` more within
    `margin` of it."""
    if not len(scores):
        return []
    ranked = order(np.asarray(scores))
    best = scores[ranked[0]]
    return [ranked[0], *(i for i in ranked[1:max_parts] if scores[i] >= best - margin)]
