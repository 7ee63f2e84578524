"""Retrieved contexts of a run and their Score_IR over budgets (the paper's §2.2, Table 3.1).

A context is the retrieved chunks' texts joined in rank order; C_N is its first N tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from ragdash.budget import (
    cuts_from_ends,
    get_tokenizer,
    join_chunks,
    reference_prefixes,
    reference_reaches,
)
from ragdash.rundir import Run
from ragdash.scoring import part_scores
from ragdash.scoring.semantic import Progress

IR_COLUMNS = ["qid", "retriever", "budget", "score", "part_scores", "context_tokens", "cut",
              "reached"]


def contexts(run: Run) -> pd.DataFrame:
    """One row per (qid, retriever): the retrieved context (chunk texts joined in rank order).

    Every question of the run gets a row for every retriever of its config: a question that
    retrieved nothing has the empty context, which scores 0 at every budget."""
    retrieved = run.read("retrieved")
    texts = run.read("chunks").set_index("chunk_id")["text"]
    retrieved = retrieved.sort_values(["retriever", "qid", "rank"])
    retrieved["text"] = texts.reindex(retrieved["chunk_id"]).to_numpy()
    out = retrieved.groupby(["retriever", "qid"], sort=False)["text"].agg(join_chunks)
    names = list(dict.fromkeys([*retrieved["retriever"], *run.config.retrievers]))
    qids = sorted(run.read("examples")["qid"].astype(str))
    full = pd.MultiIndex.from_product([names, qids], names=["retriever", "qid"])
    out = out.reindex(full, fill_value="")
    return out.rename("context").reset_index()[["qid", "retriever", "context"]]


def budget_contexts(run: Run, tokenizer: str, mode: str, budget: int) -> pd.DataFrame:
    """C_N of every (qid, retriever) at one budget, cut as the score stage cuts: qid,
    retriever, text."""
    ctx = contexts(run)
    if mode == "reference":
        texts = [reference_prefixes(c, [budget], tokenizer)[0][0] for c in ctx["context"]]
    else:  # one batched tokenisation
        contexts_ = ctx["context"].tolist()
        ends = get_tokenizer(tokenizer).token_ends(contexts_)
        texts = [c[: cuts_from_ends(e, [budget], len(c))[0]]
                 for c, e in zip(contexts_, ends, strict=True)]
    return ctx.assign(text=texts)[["qid", "retriever", "text"]]


def score_contexts(ctx: pd.DataFrame, parts: dict[str, list[str]], budgets: list[int],
                   tokenizer: str, method: str, mode: str,
                   progress: Progress | None = None) -> pd.DataFrame:
    """Score_IR for every (qid, retriever, budget); `ctx` has qid, retriever, context.

    `corrected` cuts C_N at token offsets; `reference` decodes N-1 tokens as the original
    code did. `semantic` embeds every part and sentence window of all contexts first, each
    distinct text once (`progress` reports it)."""
    tok = get_tokenizer(tokenizer)
    rows = []
    score: Callable[[list[str], str, list[int]], np.ndarray]
    if method == "semantic":
        from ragdash.scoring.semantic import SemanticScorer

        score = SemanticScorer()
        score.prepare(((parts[q], c) for q, c in zip(ctx["qid"], ctx["context"], strict=True)),
                      progress)
    else:
        score = partial(part_scores, method=method)
    if mode == "corrected":
        all_ends = tok.token_ends(ctx["context"].tolist())
        for (qid, ret, context), ends in zip(ctx[["qid", "retriever", "context"]].itertuples(
                index=False), all_ends, strict=True):
            cut_list = cuts_from_ends(ends, budgets, len(context))
            scores = score(parts[qid], context, cut_list)
            for b, cut, row in zip(budgets, cut_list, scores, strict=True):
                rows.append((qid, ret, b, float(row.mean()) if len(row) else 0.0, row.tolist(),
                             len(ends), int(cut), len(ends) >= b))
    else:
        for qid, ret, context in ctx[["qid", "retriever", "context"]].itertuples(index=False):
            prefixes, total = reference_prefixes(context, budgets, tokenizer)
            for b, prefix in zip(budgets, prefixes, strict=True):
                row = score(parts[qid], prefix, [len(prefix)])[0]
                rows.append((qid, ret, b, float(row.mean()) if len(row) else 0.0, row.tolist(),
                             total, len(prefix), reference_reaches(total, b)))
    return pd.DataFrame(rows, columns=IR_COLUMNS)

