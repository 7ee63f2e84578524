"""The share of correct answers per system and pooled, four ways (`ragdash.calibration.ppi`),
from one table of a run's answers:

- labels only; the judge only; PPI with the judge's "judged 5";
- PPI with retrieval alone: the logistic Score_IR estimator's probability of judge 5 when a
  judge exists (fitted on the judge's scores, not on the labels: plain prediction-powered
  inference), or, with no judge, the same model fitted on the labels themselves by
  cross-fitting (cross-PPI). LLM-only answers have no retrieval: for that system there is no
  retrieval estimate; pooled, they take one constant prediction (the model's mean over the RAG
  answers), which keeps the interval valid and adds nothing from them.

The table has one row per answer that could be labelled: qid, system, `y` (the label: 1 correct,
0 not, a fraction with several labellers, NaN unlabelled), `judged5` (1/0, NaN without a judge
score), and for RAG answers `p_retrieval` (NaN without a judge) and the ``ir@<budget>`` features.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ragdash.calibration.ppi import (
    LEVEL,
    MIN_LABELS,
    Estimate,
    cross_ppi,
    judge_only,
    labels_only,
    ppi,
    too_few,
)
from ragdash.calibration.survey import MIN_SYSTEM_LABELS
from ragdash.constants import LLM_ONLY

POOLED = "pooled"
N_FOLDS = 5
ESTIMATORS = ("labels_only", "judge_only", "ppi_judge", "ppi_retrieval")
RETRIEVAL = "retrieval (logistic Score_IR model)"


def retrieval_probability(ir_scores: pd.DataFrame, judgments: pd.DataFrame) -> pd.DataFrame:
    """(qid, system, p_retrieval): the logistic estimator's probability that each RAG answer
    is judged 5, from Score_IR alone (fitted on every judged RAG answer)."""
    from ragdash.calibration.model import ProbabilisticEstimator

    est = ProbabilisticEstimator(use_llm_only=False).fit(ir_scores, judgments)
    p = est.predict_proba(ir_scores)
    return p.rename(columns={"retriever": "system", "p_5": "p_retrieval"})[
        ["qid", "system", "p_retrieval"]]


def features(ir_scores: pd.DataFrame) -> pd.DataFrame:
    """(qid, system, ir@<budget>...): the estimator's Score_IR features of every RAG answer."""
    from ragdash.calibration.model import design

    table = design(ir_scores)
    cols = [c for c in table.columns if c.startswith("ir@")]
    return table[["qid", "retriever", *cols]].rename(columns={"retriever": "system"})


def _ir_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("ir@")]


def cross_predictions(frame: pd.DataFrame, n_folds: int = N_FOLDS, seed: int = 0
                      ) -> tuple[np.ndarray, np.ndarray] | str:
    """Cross-fitted retrieval predictions: (P, fold) with P[i, k] the probability of "correct"
    for answer i from the model fitted on the labels outside fold k, and fold[i] the fold of
    labelled answer i (−1 unlabelled); folds hold whole questions. A reason (str) when the
    labels are too few to cross-fit."""
    from ragdash.calibration.model import ProbabilisticEstimator, question_folds

    cols = _ir_columns(frame)
    rag = (frame["system"] != LLM_ONLY).to_numpy() & frame[cols].notna().all(axis=1).to_numpy()
    labelled = frame["y"].notna().to_numpy()
    questions = frame.loc[labelled & rag, "qid"].nunique()
    k = min(n_folds, questions)
    if not cols or k < 2:
        return (f"{questions} labelled question(s) with retrieval: cross-fitting the retrieval "
                "model on the labels needs at least 2")
    fold = np.full(len(frame), -1)
    fold[labelled] = question_folds(frame.loc[labelled, "qid"].astype(str), k, seed)
    y = frame["y"].to_numpy(float)
    p = np.zeros((len(frame), k))
    for f in range(k):
        train = labelled & rag & (fold != f)
        table = frame.loc[train, cols].assign(target=np.where(y[train] >= 0.5, 2, 0))
        try:
            model = ProbabilisticEstimator(use_llm_only=False).fit_table(table)
            p[rag, f] = model.proba_table(frame.loc[rag, cols])[:, 2]
        except ValueError:  # no training label, or one class only: predict its share
            p[rag, f] = float(y[train].mean()) if train.any() else float(np.nanmean(y))
        p[~rag, f] = p[rag, f].mean()
    return p, fold


def _scope(frame: pd.DataFrame, scope: str) -> np.ndarray:
    return np.ones(len(frame), bool) if scope == POOLED else (frame["system"] == scope
                                                              ).to_numpy()


def _ppi_judge(frame: pd.DataFrame, mask: np.ndarray, level: float) -> Estimate:
    judged = mask & frame["judged5"].notna().to_numpy()
    lab = judged & frame["y"].notna().to_numpy()
    if not judged.any():
        return Estimate("PPI++ with the judge", reason="no judge score for these answers")
    return ppi(frame["y"].to_numpy(float)[lab], frame["judged5"].to_numpy(float)[lab],
               frame["judged5"].to_numpy(float)[judged & ~lab], level,
               predictor="the judge's \"judged 5\"")


def _ppi_retrieval(frame: pd.DataFrame, mask: np.ndarray, scope: str, level: float,
                   cross: tuple[np.ndarray, np.ndarray] | str | None) -> Estimate:
    name = "PPI with retrieval alone"
    if scope == LLM_ONLY:
        return Estimate(name, reason="LLM-only answers have no retrieval: use the judge or the "
                                     "labels")
    y = frame["y"].to_numpy(float)
    lab = mask & ~np.isnan(y)
    if "p_retrieval" in frame and frame["p_retrieval"].notna().any():
        p = frame["p_retrieval"].to_numpy(float)
        p = np.where(np.isnan(p), np.nanmean(p), p)  # LLM-only: one constant prediction
        return ppi(y[lab], p[lab], p[mask & ~lab], level,
                   predictor=f"{RETRIEVAL} fitted on the judge's scores")
    if isinstance(cross, str):
        return Estimate(name, n=int(lab.sum()), reason=cross)
    if cross is None:
        return Estimate(name, reason="the run has no Score_IR to predict from")
    p, fold = cross
    if lab.sum() < MIN_LABELS:
        return too_few(int(lab.sum()), f"cross-PPI with {RETRIEVAL} fitted on the labels")
    oof = p[np.flatnonzero(lab), fold[lab]]
    return cross_ppi(y[lab], oof, p[mask & ~lab], level, predictor=RETRIEVAL)


def share_table(frame: pd.DataFrame, level: float = LEVEL, n_folds: int = N_FOLDS,
                seed: int = 0, order: list[str] | None = None) -> dict[str, dict]:
    """{system or "pooled": {labels_only, judge_only, ppi_judge, ppi_retrieval (each pct, ci
    in percent, method, n's, labels_to_halve, reason or note), n_labelled, n_unlabelled}}."""
    has_judge = frame["judged5"].notna().any()
    fitted = "p_retrieval" in frame and frame["p_retrieval"].notna().any()
    cross = None
    if not fitted and _ir_columns(frame):
        cross = cross_predictions(frame, n_folds, seed)
    systems = order or list(dict.fromkeys(frame["system"]))
    out = {}
    for scope in [*systems, POOLED]:
        mask = _scope(frame, scope)
        if not mask.any():
            continue
        y = frame["y"].to_numpy(float)
        lab = mask & ~np.isnan(y)
        judged = mask & frame["judged5"].notna().to_numpy()
        estimates = {
            "labels_only": (labels_only(y[lab], level), int(mask.sum())),
            "judge_only": (judge_only(frame["judged5"].to_numpy(float)[judged], level)
                           if has_judge else Estimate("judge only", reason="the run has no "
                                                      "judge scores"), None),
            "ppi_judge": (_ppi_judge(frame, mask, level) if has_judge else Estimate(
                "PPI++ with the judge", reason="the run has no judge scores"), int(judged.sum())),
            "ppi_retrieval": (_ppi_retrieval(frame, mask, scope, level, cross),
                              int(mask.sum())),
        }
        alone = estimates["labels_only"][0]
        retr = estimates["ppi_retrieval"][0]
        if retr.method.startswith("cross-PPI") and retr.width is not None and \
                alone.width is not None and retr.width > alone.width:
            estimates["ppi_retrieval"] = (Estimate(retr.method, n=retr.n, reason=(
                "wider than the labels alone: not shown")), None)
        few = scope != POOLED and int(lab.sum()) < MIN_SYSTEM_LABELS
        if few:  # the same rule as the share section: no per-system interval below it
            estimates = {k: (Estimate(e.method, e.pct, None, n=e.n, N=e.N,
                                      reason="too few labels for an interval (from "
                                             f"{MIN_SYSTEM_LABELS} on)"), t)
                         if k != "judge_only" and e.ci is not None else (e, t)
                         for k, (e, t) in estimates.items()}
        out[scope] = {name: est.to_dict(total) for name, (est, total) in estimates.items()}
        out[scope].update(n_labelled=int(lab.sum()), n_unlabelled=int((mask & ~lab).sum()))
    return out
