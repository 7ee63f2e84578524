"""A question's retrieved context cut at N tokens (C_N, §2.2 of El Yagouby, Chevallet & Gaussier
2024), as the question browser and the labelling page show it: the chunks in rank order, C_N's
end, and the relevant parts' longest matches. Pure: the page hands in its run view and its
(cached) tokenizer loader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import matching
from ragdash.budget import Tokenizer, cuts_from_ends, get_tokenizer, join_chunks
from ragdash.view import RunView


@dataclass(frozen=True)
class Cut:
    """One retriever's context for one question, cut at `budget` tokens."""

    chunks: pd.DataFrame
    context: str
    cut: int
    budget: int
    tokens: int | None  # the whole context's length in tokens, as stored by the score stage
    note: str | None = None  # why the cut is approximate, when it is

    @property
    def reached(self) -> bool:
        """True when the context is longer than N tokens (C_N is a strict prefix)."""
        return self.cut < len(self.context)


def cut_context(view: RunView, qid: str, retriever: str, budget: int,
                tokenizer: Callable[[str], Tokenizer] = get_tokenizer) -> Cut | None:
    """The context `retriever` gave `qid` in the run of `view`, cut at `budget` tokens with the
    run's tokenizer (loaded by `tokenizer`; at the nearest stored budget when it cannot be
    loaded here); None when it retrieved nothing."""
    run = view.run
    chunks = view.question_chunks(qid).get(retriever)
    if chunks is None or chunks.empty:
        return None
    context = join_chunks(chunks["text"].tolist())
    ir = run.table("ir_scores")
    stored = (ir[(ir["qid"].astype(str) == qid) & (ir["retriever"] == retriever)]
              .set_index("budget") if ir is not None else pd.DataFrame())
    tokens = int(stored["context_tokens"].iloc[0]) if len(stored) else None
    spec = view.spec.tokenizer
    try:
        ends = tokenizer(spec).token_ends([context])[0]
        return Cut(chunks, context, cuts_from_ends(ends, [budget], len(context))[0], budget,
                   tokens)
    except Exception as exc:  # noqa: BLE001 (tokenizer unavailable here: nearest stored budget)
        known = sorted(stored.index) or view.budgets
        near = max([b for b in known if b <= budget] or [min(known)])
        cut = int(stored.loc[near, "cut"]) if len(stored) else len(context)
        return Cut(chunks, context, cut, budget, tokens,
                   f"tokenizer {spec} unavailable ({type(exc).__name__}); cut at the "
                   f"stored N = {near}")


def part_matches(cut: Cut, parts: list[str]) -> list:
    """Each relevant part's longest match in C_N (what the highlighting shows)."""
    return matching.part_matches(parts, cut.context, cut.cut)
