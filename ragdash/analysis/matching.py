"""Evidence positions: where each relevant part lies in a retrieved context (the longest common
substring that Score_IR measures, §2.2, or the sentence window closest in meaning for the
`semantic` method), and the chunks a retriever returned for a question."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Match:
    """The longest match of relevant part `part` (index) in a context: context[start:end]."""

    part: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def longest_match(part: str, text: str) -> tuple[int, int]:
    """(start in text, length) of the longest common substring of `part` and `text`; the
    earliest in `text` among the longest. (0, 0) when nothing matches."""
    if not part or not text:
        return 0, 0
    sm = difflib.SequenceMatcher(None, text, part, autojunk=False)
    m = sm.find_longest_match(0, len(text), 0, len(part))
    return (m.a, m.size) if m.size else (0, 0)


def part_matches(parts: Sequence[str], context: str, cut: int | None = None) -> list[Match]:
    """Where each part's longest common substring with C_N = context[:cut] lies (one per part).

    The lengths equal `ragdash.scoring.part_scores(..., method="substring")` × len(part).
    """
    prefix = context if cut is None else context[:cut]
    out = []
    for i, p in enumerate(parts):
        start, size = longest_match(p, prefix)
        out.append(Match(i, start, start + size))
    return out


@dataclass(frozen=True)
class SemanticMatch(Match):
    """The sentence window of C_N closest in meaning to part `part` (the `semantic` Score_IR):
    context[start:end], its MiniLM cosine and the part score it gives (start == end and cosine
    nan when C_N holds no whole sentence)."""

    cosine: float = float("nan")
    score: float = 0.0


def semantic_matches(parts: Sequence[str], context: str, cut: int | None = None
                     ) -> list[SemanticMatch]:
    """Per part, its most similar sentence window of C_N = context[:cut]; the scores equal
    `ragdash.scoring.part_scores(..., method="semantic")` (embeds the windows: loads MiniLM)."""
    from ragdash.scoring.semantic import SemanticScorer, to_score

    best = SemanticScorer().best(parts, context, cut)
    return [SemanticMatch(i, a, b, cos, 0.0 if a == b else float(to_score(cos)))
            for i, (a, b, cos) in enumerate(best)]


def question_chunks(retrieved: pd.DataFrame, chunks: pd.DataFrame, qid: str
                    ) -> dict[str, pd.DataFrame]:
    """{retriever: the chunks it retrieved for `qid` in rank order}, columns rank, chunk_id,
    title, text, score (and doc_id, page, last_page, heading when the chunks have them); the
    context is their texts joined with one space (budget.join_chunks)."""
    r = retrieved[retrieved["qid"].astype(str) == str(qid)].sort_values(["retriever", "rank"])
    info = chunks.set_index("chunk_id")
    cols = [c for c in ("title", "text", "doc_id", "page", "last_page", "heading")
            if c in info.columns]
    out = {}
    for ret, g in r.groupby("retriever", sort=False):
        got = info.reindex(g["chunk_id"])[cols].reset_index()
        got.insert(0, "rank", g["rank"].to_numpy())
        got["score"] = g["score"].to_numpy()
        got["text"] = got["text"].fillna("")
        out[str(ret)] = got
    return out


def chunk_offsets(texts: Sequence[str]) -> list[int]:
    """Start offset of each chunk in the context (chunks joined with one space)."""
    starts, at = [], 0
    for t in texts:
        starts.append(at)
        at += len(t) + 1
    return starts
