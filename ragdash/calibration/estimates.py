"""Pairs (IR score, judge score), the three classes, estimated vs actual shares, confusion
matrices and the calls that estimation from retrieval alone avoids.

Classes (§3.3): 0 = "lacks information" (judge 1, estimated by IR < h),
1 = "risk of hallucination" (judge 2–4, h ≤ IR ≤ k), 2 = "correct" (judge 5, IR > k).
When h > k the bands overlap; a score above k then counts as "correct" first. Shares are in
percent, errors in percentage points (estimated − actual).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ragdash.constants import CLASSES, LLM_ONLY

Thresholds = float | Mapping[str, float]


def _need(df: pd.DataFrame, name: str, cols: tuple[str, ...]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(df.columns)}")


def judgment_table(judgments: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Valid judgments (qid as str, system, integer score 1–5) and the number of null scores
    (errors) dropped. Raises ValueError on scores outside 1–5 or duplicate (qid, system)."""
    _need(judgments, "judgments", ("qid", "system", "score"))
    j = judgments[["qid", "system", "score"]].copy()
    j["qid"] = j["qid"].astype(str)
    null = j["score"].isna()
    j = j[~null]
    bad = ~j["score"].isin([1, 2, 3, 4, 5])
    if bad.any():
        r = j[bad].iloc[0]
        raise ValueError(f"judgments: score must be 1-5 or null; row qid={r['qid']!r} "
                         f"system={r['system']!r} has {r['score']!r}")
    dup = j.duplicated(["qid", "system"], keep=False)
    if dup.any():
        r = j[dup].iloc[0]
        raise ValueError(f"judgments: {int(dup.sum())} rows share a (qid, system), e.g. "
                         f"qid={r['qid']!r} system={r['system']!r}; filter by judge_model first")
    return j.assign(score=j["score"].astype(int)), int(null.sum())


def ir_at(ir_scores: pd.DataFrame, budget: int) -> pd.DataFrame:
    """(qid as str, retriever, ir) at one budget; ValueError naming the available budgets."""
    _need(ir_scores, "ir_scores", ("qid", "retriever", "budget", "score"))
    ir = ir_scores.loc[ir_scores["budget"] == budget, ["qid", "retriever", "score"]]
    if ir.empty:
        have = sorted(int(b) for b in pd.unique(ir_scores["budget"]))
        raise ValueError(f"ir_scores has no rows at budget {budget}; budgets present: {have}")
    return ir.assign(qid=ir["qid"].astype(str)).rename(columns={"score": "ir"})


def pairs(ir_scores: pd.DataFrame, judgments: pd.DataFrame, budget: int = 1000
          ) -> tuple[pd.DataFrame, dict]:
    """Join IR scores at `budget` with judge scores on (qid, retriever == system).

    Returns DataFrame(qid, retriever, ir, judge) and {n_excluded: pairs whose judgment is null
    (an error, never averaged in), n_missing: pairs with no judgment row}. LLM-only judgments
    take no part. Raises ValueError when nothing is left.
    """
    ir = ir_at(ir_scores, budget)
    _need(judgments, "judgments", ("qid", "system", "score"))
    rag = judgments[judgments["system"] != LLM_ONLY]
    j, _ = judgment_table(rag)
    rows = rag[["qid", "system"]].astype({"qid": str}).drop_duplicates()
    rows = rows.rename(columns={"system": "retriever"}).assign(_row=True)
    m = ir.merge(rows, on=["qid", "retriever"], how="left").merge(
        j.rename(columns={"system": "retriever", "score": "judge"}), on=["qid", "retriever"],
        how="left")
    has_row, judged = m["_row"].notna().to_numpy(), m["judge"].notna().to_numpy()
    info = {"n_excluded": int((has_row & ~judged).sum()), "n_missing": int((~has_row).sum())}
    out = m.loc[judged, ["qid", "retriever", "ir", "judge"]].reset_index(drop=True)
    if out.empty:
        raise ValueError(f"no (qid, retriever) pair has both an IR score at budget {budget} and "
                         f"a judge score ({info['n_excluded']} judge errors, "
                         f"{info['n_missing']} pairs without judgment)")
    return out.assign(judge=out["judge"].astype(int)), info


def judge_class(judge) -> np.ndarray:
    """0 for judge 1, 1 for judge 2–4, 2 for judge 5."""
    s = np.asarray(judge)
    return np.where(s == 1, 0, np.where(s == 5, 2, 1))


def rule_class(ir, h: float, k: float) -> np.ndarray:
    """0 for IR < h, 2 for IR > k (first), 1 otherwise (h ≤ IR ≤ k)."""
    x = np.asarray(ir, dtype=float)
    return np.where(x > k, 2, np.where(x < h, 0, 1))


def _per(value: Thresholds, retriever: str) -> float:
    if not isinstance(value, Mapping):
        return float(value)
    if retriever not in value:
        raise ValueError(f"no threshold given for retriever {retriever!r}; have {list(value)}")
    return float(value[retriever])


def _shares(cls: np.ndarray) -> np.ndarray:
    return np.bincount(cls, minlength=3) / max(cls.size, 1) * 100.0


def estimate(ir_scores: pd.DataFrame, h: Thresholds, k: Thresholds, budget: int = 1000
             ) -> pd.DataFrame:
    """Estimated class shares per retriever from retrieval scores alone (no LLM).

    DataFrame(retriever, n, est_1, est_2_4, est_5) in percent; `h`/`k` may be per-retriever
    mappings.
    """
    ir = ir_at(ir_scores, budget)
    rows = []
    for ret, g in ir.groupby("retriever", sort=False):
        s = _shares(rule_class(g["ir"], _per(h, ret), _per(k, ret)))
        rows.append((ret, len(g), *s))
    return pd.DataFrame(rows, columns=["retriever", "n", "est_1", "est_2_4", "est_5"])


def compare(pair_df: pd.DataFrame, h: Thresholds, k: Thresholds) -> pd.DataFrame:
    """Estimated vs actual shares per retriever, from `pairs()` output.

    Columns: retriever, n, h, k, est_1, est_2_4, est_5, act_1, act_2_4, act_5, err_1, err_2_4,
    err_5 (pp, estimated − actual) and mae (mean absolute error over the 3 classes, pp).
    """
    rows = []
    for ret, g in pair_df.groupby("retriever", sort=False):
        hr, kr = _per(h, ret), _per(k, ret)
        est = _shares(rule_class(g["ir"], hr, kr))
        act = _shares(judge_class(g["judge"]))
        err = est - act
        rows.append((ret, len(g), hr, kr, *est, *act, *err, float(np.abs(err).mean())))
    cols = ["retriever", "n", "h", "k"] + [f"{p}_{c}" for p in ("est", "act", "err")
                                           for c in ("1", "2_4", "5")] + ["mae"]
    return pd.DataFrame(rows, columns=cols)


def share_errors(table: pd.DataFrame) -> dict:
    """Haystack-style summary of a `compare()` table: {score: mean MAE (pp),
    individual_scores: {retriever: MAE}, by_class: mean |error| per class, rank_agreement:
    Kendall tau of retrievers ranked by estimated vs actual "correct" share (None if < 2)}."""
    from scipy.stats import kendalltau

    tau = None
    if len(table) >= 2:
        t = kendalltau(table["est_5"], table["act_5"]).statistic
        tau = None if np.isnan(t) else float(t)
    return {"score": float(table["mae"].mean()),
            "individual_scores": {str(r): float(v) for r, v in zip(table["retriever"],
                                                                   table["mae"], strict=True)},
            "by_class": {c: float(table[f"err_{c.replace('-', '_')}"].abs().mean())
                         for c in CLASSES},
            "rank_agreement": tau}


def confusion(pair_df: pd.DataFrame, h: Thresholds, k: Thresholds) -> pd.DataFrame:
    """3×3 counts: rows = estimated class, columns = actual class (labels 1, 2-4, 5)."""
    m = np.zeros((3, 3), dtype=int)
    for ret, g in pair_df.groupby("retriever", sort=False):
        est = rule_class(g["ir"], _per(h, ret), _per(k, ret))
        np.add.at(m, (est, judge_class(g["judge"])), 1)
    return pd.DataFrame(m, index=pd.Index(CLASSES, name="estimated"),
                        columns=pd.Index(CLASSES, name="actual"))


Price = float | Mapping[str, float] | Callable[[str, int], float]


def calls_avoided(n_questions: int, n_retrievers: int, price: Price | None = None) -> dict:
    """LLM calls that estimating from retrieval scores avoids: n_q × (n_r + 1) generations
    (each retriever plus LLM-only) and n_q judge calls (one per question, all candidates).

    `price`: dollars per call (float), per kind ({"generation": .., "judge": ..}) or a
    callable(kind, n_calls) -> dollars; adds `cost` to the result.
    """
    if n_questions < 0 or n_retrievers < 0:
        raise ValueError("n_questions and n_retrievers must be non-negative")
    out = {"generation_calls": int(n_questions * (n_retrievers + 1)),
           "judge_calls": int(n_questions)}
    out["total_calls"] = out["generation_calls"] + out["judge_calls"]
    if price is not None:
        kinds = {"generation": out["generation_calls"], "judge": out["judge_calls"]}
        if callable(price):
            cost = sum(float(price(kind, n)) for kind, n in kinds.items())
        elif isinstance(price, Mapping):
            cost = sum(float(price.get(kind, 0.0)) * n for kind, n in kinds.items())
        else:
            cost = float(price) * out["total_calls"]
        out["cost"] = cost
    return out
