"""The LLM side of a run: judge-score distributions (the paper's Table 3.3, §3.2) and the
budget-sweep pilot, LLM only vs RAG on the same questions, failed calls, latency, tokens and
cost. Judge scores are 1–5; null scores are errors, counted apart and never in the shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.frames import judge_wide, order_systems
from ragdash.constants import LLM_ONLY, SCORES


def _score_counts(scores: pd.Series) -> list[tuple[int, int, float]]:
    """(score, count, share of valid scores) for each score 1–5; nulls left out."""
    valid = scores.dropna().astype(int)
    n = len(valid)
    return [(s, c, c / n if n else float("nan"))
            for s, c in ((s, int((valid == s).sum())) for s in SCORES)]


def sweep_distribution(judgments: pd.DataFrame) -> pd.DataFrame:
    """Judge-score counts per (system, budget) for systems judged at several budgets (the
    paper's Table 3.2 pilot); empty when there is no sweep. Columns: system, budget, score,
    count, share."""
    if judgments is None or "budget" not in judgments.columns:
        return pd.DataFrame(columns=["system", "budget", "score", "count", "share"])
    j = judgments.dropna(subset=["budget"])
    multi = j.groupby("system")["budget"].nunique()
    j = j[j["system"].isin(multi[multi > 1].index)]
    rows = [(sys_, int(b), *c) for (sys_, b), g in j.groupby(["system", "budget"])
            for c in _score_counts(g["score"])]
    return pd.DataFrame(rows, columns=["system", "budget", "score", "count", "share"])


def judge_distribution(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Counts and shares of judge scores 1–5 per system (the paper's Table 3.3).

    Columns: system, score, count, share (of valid scores), n_valid, n_errors. Null scores are
    errors, counted apart and never in the shares.
    """
    j = judgments.drop_duplicates(["qid", "system"], keep="last")
    rows = []
    for sys_ in order_systems(j["system"], order):
        g = j[j["system"] == sys_]
        n, errors = int(g["score"].notna().sum()), int(g["score"].isna().sum())
        rows += [(sys_, *c, n, errors) for c in _score_counts(g["score"])]
    return pd.DataFrame(rows, columns=["system", "score", "count", "share", "n_valid",
                                       "n_errors"])


def table_3_3(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """System × score shares (rows sum to 1 over valid judgments), plus n and errors."""
    d = judge_distribution(judgments, order)
    t = d.pivot(index="system", columns="score", values="share")
    t = t.reindex(d["system"].drop_duplicates())
    t.columns = [str(c) for c in t.columns]
    first = d.drop_duplicates("system").set_index("system")
    t["n"] = first["n_valid"]
    t["errors"] = first["n_errors"]
    return t


def llm_vs_rag(judgments: pd.DataFrame, system: str) -> pd.DataFrame:
    """Crosstab of the LLM-only judge score (rows) against `system`'s (columns), valid pairs."""
    w = judge_wide(judgments)
    if LLM_ONLY not in w.columns or system not in w.columns:
        return pd.DataFrame()
    pair = w[[LLM_ONLY, system]].dropna().astype(int)
    return pd.crosstab(pair[LLM_ONLY], pair[system]).reindex(
        index=SCORES, columns=SCORES, fill_value=0)


def rag_gain(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Per RAG system, on questions judged for both it and LLM-only: share correct (5) with
    retrieval vs without, and how many answers were fixed (LLM-only ≠ 5, RAG = 5) or broken."""
    w = judge_wide(judgments)
    rows = []
    if LLM_ONLY not in w.columns:
        return pd.DataFrame(columns=["system", "n", "rag_correct", "llm_only_correct", "fixed",
                                     "broken"])
    for sys_ in order_systems(w.columns, order):
        if sys_ == LLM_ONLY:
            continue
        p = w[[LLM_ONLY, sys_]].dropna()
        lo, rag = (p[LLM_ONLY] == 5).to_numpy(bool), (p[sys_] == 5).to_numpy(bool)
        rows.append({"system": sys_, "n": len(p), "rag_correct": _share(rag),
                     "llm_only_correct": _share(lo), "fixed": int((rag & ~lo).sum()),
                     "broken": int((~rag & lo).sum())})
    return pd.DataFrame(rows)


def _share(hits: np.ndarray) -> float:
    """The share of True, NaN when there is nothing to count."""
    return float(hits.mean()) if len(hits) else float("nan")


def all_failed(judgments: pd.DataFrame | None) -> str | None:
    """A plain sentence when there are judgments and not one has a score (every judge call
    failed or had nothing to judge): how many and why. None otherwise."""
    if judgments is None or judgments.empty or judgments["score"].notna().any():
        return None
    return (f"All {len(judgments):,} judgments failed ({_causes(judgments)}): no judge-based "
            "figure can be shown.")


def _causes(judgments: pd.DataFrame) -> str:
    """Why judgments have no score, most frequent first: an unreadable reply (the judge
    replied), no answer to judge, or a failed call."""
    from ragdash.llm.judge import NO_ANSWER

    replied = judgments["raw"].notna() if "raw" in judgments.columns else \
        pd.Series(False, index=judgments.index)
    error = judgments["error"].astype("string").fillna("") if "error" in judgments.columns \
        else pd.Series("", index=judgments.index)
    kinds = pd.Series(np.where(replied, "the judge's replies could not be read",
                               np.where(error.str.startswith(NO_ANSWER).to_numpy(bool),
                                        "there was no answer to judge",
                                        "the judge calls failed")), index=judgments.index)
    counts = kinds.value_counts()
    if len(counts) == 1:
        return str(counts.index[0])
    return "; ".join(f"{kind} for {n:,}" for kind, n in counts.items())


def errors_table(answers: pd.DataFrame | None, judgments: pd.DataFrame | None) -> pd.DataFrame:
    """Failed generations and judgments, shown apart: stage, qid, system, error."""
    frames = []
    for stage, df in (("generation", answers), ("judging", judgments)):
        if df is None or df.empty or "error" not in df.columns:
            continue
        bad = df[df["error"].notna() & (df["error"].astype(str) != "")]
        frames.append(pd.DataFrame({"stage": stage, "qid": bad["qid"].astype(str),
                                    "system": bad["system"], "error": bad["error"].astype(str)}))
    if not frames:
        return pd.DataFrame(columns=["stage", "qid", "system", "error"])
    return pd.concat(frames, ignore_index=True)


def usage(answers: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Per system: calls, errors, median and p90 latency (s), mean tokens in/out."""
    rows = []
    for sys_ in order_systems(answers["system"], order):
        g = answers[answers["system"] == sys_]
        lat = g["latency_s"].dropna()
        rows.append({"system": sys_, "calls": len(g),
                     "errors": int(g["error"].notna().sum()) if "error" in g else 0,
                     "latency_median_s": float(lat.median()) if len(lat) else np.nan,
                     "latency_p90_s": float(lat.quantile(0.9)) if len(lat) else np.nan,
                     "tokens_in_mean": float(g["tokens_in"].astype(float).mean()),
                     "tokens_out_mean": float(g["tokens_out"].astype(float).mean())})
    return pd.DataFrame(rows)


def costs(answers: pd.DataFrame | None, judgments: pd.DataFrame | None,
          backends: dict[str, str | None] | None = None) -> pd.DataFrame:
    """Actual calls, tokens, USD and summed latency per stage and model (ragdash.llm.cost).
    `backends`: each stage's backend ("generation", "judging"; `RunView.llm_backends`), so a
    local model outside the price table costs $0, as the Build page's estimate prices it."""
    from ragdash.llm.cost import actual_cost

    frames = []
    for stage, df in (("generation", answers), ("judging", judgments)):
        needed = {"tokens_in", "tokens_out", "latency_s"}
        if df is None or df.empty or not needed <= set(df.columns):
            continue
        frames.append(actual_cost(df, backend=(backends or {}).get(stage)).assign(stage=stage))
    if not frames:
        return pd.DataFrame(columns=["stage", "model", "calls", "tokens_in", "tokens_out", "usd",
                                     "latency_s"])
    out = pd.concat(frames, ignore_index=True)
    return out[["stage", "model", "calls", "tokens_in", "tokens_out", "usd", "latency_s"]]


def llm_seconds(answers: pd.DataFrame | None, judgments: pd.DataFrame | None) -> float:
    """Seconds the run's generation and judge calls took (a judge call scoring several
    answers counted once)."""
    total = 0.0
    if answers is not None and "latency_s" in answers:
        total += float(answers["latency_s"].dropna().sum())
    if judgments is not None and "latency_s" in judgments:
        j = judgments.drop_duplicates("call_id") if "call_id" in judgments else judgments
        total += float(j["latency_s"].dropna().sum())
    return total


def duration(seconds: float) -> str:
    """'1 h 12 min', '14 min', '40 s'."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    h, m = divmod(s // 60, 60)
    return f"{h} h {m} min" if h else f"{m} min"
