"""Does retrieval predict answer quality here? The evidence beside every estimate.

The paper's thresholds assume that answers whose retrieved context holds more of the relevant
parts are judged better. This module measures that assumption on a run's (qid, retriever, ir,
judge) pairs instead of taking it for granted:

- the ROC curve and AUC of Score_IR@N for "judge = 5", with a bootstrap CI over questions;
- the same for "judge = 1" against *low* Score_IR (the h side);
- the share judged 5 (and 1) per Score_IR bin, with counts (a reliability diagram);
- a one-line verdict in words;
- estimated vs actual shares judged correct, with bootstrap CIs, for the h/k rule and for the
  logistic estimator (out-of-fold over questions, so it never scores its own training rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ragdash.calibration.survey import mean_interval
from ragdash.constants import LLM_ONLY

if TYPE_CHECKING:
    from ragdash.rundir.calibration import Calibration

BINS: tuple[tuple[str, float, float], ...] = (
    ("0", 0.0, 0.0), ("0–0.25", 0.0, 0.25), ("0.25–0.5", 0.25, 0.5),
    ("0.5–0.75", 0.5, 0.75), ("0.75–<1", 0.75, 1.0), ("1", 1.0, 1.0))
"""Score_IR bins: exactly 0, four open-closed quarter bins (the last stops short of 1), exactly
1 — Score_IR piles up at 0 and 1, so those get bins of their own."""
STRONG, MODERATE = 0.75, 0.6


def auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Area under the ROC curve (Mann–Whitney, ties count half); None with one class only."""
    pos = np.asarray(positive, bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _resamples(groups: np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    """Row indices of `n_boot` bootstrap samples that draw whole questions with replacement."""
    codes, uniq = pd.factorize(groups)
    members = [np.flatnonzero(codes == i) for i in range(len(uniq))]
    rng = np.random.default_rng(seed)
    return [np.concatenate([members[i] for i in rng.integers(0, len(uniq), len(uniq))])
            for _ in range(n_boot)]


def _ci(values: list[float], level: float) -> list[float] | None:
    vals = [v for v in values if v is not None and np.isfinite(v)]
    if len(vals) < 10:
        return None
    a = (1 - level) / 2
    return [float(np.quantile(vals, a)), float(np.quantile(vals, 1 - a))]


def roc_points(scores: np.ndarray, positive: np.ndarray) -> dict[str, list[float]]:
    """The ROC curve (false and true positive rates, one point per distinct threshold)."""
    from sklearn.metrics import roc_curve

    fpr, tpr, thr = roc_curve(np.asarray(positive, bool), scores)
    return {"fpr": fpr.round(4).tolist(), "tpr": tpr.round(4).tolist(),
            "threshold": [None if not np.isfinite(t) else round(float(t), 4) for t in thr]}


def reliability(ir: np.ndarray, positive: np.ndarray) -> list[dict]:
    """Share of positives per Score_IR bin (`BINS`) with its count and a Wilson 95 % interval."""
    rows = []
    for name, lo, hi in BINS:
        if lo == hi:
            mask = ir == lo
        elif hi == 1.0:
            mask = (ir > lo) & (ir < hi)
        else:
            mask = (ir > lo) & (ir <= hi)
        n, k = int(mask.sum()), int(positive[mask].sum())
        share, ci = (k / n, wilson(k, n)) if n else (None, None)
        rows.append({"bin": name, "lo": lo, "hi": hi, "n": n, "positives": k, "share": share,
                     "ci": ci})
    return rows


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    """The Wilson score interval of k successes in n trials (95 % at z = 1.96); n > 0."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [float(max(0.0, centre - half)), float(min(1.0, centre + half))]


def _side(ir: np.ndarray, positive: np.ndarray, boots: list[np.ndarray], level: float,
          higher_is_positive: bool) -> dict:
    signed = ir if higher_is_positive else -ir
    same = ir.size > 0 and bool(np.all(ir == ir[0]))  # nothing to rank: no AUC, not 0.5
    value = None if same else auc(signed, positive)
    out = {"auc": value, "ci": None, "n_positive": int(positive.sum()),
           "n_negative": int((~positive).sum()), "roc": None,
           "reliability": reliability(ir, positive)}
    if same:
        out["same_score"] = float(ir[0])
    if value is not None:
        out["ci"] = _ci([auc(signed[b], positive[b]) for b in boots], level)
        out["roc"] = roc_points(signed, positive)
    return out


def strength(auc_value: float | None, ci: list[float] | None) -> str:
    """'strong', 'moderate', 'weak' or 'n/a' (no AUC): strong and moderate need the CI's lower
    end above 0.5 (chance) and the AUC at least 0.75 or 0.6."""
    if auc_value is None:
        return "n/a"
    above_chance = ci is not None and ci[0] > 0.5
    if above_chance and auc_value >= STRONG:
        return "strong"
    if above_chance and auc_value >= MODERATE:
        return "moderate"
    return "weak"


def _fmt(a: float, ci: list[float] | None) -> str:
    return f"AUC {a:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def verdict_text(level: str, side: dict) -> str:
    """The one-line verdict in words for the judge = 5 side."""
    if level == "n/a" and side.get("same_score") is not None and side["n_positive"] and \
            side["n_negative"]:
        return (f"Not measurable: every answer has the same Score_IR "
                f"({side['same_score']:.2f}), so retrieval cannot separate correct from wrong "
                "answers here.")
    if level == "n/a":
        what = "no answer" if side["n_positive"] == 0 else "every answer"
        return (f"Not measurable: {what} was judged correct (5), so nothing separates correct "
                "from wrong answers here.")
    a = _fmt(side["auc"], side["ci"])
    return {
        "strong": f"Strong: {a}. Answers whose retrieved context holds the evidence are judged "
                  "correct far more often.",
        "moderate": f"Moderate: {a}. More evidence in the context goes with more correct "
                    "answers, with much overlap.",
        "weak": f"Weak: {a}. Retrieval barely separates correct from wrong answers here, so "
                "estimates from retrieval alone are unreliable.",
    }[level]


def predictiveness(pairs_df: pd.DataFrame, n_boot: int = 200, seed: int = 0,
                   level: float = 0.95) -> dict:
    """How well Score_IR separates judge = 5 (high IR) and judge = 1 (low IR) on `pairs_df`
    (qid, retriever, ir, judge; `ragdash.calibration.pairs`). JSON-native dict: `correct` and
    `refusal` sides (auc, ci, counts, roc, reliability), `strength` and `verdict`."""
    df = pairs_df.dropna(subset=["ir", "judge"])
    ir = df["ir"].to_numpy(float)
    judge = df["judge"].to_numpy(int)
    boots = _resamples(df["qid"].astype(str).to_numpy(), n_boot, seed) if len(df) else []
    correct = _side(ir, judge == 5, boots, level, True)
    refusal = _side(ir, judge == 1, boots, level, False)
    level_ = strength(correct["auc"], correct["ci"])
    out = {"n": int(len(df)), "questions": int(df["qid"].nunique()), "n_boot": n_boot,
           "level": level, "correct": correct, "refusal": refusal, "strength": level_,
           "verdict": verdict_text(level_, correct)}
    if refusal["auc"] is not None:
        out["refusal_verdict"] = (f"Judged 1 (lacks information) vs low Score_IR: "
                                  f"{_fmt(refusal['auc'], refusal['ci'])}.")
    elif refusal.get("same_score") is not None and refusal["n_positive"] and \
            refusal["n_negative"]:
        out["refusal_verdict"] = ("Judged 1 (lacks information) vs low Score_IR: not "
                                  "measurable, every answer has the same Score_IR "
                                  f"({refusal['same_score']:.2f}).")
    else:
        out["refusal_verdict"] = ("Judged 1 (lacks information): "
                                  + ("no answer" if refusal["n_positive"] == 0
                                     else "every answer") + " is in this class, so h cannot "
                                  "be checked.")
    return out


def share_estimates(pairs_df: pd.DataFrame, ir_scores: pd.DataFrame, judgments: pd.DataFrame,
                    h: float, k: float, budget: int, seed: int = 0, level: float = 0.95,
                    n_folds: int = 5) -> dict:
    """Estimated vs actual share judged correct (5) over all RAG answers, in percent, with 95 %
    CIs over questions (`survey.mean_interval` of the per-question shares: never of zero width,
    even where every answer is judged 5): the h/k rule (IR > k at the fitted k) and the
    logistic estimator (mean out-of-fold probability of class 5; folds over questions)."""
    from ragdash.calibration.model import ProbabilisticEstimator, design, question_folds

    df = pairs_df.dropna(subset=["ir", "judge"]).reset_index(drop=True)
    q = df["qid"].astype(str).to_numpy()
    actual = (df["judge"].to_numpy(int) == 5).astype(float)
    rule = (df["ir"].to_numpy(float) > k).astype(float)
    methods = {"h/k rule": rule}
    table = design(ir_scores, judgments)
    table = table[table["target"] >= 0].reset_index(drop=True)
    if table["qid"].nunique() >= n_folds and table["target"].nunique() >= 2:
        fold = question_folds(table["qid"], n_folds, seed)
        p5 = np.full(len(table), np.nan)
        for f in range(n_folds):
            train = table[fold != f]
            if train["target"].nunique() < 2:
                continue
            est = ProbabilisticEstimator(use_llm_only=False).fit_table(train)
            p5[fold == f] = est.proba_table(table[fold == f])[:, 2]
        key = pd.Series(p5, index=pd.MultiIndex.from_frame(table[["qid", "retriever"]]))
        aligned = key.reindex(pd.MultiIndex.from_arrays([q, df["retriever"].astype(str)]))
        if aligned.notna().all():
            methods["logistic estimator"] = aligned.to_numpy(float)

    def summary(values: np.ndarray) -> dict:
        per_question = pd.Series(values).groupby(q).mean().to_numpy(float)
        lo, hi = mean_interval(per_question[:, None], (0.0, 1.0), level)
        pct = float(values.mean() * 100)
        return {"pct": pct, "ci": [min(float(lo[0]) * 100, pct), max(float(hi[0]) * 100, pct)]
                if len(per_question) else None}

    return {"budget": int(budget), "h": float(h), "k": float(k), "n": int(len(df)),
            "actual": summary(actual),
            "estimates": {name: summary(v) for name, v in methods.items()}}


SAME_CLASS = "no threshold on Score_IR beats predicting the same class for every answer"


def no_estimate_at(ir: np.ndarray, judge: np.ndarray, k: float) -> str | None:
    """Why the h/k rule at `k` gives no estimate on judged answers (Score_IR `ir`, judge
    scores `judge`): one judge class only, k at 0 or 1, or every answer on one side of k; None
    when it gives one. `degenerate` says the same of a stored fit."""
    ir, five = np.asarray(ir, float), np.asarray(judge) == 5
    if not ir.size:
        return None
    if five.all() or not five.any():
        return verdict_text("n/a", {"n_positive": int(five.sum())})
    if k <= 0.0 or k >= 1.0:
        return f"k = {k:.3f} sits at the end of its range: {SAME_CLASS}"
    above = ir > k
    if above.all() or not above.any():
        where = "above" if above.all() else "at or below"
        return f"k = {k:.3f} puts every judged answer {where} it: {SAME_CLASS}"
    return None


def degenerate(calibration: Calibration) -> str | None:
    """Why a calibration's k carries no estimate (k at 0 or 1, every judged answer on one side
    of k, or an empty class), or None."""
    ev = calibration.evidence or {}
    side = ev.get("correct") or {}
    if side and (side.get("n_positive") == 0 or side.get("n_negative") == 0):
        return ev.get("verdict") or "every answer has the same judge class"
    k = float(calibration.k)
    same = SAME_CLASS
    if k <= 0.0 or k >= 1.0:
        return f"the fitted k = {k:.3f} sits at the end of its range: {same}"
    est = calibration.per_retriever.get("est_5")  # % above k per retriever, at the fitted k
    if est is not None and len(est) and (np.allclose(est, 0) or np.allclose(est, 100)):
        where = "above" if np.allclose(est, 100) else "at or below"
        return f"the fitted k = {k:.3f} puts every judged answer {where} it: {same}"
    return None


EVIDENCE_BANDS = (("evidence in C_N (Score_IR ≥ 0.9)", 0.9, 1.01),
                  ("partly (0.3 ≤ Score_IR < 0.9)", 0.3, 0.9),
                  ("evidence missing (Score_IR < 0.3)", -0.01, 0.3))


def abstention_by_evidence(answers: pd.DataFrame, ir_scores: pd.DataFrame, budget: int,
                           matches) -> pd.DataFrame:
    """Share of RAG answers that abstain (refuse), by how much of the evidence their context
    held at `budget`. `matches(answer) -> bool` says what abstains (e.g. the refusal rule).
    Columns: band, answers, abstained, share."""
    rag = answers[answers["system"] != LLM_ONLY].dropna(subset=["answer"])
    rag = rag[rag["budget"].astype("Int64") == int(budget)] if "budget" in rag else rag
    at = ir_scores[ir_scores["budget"] == int(budget)][["qid", "retriever", "score"]]
    df = rag.astype({"qid": str}).merge(at.astype({"qid": str}),
                                        left_on=["qid", "system"],
                                        right_on=["qid", "retriever"], how="inner")
    refused = np.array([bool(matches(a)) for a in df["answer"]], bool)
    rows = []
    for band, lo, hi in EVIDENCE_BANDS:
        m = ((df["score"] >= lo) & (df["score"] < hi)).to_numpy()
        n, k = int(m.sum()), int(refused[m].sum())
        rows.append((band, n, k, k / n if n else float("nan")))
    return pd.DataFrame(rows, columns=["band", "answers", "abstained", "share"])
