"""A question's retrieved context cut at N tokens, as the question browser and the labelling
page show it: the chunks in rank order, C_N's end, and the relevant parts' longest matches."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import matching
from ragdash.budget import cuts_from_ends, join_chunks
from ragdash.rundir import Run
from ragdash.ui import server, state


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


def cut_context(run: Run, qid: str, retriever: str, budget: int) -> Cut | None:
    """The context `retriever` gave `qid` in `run`, cut at `budget` tokens with the run's
    tokenizer (or at the nearest stored budget when the tokenizer cannot be loaded here);
    None when it retrieved nothing."""
    chunks = state.view(run).question_chunks(qid).get(retriever)
    if chunks is None or chunks.empty:
        return None
    context = join_chunks(chunks["text"].tolist())
    ir = run.table("ir_scores")
    stored = (ir[(ir["qid"].astype(str) == qid) & (ir["retriever"] == retriever)]
              .set_index("budget") if ir is not None else pd.DataFrame())
    tokens = int(stored["context_tokens"].iloc[0]) if len(stored) else None
    tokenizer = run.config.tokenizer
    try:
        ends = server.tokenizer(tokenizer).token_ends([context])[0]
        return Cut(chunks, context, cuts_from_ends(ends, [budget], len(context))[0], budget,
                   tokens)
    except Exception as exc:  # noqa: BLE001 (tokenizer unavailable here: nearest stored budget)
        known = sorted(stored.index) or run.budgets
        near = max([b for b in known if b <= budget] or [min(known)])
        cut = int(stored.loc[near, "cut"]) if len(stored) else len(context)
        return Cut(chunks, context, cut, budget, tokens,
                   f"tokenizer {tokenizer} unavailable ({type(exc).__name__}); cut at the "
                   f"stored N = {near}")


def part_matches(cut: Cut, parts: list[str]) -> list:
    """Each relevant part's longest match in C_N (what the highlighting shows)."""
    return matching.part_matches(parts, cut.context, cut.cut)
