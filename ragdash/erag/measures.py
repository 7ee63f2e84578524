"""The IR measures eRAG aggregates a ranked list of per-chunk labels with (Salemi & Zamani,
SIGIR 2024, §3.2: the labels are the relevance judgments of the ranking's own chunks).

`labels[i]` is the label of the chunk at rank i + 1, in [0, 1]. Binary measures (precision,
MAP, MRR, hit) count a chunk relevant when its label is above RELEVANT_ABOVE: with `contains`
the labels are 0 or 1; with F1 or ROUGE-L (graded) a chunk is relevant when its output scores
above 0.5. nDCG uses the graded label itself as the gain. The ideal ranking of nDCG and the
relevant count of MAP are those of the judged chunks alone (the only judgments there are), as
in the paper's code. Precision divides by k, as trec_eval's P@k does, even when fewer than k
chunks were retrieved.

Why small functions here rather than a library: the `erag` package (0.0.1) pins pytrec_eval
0.5 (ragdash has pytrec_eval-terrier) and computes only success and P for graded labels;
trec_eval (pytrec_eval, ir_measures) takes integer relevance, so graded nDCG over labels in
[0, 1] cannot go through it. tests/test_erag.py checks the binary measures against
ir_measures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MEASURES = ("erag_precision", "erag_map", "erag_mrr", "erag_ndcg", "erag_hit")
"""The columns of the per-(question, retriever) table, each in [0, 1]."""
RELEVANT_ABOVE = 0.5
"""A label above this counts as a relevant chunk for the binary measures."""


def relevant(labels: Sequence[float]) -> list[bool]:
    """Whether each chunk counts as relevant (label above RELEVANT_ABOVE)."""
    return [float(x) > RELEVANT_ABOVE for x in labels]


def precision_at(labels: Sequence[float], k: int) -> float:
    """Relevant chunks in the top k, over k."""
    return sum(relevant(labels[:k])) / k


def average_precision(labels: Sequence[float], k: int) -> float:
    """The mean of precision at the rank of each relevant chunk in the top k, over the relevant
    chunks judged there; 0 without one."""
    rel = relevant(labels[:k])
    hits, total = 0, 0.0
    for i, r in enumerate(rel, 1):
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def reciprocal_rank(labels: Sequence[float], k: int) -> float:
    """1 / the rank of the first relevant chunk in the top k; 0 without one."""
    return next((1 / i for i, r in enumerate(relevant(labels[:k]), 1) if r), 0.0)


def _dcg(gains: Sequence[float]) -> float:
    return sum(float(g) / math.log2(i + 1) for i, g in enumerate(gains, 1))


def ndcg_at(labels: Sequence[float], k: int) -> float:
    """DCG of the top k's labels (gain = label, discount log2(rank + 1)) over that of the same
    labels sorted best first; 0 when every label is 0."""
    top = [float(x) for x in labels[:k]]
    ideal = _dcg(sorted(top, reverse=True))
    return _dcg(top) / ideal if ideal > 0 else 0.0


def hit_at(labels: Sequence[float], k: int) -> float:
    """1 when a relevant chunk is in the top k, else 0."""
    return float(any(relevant(labels[:k])))


def measures(labels: Sequence[float], k: int) -> dict[str, float]:
    """Every measure of MEASURES at k."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    return {"erag_precision": precision_at(labels, k), "erag_map": average_precision(labels, k),
            "erag_mrr": reciprocal_rank(labels, k), "erag_ndcg": ndcg_at(labels, k),
            "erag_hit": hit_at(labels, k)}
