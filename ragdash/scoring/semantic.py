"""Semantic Score_IR: a relevant part counts as covered to the degree that the sentence window of
C_N closest to it in meaning is similar to it, so a paraphrase scores where the longest common
substring of the paper's §2.2 finds nothing (its §4 names lexical sensitivity as the measure's
main limitation and semantic matching as future work).

- **Windows**: C_N's sentences (the paper's splitter, `ragdash.text.sentence_spans`) and runs of
  up to m adjacent sentences, m = the most sentences a part of the question has (at most 3): a
  part that spans two sentences is compared with pairs too, a one-sentence part only with single
  sentences. The part's own text, where C_N holds it word for word, is a window too (so a
  verbatim part scores 1 even when it is a fragment of a longer sentence). A window belongs to
  C_N when it ends at or before the cut (a sentence cut in two by N does not count yet), so a
  larger N never lowers a score.
- **Similarity**: cosine of all-MiniLM-L6-v2 embeddings (`ragdash.embeddings`, offline).
- **Score** of a part: max over the windows of clip((cos - FLOOR) / (1 - FLOOR), 0, 1).
  FLOOR = 0.30 is the 99th percentile of the cosine between 39,959 random pairs of sentences
  from paragraphs of different questions of the bundled HotpotQA sample (median 0.04, 95th
  percentile 0.21; `python benchmarks/semantic_floor.py`): 98.9 % of unrelated pairs score 0.
  A verbatim part scores 1 (cosine 1).

What it does not see: it rewards topical similarity (a sentence on the same subject stating a
different fact can score 0.5 or more), negation and swapped numbers barely move a sentence
embedding, and a short part (a name, a phrase) that C_N states only in other words is compared
with whole sentences, so it scores low.

For every budget at once: the context is split into sentences once, each window is embedded
once, and each cut takes the running maximum over the windows that end before it. Embeddings
are cached by text for one scoring call (`Vectors`): a chunk retrieved by several retrievers,
or for several questions, is embedded once; missing texts are embedded in batches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ragdash.text import sentence_spans

FLOOR = 0.30
"""Cosine mapped to 0: the 99th percentile of unrelated sentence pairs (module docstring)."""
MAX_WINDOW = 3
"""The longest window, in sentences."""
BATCH = 512
"""Texts per call to the embedding model (each call sorts its texts by length)."""

Embed = Callable[[list[str]], np.ndarray]
Progress = Callable[[str, int, int], None]


def to_score(cos: np.ndarray | float) -> np.ndarray:
    """Cosine -> [0, 1]: clip((cos - FLOOR) / (1 - FLOOR), 0, 1)."""
    return np.clip((np.asarray(cos, dtype=np.float64) - FLOOR) / (1 - FLOOR), 0.0, 1.0)


def minilm(model: str | None = None) -> Embed:
    """Unit vectors (n, d) from the bundled MiniLM (loaded once per process)."""
    from ragdash.embeddings import DEFAULT_MODEL, get_embedder

    embedder = get_embedder(model or DEFAULT_MODEL)
    return lambda texts: np.asarray(embedder.embed_documents(texts), dtype=np.float32)


class Vectors:
    """Unit vectors of texts, each text embedded once: a cache by text for one scoring call."""

    def __init__(self, embed: Embed | None = None, batch: int = BATCH):
        self._embed = embed
        self._batch = batch
        self._cache: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def add(self, texts: Iterable[str], progress: Progress | None = None) -> None:
        """Embed the texts not seen yet, in batches."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not missing:
            return
        if self._embed is None:
            self._embed = minilm()
        for i in range(0, len(missing), self._batch):
            batch = missing[i:i + self._batch]
            vecs = np.asarray(self._embed(batch), dtype=np.float32)
            if vecs.shape[0] != len(batch):
                raise ValueError(f"the embedder returned {vecs.shape[0]} vectors for "
                                 f"{len(batch)} texts")
            self._cache.update(zip(batch, vecs, strict=True))
            if progress:
                progress("embedding sentences", i + len(batch), len(missing))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts` (n, d), embedding any not seen yet."""
        self.add(texts)
        if not texts:
            return np.zeros((0, 0), np.float32)
        return np.stack([self._cache[t] for t in texts])


def window_size(parts: Sequence[str]) -> int:
    """m: the most sentences a part has (1 to MAX_WINDOW)."""
    return max([1, *(min(len(sentence_spans(p.strip())), MAX_WINDOW) for p in parts)])


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace at its ends."""
    seg = text[start:end]
    return start + len(seg) - len(seg.lstrip()), end - len(seg) + len(seg.rstrip())


def windows(text: str, size: int = 1) -> list[tuple[int, int]]:
    """Character spans (start, end) of every run of 1..size adjacent sentences of `text`."""
    spans = [_trim(text, s, e) for s, e in sentence_spans(text) if text[s:e].strip()]
    out = list(spans)
    for w in range(2, size + 1):
        out += [(spans[i][0], spans[i + w - 1][1]) for i in range(len(spans) - w + 1)]
    return out


def candidates(parts: Sequence[str], context: str) -> list[tuple[int, int]]:
    """The windows a question's parts are compared with, ordered by their end: runs of 1..m
    sentences (m = `window_size(parts)`), and the first verbatim occurrence of each part (its
    text is the part's: cosine 1, no extra embedding)."""
    spans = set(windows(context, window_size(parts)))
    for p in (p.strip() for p in parts):
        at = context.find(p) if p else -1
        if at >= 0:
            spans.add((at, at + len(p)))
    return sorted(spans, key=lambda s: (s[1], s[0]))


class SemanticScorer:
    """Semantic part scores over budgets, sharing one embedding cache across contexts."""

    def __init__(self, vectors: Vectors | None = None):
        self.vectors = vectors if vectors is not None else Vectors()

    def prepare(self, items: Iterable[tuple[Sequence[str], str]],
                progress: Progress | None = None) -> None:
        """Embed, in batches, every part and window of many (parts, context) pairs at once."""
        texts: list[str] = []
        for parts, context in items:
            texts += [p.strip() for p in parts]
            texts += [context[s:e] for s, e in candidates(parts, context)]
        self.vectors.add(texts, progress)

    def _similarities(self, parts: Sequence[str], context: str
                      ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Cosine (parts x windows) and the windows, ordered by their end."""
        spans = candidates(parts, context)
        if not spans:
            return np.zeros((len(parts), 0)), spans
        p = self.vectors([q.strip() for q in parts])
        w = self.vectors([context[s:e] for s, e in spans])
        return p.astype(np.float64) @ w.T.astype(np.float64), spans

    def __call__(self, parts: Sequence[str], context: str, cuts: Sequence[int]) -> np.ndarray:
        """Array (len(cuts), len(parts)): each part's score in each prefix context[:cut]."""
        out = np.zeros((len(cuts), len(parts)))
        if not parts:
            return out
        sims, spans = self._similarities(parts, context)
        if not spans:
            return out
        best = np.maximum.accumulate(to_score(sims), axis=1)  # over windows ending by then
        ends = np.array([e for _, e in spans])
        last = np.searchsorted(ends, np.asarray(cuts, dtype=np.int64), side="right") - 1
        have = last >= 0
        out[have] = best[:, last[have]].T
        return out

    def best(self, parts: Sequence[str], context: str, cut: int | None = None
             ) -> list[tuple[int, int, float]]:
        """Per part, the window of context[:cut] most similar to it: (start, end, cosine);
        (0, 0, nan) when C_N holds no whole sentence."""
        sims, spans = self._similarities(parts, context)
        limit = len(context) if cut is None else cut
        inside = np.array([e <= limit for _, e in spans], dtype=bool)
        if not inside.any():
            return [(0, 0, float("nan"))] * len(parts)
        best = np.argmax(np.where(inside, sims, -np.inf), axis=1)
        return [(*spans[i], float(sims[j, i])) for j, i in enumerate(best)]


def part_scores(parts: Sequence[str], context: str, cuts: Sequence[int],
                scorer: SemanticScorer | None = None) -> np.ndarray:
    """`ragdash.scoring.part_scores(..., method="semantic")` (a fresh cache unless given one)."""
    return (scorer or SemanticScorer())(parts, context, cuts)
