"""RAGChecker's claim-level metrics (Ru et al. 2024, Table 1; computed as in its reference
implementation, `ragchecker.computation`) from entailment verdicts.

Notation of the paper: the answer's claims c(m), the gold answer's claims c(gt), the retrieved
chunks. A claim is "in" a text only when the text entails it. A chunk is relevant when it
entails some gold claim (RAGChecker), or, for the `_parts` variants, when it holds a gold
relevant part (ragdash, `ragdash.scoring.ir_metrics.relevant_chunks`). As in the reference
implementation, a share over an empty set (an answer without claims) is 0; a metric whose
verdicts are missing (a failed or unreadable reply) is NaN, its error recorded by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NAN = math.nan


@dataclass(frozen=True)
class Verdicts:
    """Entailment verdicts of one answer (None: not asked, or its reply failed).

    `answer_in_gold[i]`: answer claim i entailed by the gold answer; `gold_in_answer[j]`: gold
    claim j entailed by the answer; `chunk_answer[k, i]` / `chunk_gold[k, j]`: chunk k entails
    answer claim i / gold claim j (shape chunks x claims); `parts_relevant[k]`: chunk k holds
    a relevant part. An answer without a retrieved context has no chunk matrices."""

    answer_in_gold: np.ndarray | None = None
    gold_in_answer: np.ndarray | None = None
    chunk_answer: np.ndarray | None = None
    chunk_gold: np.ndarray | None = None
    parts_relevant: np.ndarray | None = None


def verdicts(answer_in_gold: Sequence[bool] | None = None,
             gold_in_answer: Sequence[bool] | None = None,
             chunk_answer: Sequence[Sequence[bool]] | None = None,
             chunk_gold: Sequence[Sequence[bool]] | None = None,
             parts_relevant: Sequence[bool] | None = None, *, answer_claims: int = 0,
             gold_claims: int = 0) -> Verdicts:
    """`Verdicts` from lists (the chunk matrices' widths are the claim counts)."""
    def vec(x: Sequence[bool] | None) -> np.ndarray | None:
        return None if x is None else np.asarray(list(x), dtype=bool)

    def mat(rows: Sequence[Sequence[bool]] | None, width: int) -> np.ndarray | None:
        return None if rows is None else np.array([list(r) for r in rows], dtype=bool).reshape(
            len(rows), width)

    return Verdicts(vec(answer_in_gold), vec(gold_in_answer), mat(chunk_answer, answer_claims),
                    mat(chunk_gold, gold_claims), vec(parts_relevant))


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else 0.0


def claim_scores(v: Verdicts) -> dict[str, float]:
    """Overall claim precision, recall and F1 (NaN where the verdicts are missing)."""
    p = _mean(v.answer_in_gold) if v.answer_in_gold is not None else NAN
    r = _mean(v.gold_in_answer) if v.gold_in_answer is not None else NAN
    f1 = NAN if math.isnan(p) or math.isnan(r) else (2 * p * r / (p + r) if p > 0 and r > 0
                                                      else 0.0)
    return {"claim_precision": p, "claim_recall": r, "claim_f1": f1}


def retriever_scores(v: Verdicts) -> dict[str, float]:
    """The retriever's claim recall and context precision (relevant: entails a gold claim, or
    holds a relevant part)."""
    out = {"retriever_claim_recall": NAN, "rc_context_precision": NAN,
           "rc_context_precision_parts": NAN}
    if v.parts_relevant is not None:
        out["rc_context_precision_parts"] = _mean(v.parts_relevant)
    gold = v.chunk_gold
    if gold is not None:
        out["retriever_claim_recall"] = _mean(gold.max(axis=0)) if gold.size else 0.0
        out["rc_context_precision"] = _mean(gold.max(axis=1)) if gold.size else 0.0
    return out


def generator_scores(v: Verdicts) -> dict[str, float]:
    """Context utilisation, noise sensitivity (both relevance rules), hallucination,
    self-knowledge and faithfulness."""
    keys = ("context_utilization", "noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
            "noise_sensitivity_relevant_parts", "noise_sensitivity_irrelevant_parts",
            "hallucination", "self_knowledge", "rc_faithfulness")
    out = dict.fromkeys(keys, NAN)
    gold, ans = v.chunk_gold, v.chunk_answer
    if gold is not None and v.gold_in_answer is not None:
        recalled = gold.max(axis=0) if gold.size else np.zeros(0, bool)
        used = recalled & v.gold_in_answer if recalled.size else recalled
        out["context_utilization"] = float(used.sum() / recalled.sum()) if recalled.sum() else 0.0
    if ans is None:
        return out
    faithful = ans.max(axis=0) if ans.size else np.zeros(0, bool)
    out["rc_faithfulness"] = _mean(faithful)
    if v.answer_in_gold is None:
        return out
    correct = v.answer_in_gold
    out["hallucination"] = _mean(~faithful & ~correct) if ans.size else 0.0
    out["self_knowledge"] = _mean(~faithful & correct) if ans.size else 0.0
    rules: dict[str, np.ndarray | None] = {"": None, "_parts": v.parts_relevant}
    if gold is not None:
        rules[""] = gold.max(axis=1) if gold.size else np.zeros(0, bool)
    for suffix, relevant in rules.items():
        if relevant is None:
            continue
        rel, irr = (0.0, 0.0) if not ans.size or not relevant.size else _noise(ans, relevant,
                                                                             correct)
        out[f"noise_sensitivity_relevant{suffix}"] = rel
        out[f"noise_sensitivity_irrelevant{suffix}"] = irr
    return out


def _noise(ans: np.ndarray, relevant: np.ndarray, correct: np.ndarray) -> tuple[float, float]:
    """Shares of the answer's claims that are wrong and entailed by a relevant chunk, or by
    irrelevant chunks only (exclusive, as in the reference implementation)."""
    rel = (ans & relevant[:, None]).max(axis=0)
    irr = (ans & ~relevant[:, None]).max(axis=0) & ~rel
    return _mean(rel & ~correct), _mean(irr & ~correct)


def scores(v: Verdicts) -> dict[str, float]:
    """Every RAGChecker metric of one answer."""
    return {**claim_scores(v), **retriever_scores(v), **generator_scores(v)}
