"""Retrieved contexts of a run and their Score_IR over budgets (the paper's §2.2, Table 3.1).

A context is the retrieved chunks' texts joined in rank order; C_N is its first N tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


def contexts(run: Run, chunks: bool = False, compared: Iterable[str] = ()) -> pd.DataFrame:
    """One row per (qid, retriever): the retrieved context (chunk texts joined in rank order),
    with `chunks` also the list of those texts (what `context_token_ends` composes from).

    Every question of the run gets a row for every retriever that retrieved and every one of
    `compared` (the run's, `RunSpec.compared`): a question that retrieved nothing has the empty
    context, which scores 0 at every budget. An imported
    system (`ragdash.systems`) gets a row for each question its file has: it is scored on
    those."""
    from ragdash.systems.store import chunk_table, coverage

    retrieved = run.read("retrieved").sort_values(["retriever", "qid", "rank"])
    chunk_rows = chunk_table(run)
    texts = dict(zip(chunk_rows["chunk_id"].tolist(), chunk_rows["text"].tolist(), strict=True))
    lists: dict[tuple[str, str], list[str]] = {}
    for key, cid in zip(zip(retrieved["retriever"].tolist(), retrieved["qid"].tolist(),
                            strict=True), retrieved["chunk_id"].tolist(), strict=True):
        lists.setdefault(key, []).append(texts[cid])
    names = list(dict.fromkeys([*retrieved["retriever"], *compared]))
    qids = sorted(run.read("examples")["qid"].astype(str))
    has = coverage(run)
    keys = [(r, q) for r in names for q in qids if r not in has or q in has[r]]
    texts_of = [lists.get(k, []) for k in keys]
    out = pd.DataFrame({"qid": [q for _, q in keys], "retriever": [r for r, _ in keys],
                        "context": [join_chunks(x) for x in texts_of]})
    return out.assign(chunks=texts_of) if chunks else out


def context_token_ends(ctx: pd.DataFrame, tokenizer: str) -> list[np.ndarray]:
    """Token ends of every context of `ctx`: composed from its `chunks` column when it has one
    (each distinct chunk tokenized once, `Tokenizer.context_ends`), else each context tokenized
    whole; the two give the same ends."""
    tok = get_tokenizer(tokenizer)
    if "chunks" in ctx.columns:
        return tok.context_ends(ctx["chunks"].tolist())
    return tok.token_ends(ctx["context"].tolist())


@dataclass(frozen=True)
class ContextCut:
    """How a run cuts and scores C_N: its tokenizer, its scoring mode (corrected or reference)
    and the share of a relevant part a chunk must hold to count as relevant."""

    tokenizer: str
    mode: str
    relevance_share: float = 1.0


def budget_contexts(run: Run, tokenizer: str, mode: str, budget: int,
                    compared: Iterable[str] = ()) -> pd.DataFrame:
    """C_N of every (qid, retriever) at one budget, cut as the score stage cuts: qid,
    retriever, text (`contexts`' rows)."""
    ctx = contexts(run, chunks=True, compared=compared)
    if mode == "reference":
        texts = [reference_prefixes(c, [budget], tokenizer)[0][0] for c in ctx["context"]]
    else:  # one batched tokenisation of the distinct chunks
        contexts_ = ctx["context"].tolist()
        ends = context_token_ends(ctx, tokenizer)
        texts = [c[: cuts_from_ends(e, [budget], len(c))[0]]
                 for c, e in zip(contexts_, ends, strict=True)]
    return ctx.assign(text=texts)[["qid", "retriever", "text"]]


def score_contexts(ctx: pd.DataFrame, parts: dict[str, list[str]], budgets: list[int],
                   tokenizer: str, method: str, mode: str,
                   progress: Progress | None = None) -> pd.DataFrame:
    """Score_IR for every (qid, retriever, budget); `ctx` has qid, retriever, context (and may
    have chunks: then C_N is cut at token ends composed from the chunks', the same cuts).

    `corrected` cuts C_N at token offsets; `reference` decodes N-1 tokens as the original
    code did. `semantic` embeds every part and sentence window of all contexts first, each
    distinct text once (`progress` reports it)."""
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
        all_ends = context_token_ends(ctx, tokenizer)
        for (qid, ret, context), ends in zip(ctx[["qid", "retriever", "context"]].itertuples(
                index=False), all_ends, strict=True):
            cut_list = cuts_from_ends(ends, budgets, len(context))
            scores = score(parts[qid], context, cut_list)
            k, n = len(budgets), len(ends)
            means = scores.mean(axis=1).tolist() if scores.shape[1] else [0.0] * k
            rows.extend(zip([qid] * k, [ret] * k, budgets, means, scores.tolist(), [n] * k,
                            cut_list, [n >= b for b in budgets], strict=True))
    else:
        for qid, ret, context in ctx[["qid", "retriever", "context"]].itertuples(index=False):
            prefixes, total = reference_prefixes(context, budgets, tokenizer)
            for b, prefix in zip(budgets, prefixes, strict=True):
                row = score(parts[qid], prefix, [len(prefix)])[0]
                rows.append((qid, ret, b, float(row.mean()) if len(row) else 0.0, row.tolist(),
                             total, len(prefix), reference_reaches(total, b)))
    return pd.DataFrame(rows, columns=IR_COLUMNS)

