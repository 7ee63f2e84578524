"""Beyond the paper: a probabilistic estimate of the judge-class shares, and cross-validation
against the h/k rule.

The h/k rule under-estimates "correct" by 5–13 points in the paper (§3.3):
the LLM often knows the answer without the facts in its context. Here a multinomial logistic
regression predicts the judge class (1 / 2–4 / 5) of a (question, retriever) pair from Score_IR
at several budgets plus, when present, the LLM-only judgment of the same question (one-hot,
with a "none" column). A retriever's estimated share of a class is its mean predicted
probability.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.calibration.estimates import (
    _need,
    judge_class,
    judgment_table,
    rule_class,
)
from ragdash.calibration.threshold_fit import fit_threshold
from ragdash.constants import CLASSES, LLM_ONLY

LLM_COLS = ("llm_1", "llm_2_4", "llm_5", "llm_none")
HK = "h/k rule"
LOGIT_IR = "logistic (IR)"
LOGIT_LLM = "logistic (IR + LLM-only)"


def one_class_error(what: str) -> ValueError:
    """The error for judged answers that all fall in one judge class (`what` says which):
    nothing to separate, so no model can be fitted (scikit-learn's own message names a numpy
    class index)."""
    return ValueError(f"every judged answer {what}: there is nothing to separate, so no "
                      "predictor can be fitted; judge more answers or check the judge")


def _scores_given(judgments: pd.DataFrame) -> str:
    """'got score 2', or 'got scores 2, 3 (all in judge class 2-4)': the RAG answers' scores."""
    j, _ = judgment_table(judgments[judgments["system"] != LLM_ONLY])
    scores = sorted(int(s) for s in j["score"].unique())
    if len(scores) == 1:
        return f"got score {scores[0]}"
    return (f"got scores {', '.join(map(str, scores))} (all in judge class "
            f"{CLASSES[int(judge_class(scores[0]))]})")


def design(ir_scores: pd.DataFrame, judgments: pd.DataFrame | None = None,
           budgets: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per (qid, retriever): ``ir@<budget>`` columns, the one-hot LLM-only judgment
    (``llm_1, llm_2_4, llm_5, llm_none``) and ``target`` (judge class 0/1/2 of that retriever's
    answer, −1 when there is none or it is an error)."""
    _need(ir_scores, "ir_scores", ("qid", "retriever", "budget", "score"))
    ir = ir_scores[["qid", "retriever", "budget", "score"]].astype({"qid": str})
    have = sorted(int(b) for b in pd.unique(ir["budget"]))
    budgets = have if budgets is None else sorted(int(b) for b in budgets)
    if missing := [b for b in budgets if b not in have]:
        raise ValueError(f"ir_scores has no rows at budget(s) {missing}; budgets present: {have}")
    wide = (ir[ir["budget"].isin(budgets)]
            .pivot_table(index=["qid", "retriever"], columns="budget", values="score",
                         aggfunc="first", sort=False)
            .reindex(columns=budgets).ffill(axis=1).fillna(0.0))
    wide.columns = [f"ir@{b}" for b in budgets]
    out = wide.reset_index()
    llm = pd.Series(dtype=float)
    out["target"] = -1
    if judgments is not None:
        j, _ = judgment_table(judgments)
        lo = j[j["system"] == LLM_ONLY].set_index("qid")["score"]
        llm = pd.Series(judge_class(lo), index=lo.index, dtype=float)
        rag = j[j["system"] != LLM_ONLY].rename(columns={"system": "retriever"})
        score = out[["qid", "retriever"]].merge(rag, on=["qid", "retriever"], how="left")["score"]
        out["target"] = np.where(score.isna(), -1, judge_class(score.fillna(0))).astype(int)
    cls = out["qid"].map(llm).fillna(-1).to_numpy()
    for i, col in enumerate(LLM_COLS):
        out[col] = (cls == (i if i < 3 else -1)).astype(float)
    return out


class ProbabilisticEstimator:
    """Multinomial logistic regression of the judge class on Score_IR (+ LLM-only judgment).

    Fit with LLM-only judgments only if they will also be available when estimating; otherwise
    use ``use_llm_only=False``.
    """

    def __init__(self, budgets: Sequence[int] | None = None, use_llm_only: bool = True,
                 C: float = 1.0):
        self.budgets = budgets
        self.use_llm_only = use_llm_only
        self.C = C
        self.columns_: list[str] = []
        self.model_ = None  # sklearn LogisticRegression once fitted

    def _x(self, table: pd.DataFrame) -> np.ndarray:
        return table[self.columns_].to_numpy(dtype=float)

    def fit_table(self, table: pd.DataFrame) -> ProbabilisticEstimator:
        """Fit on a `design()` table (rows with target −1 are skipped)."""
        from sklearn.linear_model import LogisticRegression  # slow import, only when fitting

        ir_cols = [c for c in table.columns if c.startswith("ir@")]
        self.columns_ = ir_cols + (list(LLM_COLS) if self.use_llm_only else [])
        rows = table[table["target"] >= 0]
        if rows.empty:
            raise ValueError("no judged (qid, retriever) pairs to fit the estimator on")
        if rows["target"].nunique() < 2:
            raise one_class_error(f"it is fitted on is in judge class "
                                  f"{CLASSES[int(rows['target'].iloc[0])]}")
        self.model_ = LogisticRegression(C=self.C, solver="newton-cholesky", max_iter=500).fit(
            self._x(rows), rows["target"].to_numpy())
        return self

    def fit(self, ir_scores: pd.DataFrame, judgments: pd.DataFrame) -> ProbabilisticEstimator:
        return self.fit_table(design(ir_scores, judgments, self.budgets))

    def proba_table(self, table: pd.DataFrame) -> np.ndarray:
        """n × 3 class probabilities (columns 1, 2-4, 5) for a `design()` table."""
        if self.model_ is None:
            raise ValueError("the estimator is not fitted")
        p = np.zeros((len(table), 3))
        p[:, self.model_.classes_] = self.model_.predict_proba(self._x(table))
        return p

    def predict_proba(self, ir_scores: pd.DataFrame, judgments: pd.DataFrame | None = None
                      ) -> pd.DataFrame:
        """DataFrame(qid, retriever, p_1, p_2_4, p_5)."""
        if self.use_llm_only and judgments is None:
            warnings.warn("fitted with LLM-only judgments but none given: every question is "
                          "treated as having none (use_llm_only=False avoids this)", stacklevel=2)
        budgets = [int(c[3:]) for c in self.columns_ if c.startswith("ir@")]
        table = design(ir_scores, judgments, budgets)
        p = self.proba_table(table)
        return table[["qid", "retriever"]].assign(p_1=p[:, 0], p_2_4=p[:, 1], p_5=p[:, 2])

    def estimate(self, ir_scores: pd.DataFrame, judgments: pd.DataFrame | None = None
                 ) -> pd.DataFrame:
        """Estimated shares per retriever in percent: DataFrame(retriever, n, est_1, est_2_4,
        est_5)."""
        p = self.predict_proba(ir_scores, judgments)
        g = p.groupby("retriever", sort=False)
        out = (g[["p_1", "p_2_4", "p_5"]].mean() * 100.0).rename(columns=lambda c: "est" + c[1:])
        return out.assign(n=g.size()).reset_index()[["retriever", "n", "est_1", "est_2_4",
                                                     "est_5"]]


def _errors(test: pd.DataFrame, probs: np.ndarray) -> list[tuple]:
    """(retriever, n, err_1, err_2_4, err_5, mae) of mean probabilities vs actual shares."""
    rows = []
    for ret, idx in test.groupby("retriever", sort=False).indices.items():
        est = probs[idx].mean(axis=0) * 100.0
        act = np.bincount(test["target"].to_numpy()[idx], minlength=3) / idx.size * 100.0
        err = est - act
        rows.append((ret, idx.size, *err, float(np.abs(err).mean())))
    return rows


def question_folds(qids: pd.Series, n_folds: int, seed: int = 0) -> np.ndarray:
    """The fold (0..n_folds-1) of each row, whole questions per fold, seeded."""
    uniq = qids.unique()
    fold_of = dict(zip(np.random.default_rng(seed).permutation(uniq),
                       np.arange(uniq.size) % n_folds, strict=True))
    return qids.map(fold_of).to_numpy()


def cross_validate(ir_scores: pd.DataFrame, judgments: pd.DataFrame, budget: int = 1000,
                   n_folds: int = 5, seed: int = 0, budgets: Sequence[int] | None = None
                   ) -> tuple[pd.DataFrame, str]:
    """Compare the h/k rule with the logistic estimator (IR only, and IR + LLM-only judgment)
    out of sample: (a) K-fold over questions, (b) leave one retriever out; thresholds and models
    are refitted on the training part each time.

    Returns a tidy DataFrame(scheme, fold, method, retriever, n, err_1, err_2_4, err_5, mae) with
    errors in percentage points, and a short verdict.
    """
    budgets = None if budgets is None else sorted(set(budgets) | {budget})
    table = design(ir_scores, judgments, budgets)
    col = f"ir@{budget}"
    if col not in table.columns:
        raise ValueError(f"ir_scores has no rows at budget {budget}")
    table = table[table["target"] >= 0].reset_index(drop=True)
    if table.empty:
        raise ValueError("no judged (qid, retriever) pairs to cross-validate on")
    if table["target"].nunique() < 2:
        raise one_class_error(_scores_given(judgments))
    models = {LOGIT_IR: False}
    if (table["llm_none"] == 0).any():
        models[LOGIT_LLM] = True
    qids = table["qid"].unique()
    if n_folds < 2 or n_folds > qids.size:
        raise ValueError(f"n_folds must be in 2..{qids.size} (number of questions)")
    q_fold = question_folds(table["qid"], n_folds, seed)
    splits = [("held-out questions", str(f), q_fold != f) for f in range(n_folds)]
    rets = table["retriever"].unique()
    if rets.size >= 2:
        splits += [("held-out retriever", str(r), (table["retriever"] != r).to_numpy())
                   for r in rets]
    rows = []
    for scheme, fold, train_mask in splits:
        train, test = table[train_mask], table[~train_mask].reset_index(drop=True)
        h = fit_threshold(train[col], train["target"] == 0, "<").threshold
        k = fit_threshold(train[col], train["target"] == 2, ">").threshold
        onehot = np.eye(3)[rule_class(test[col], h, k)]
        rows += [(scheme, fold, HK, *r) for r in _errors(test, onehot)]
        for name, use_llm in models.items():
            est = ProbabilisticEstimator(use_llm_only=use_llm).fit_table(train)
            rows += [(scheme, fold, name, *r) for r in _errors(test, est.proba_table(test))]
    cols = ["scheme", "fold", "method", "retriever", "n", "err_1", "err_2_4", "err_5", "mae"]
    result = pd.DataFrame(rows, columns=cols)
    return result, verdict(result)


def verdict(result: pd.DataFrame) -> str:
    """One sentence per scheme: the best method's mean MAE against the h/k rule's."""
    lines = []
    for scheme, g in result.groupby("scheme", sort=False):
        mean = g.groupby("method", sort=False)["mae"].mean()
        best = mean.idxmin()
        hk = mean[HK]
        if best == HK:
            other = mean.drop(HK)
            gap = f"{other.min() - hk:.2f} pp better than {other.idxmin()}" if len(other) else ""
            lines.append(f"{scheme}: the h/k rule is best, mean per-retriever MAE {hk:.2f} pp"
                         + (f" ({gap})" if gap else "") + ".")
        else:
            lines.append(f"{scheme}: {best} is best, mean per-retriever MAE {mean[best]:.2f} pp "
                         f"vs {hk:.2f} pp for the h/k rule ({hk - mean[best]:.2f} pp lower).")
    return " ".join(lines)

