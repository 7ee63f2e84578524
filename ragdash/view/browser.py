"""The Question browser's model: the question table filtered as its filters say, one system's
answer to one question with its judge score, and Score_IR of its context cut at the browser's N
(each part's share and their mean, the semantic figure beside an exact one), built by pure
functions so the page only lays them out and each is tested without a browser.

    shown = Filters("bm25", (0.2, 1.0), search="album").apply(table)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ragdash.analysis import frames
from ragdash.analysis.matching import SemanticMatch
from ragdash.scoring import part_scores

EDGE = 1e-9
"""The Score_IR range includes its ends despite float rounding."""


@dataclass(frozen=True)
class Filters:
    """The browser's filters: Score_IR of `retriever` within `score_range`; `search` in the id,
    question or gold answer (case-insensitive, literal); each metadata column within its chosen
    values; the judge score of `retriever` among `judge` (empty: any)."""

    retriever: str
    score_range: tuple[float, float] = (0.0, 1.0)
    search: str = ""
    metadata: Mapping[str, Sequence[str]] = field(default_factory=dict)
    judge: Sequence[int] = ()

    def apply(self, table: pd.DataFrame) -> pd.DataFrame:
        """The rows of `frames.per_question`'s table that pass every filter, renumbered."""
        lo, hi = self.score_range
        mask = table[f"ir:{self.retriever}"].between(lo - EDGE, hi + EDGE)
        if self.search:
            hay = (table["qid"].astype(str) + " " + table["question"].astype(str) + " "
                   + table["answer"].astype(str))
            mask &= hay.str.contains(self.search, case=False, regex=False)
        for col, chosen in self.metadata.items():
            if chosen:
                mask &= table[col].astype(str).isin([str(v) for v in chosen])
        if self.judge and f"judge:{self.retriever}" in table:
            mask &= table[f"judge:{self.retriever}"].isin(list(self.judge))
        return table[mask].reset_index(drop=True)


@dataclass(frozen=True)
class Answer:
    """One system's answer to one question as the page shows it: the text (or the call's error
    in brackets) and the judge score (None: not judged, or the judgment failed)."""

    text: str
    judge: int | None


def answer_of(answers: pd.DataFrame | None, judgments: pd.DataFrame | None, qid: str,
              system: str) -> Answer | None:
    """`system`'s answer to `qid` with its judge score; None when it has no answer row."""
    if answers is None:
        return None
    rows = answers[(answers["qid"].astype(str) == qid) & (answers["system"] == system)]
    if rows.empty:
        return None
    row = rows.iloc[0]
    text = row["answer"] if pd.notna(row["answer"]) else f"(error: {row['error']})"
    wide = frames.judge_wide(judgments)
    score = wide.loc[qid].get(system) if qid in wide.index else None
    return Answer(str(text), None if score is None or pd.isna(score) else int(score))


@dataclass(frozen=True)
class CutScore:
    """Score_IR of one context cut at N tokens (the paper's §2.2): each relevant part's score
    (its matched share, or its cosine under semantic matching) and their mean, 0 without
    parts; `semantic`: the semantic Score_IR shown beside an exact one (None when not asked,
    or when it is the score itself)."""

    parts: tuple[float, ...]
    score: float
    semantic: float | None = None


def cut_score(parts: Sequence[str], context: str, cut: int, method: str,
              windows: Sequence[SemanticMatch] = ()) -> CutScore:
    """Score_IR of `context` cut at character `cut` with the run's matching `method`; under
    semantic matching each part's score is its window's (`windows`, one per part:
    `analysis.matching.semantic_matches`); with exact matching the windows, when given, give
    the semantic figure beside it."""
    if not parts:
        return CutScore((), 0.0)
    if method == "semantic":
        scores = np.array([w.score for w in windows], dtype=float)
        return CutScore(tuple(map(float, scores)), float(scores.mean()) if len(scores) else 0.0)
    scores = part_scores(list(parts), context, [cut], method)[0]
    return CutScore(tuple(map(float, scores)), float(np.mean(scores)),
                    float(np.mean([w.score for w in windows])) if windows else None)
