"""The run's tables reshaped for display, the helpers the other analysis modules share: system
order, the default budget, Score_IR at one budget, the questions × retrievers matrix, one row per
(question, system) of the LLM tables, per-question and long tables, metadata columns and
per-question dataset statistics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ragdash.constants import LLM_ONLY, PAPER_RETRIEVERS

# --- ordering and budgets ---------------------------------------------------------------------


def order_systems(names: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    """Distinct names: LLM-only first, then `preferred` order, then the paper's, then the rest."""
    names = list(dict.fromkeys(str(n) for n in names))
    order = dict.fromkeys([LLM_ONLY, *preferred, *PAPER_RETRIEVERS])  # the first place wins
    rank = {n: i for i, n in enumerate(order)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def default_budget(budgets: Iterable[int], target: int = 1000) -> int:
    """`target` when present (the paper's N), else the largest budget."""
    budgets = sorted(int(b) for b in budgets)
    if not budgets:
        raise ValueError("no budget: the run has no IR scores")
    return target if target in budgets else budgets[-1]


def at_budget(ir: pd.DataFrame, budget: int) -> pd.DataFrame:
    """(qid, retriever, score) at one budget; qid as str."""
    out = ir.loc[ir["budget"] == budget, ["qid", "retriever", "score"]]
    return out.assign(qid=out["qid"].astype(str)).reset_index(drop=True)


def score_matrix(ir: pd.DataFrame, budget: int) -> pd.DataFrame:
    """Questions × retrievers Score_IR at one budget."""
    return at_budget(ir, budget).pivot(index="qid", columns="retriever", values="score")


# --- answers and judgments --------------------------------------------------------------------


def primary(frame: pd.DataFrame | None, budget: int | None = None) -> pd.DataFrame | None:
    """One row per (qid, system) of an answers or judgments frame.

    A budget sweep (one retriever answered at several N) keeps `budget` (default: the largest
    budget present) and LLM-only rows; with several judge models the most frequent one is kept.
    """
    if frame is None or frame.empty:
        return frame
    df = frame
    if "judge_model" in df.columns and df["judge_model"].nunique(dropna=True) > 1:
        df = df[df["judge_model"] == df["judge_model"].value_counts().idxmax()]
    if "budget" in df.columns and df.duplicated(["qid", "system"]).any():
        have = pd.to_numeric(df["budget"], errors="coerce")
        keep = budget if budget is not None and (have == budget).any() else have.max()
        df = df[have.isna() | (have == keep)]
    return df


def judge_wide(judgments: pd.DataFrame | None) -> pd.DataFrame:
    """qid × system judge scores (NaN for errors or missing)."""
    if judgments is None or judgments.empty:
        return pd.DataFrame()
    j = judgments.assign(qid=judgments["qid"].astype(str))
    j = j.drop_duplicates(["qid", "system"], keep="last")
    return j.pivot(index="qid", columns="system", values="score").astype("Float64")


# --- per-question tables --------------------------------------------------------------------


def per_question(examples: pd.DataFrame, ir: pd.DataFrame, budget: int,
                 judgments: pd.DataFrame | None = None, order: Sequence[str] = ()
                 ) -> pd.DataFrame:
    """One row per question: qid, question, answer, metadata, n_parts, `ir:<retriever>` at
    `budget` and `judge:<system>` columns."""
    meta = [c for c in examples.columns if c not in ("parts",)]
    out = examples[meta].assign(qid=examples["qid"].astype(str),
                                n_parts=examples["parts"].map(len))
    scores = score_matrix(ir, budget)
    scores = scores[order_systems(scores.columns, order)]
    out = out.merge(scores.add_prefix("ir:"), left_on="qid", right_index=True, how="left")
    jw = judge_wide(judgments)
    if not jw.empty:
        jw = jw[order_systems(jw.columns, order)]
        out = out.merge(jw.add_prefix("judge:"), left_on="qid", right_index=True, how="left")
    return out.reset_index(drop=True)


def long_scores(ir: pd.DataFrame, judgments: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every (qid, retriever, budget) Score_IR with the judge score of that retriever's answer."""
    cols = [c for c in ("qid", "retriever", "budget", "score", "context_tokens", "reached")
            if c in ir.columns]
    out = ir[cols].assign(qid=ir["qid"].astype(str))
    if "part_scores" in ir.columns:
        out["part_scores"] = ir["part_scores"].map(lambda v: ";".join(f"{x:.4f}" for x in v))
    if judgments is not None and not judgments.empty:
        j = judgments.assign(qid=judgments["qid"].astype(str)).drop_duplicates(
            ["qid", "system"], keep="last")
        out = out.merge(j[["qid", "system", "score"]].rename(
            columns={"system": "retriever", "score": "judge"}), on=["qid", "retriever"],
            how="left")
    return out


# --- the questions themselves -----------------------------------------------------------------


def metadata_columns(examples: pd.DataFrame, max_levels: int = 12) -> list[str]:
    """Metadata columns fit for grouping (few distinct values), e.g. type and level."""
    skip = {"qid", "question", "answer", "parts"}
    out = []
    for c in examples.columns:
        if c in skip:
            continue
        try:
            n = examples[c].nunique(dropna=True)
        except TypeError:  # lists or dicts
            continue
        if 1 < n <= max_levels:
            out.append(c)
    return out


def example_stats(examples: pd.DataFrame) -> pd.DataFrame:
    """Per question: number of parts, mean/min/max part length (chars), question/answer length."""
    parts = examples["parts"].map(list)
    lengths = parts.map(lambda ps: [len(p) for p in ps] or [0])
    return pd.DataFrame({
        "qid": examples["qid"].astype(str),
        "n_parts": parts.map(len),
        "part_chars_mean": lengths.map(np.mean),
        "part_chars_min": lengths.map(min),
        "part_chars_max": lengths.map(max),
        "question_chars": examples["question"].str.len(),
        "answer_chars": examples["answer"].astype(str).str.len(),
    })
