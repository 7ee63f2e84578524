"""Calibration (§3.3): thresholds h < k on Score_IR that predict the judge outcome, estimates from
retrieval alone, and a probabilistic estimator that goes beyond the paper. This package is the
public API; its modules are `threshold_fit` (the fits), `estimates` (pairs, classes, shares),
`result` (`calibrate`, calibration.json), `model` (the logistic estimator) and `predictive`
(does retrieval predict answer quality here?).

Thresholds (k: IR > k predicts judge 5; h: IR < h predicts judge 1; strict inequalities):
- `fit_threshold(x, y_positive, rule=">", method="sweep")` -> ThresholdFit (interval, midpoint).
- `objective_curve(x, y_positive, rule=">", grid=None)` -> DataFrame(threshold, agreement).
- `agreement_at(x, y_positive, thresholds, rule=">")` -> exact agreement at given thresholds.
- `bootstrap_ci(x, y_positive, groups, rule=">", n_boot=200, seed=0)` -> CI over questions.

Run tables (ir_scores: qid, retriever, budget, score; judgments: qid, system, score):
- `pairs(ir_scores, judgments, budget=1000)` -> (qid, retriever, ir, judge) + error counts.
- `calibrate(ir_scores, judgments, budget=1000, per_retriever=False)` -> Calibration.
- `Calibration.to_dict()` / `Calibration.from_dict(d)`: the content of calibration.json.
- `estimate(ir_scores, h, k, budget=1000)` -> estimated shares per retriever (no LLM needed).
- `compare(pairs_df, h, k)` -> estimated vs actual shares per retriever, errors (pp), MAE.
- `share_errors(compare_table)` -> {score, individual_scores, by_class, rank_agreement}.
- `confusion(pairs_df, h, k)` -> 3×3 counts, estimated class × actual class.
- `calls_avoided(n_questions, n_retrievers, price=None)` -> generation/judge calls avoided.

Beyond the paper (the LLM often knows the answer without the facts, so the h/k rule
under-estimates "correct", §3.3):
- `ProbabilisticEstimator(budgets=None, use_llm_only=True)`: logistic model; .fit, .estimate.
- `cross_validate(ir_scores, judgments, budget=1000, n_folds=5)` -> (table, verdict) vs h/k.

Checked against people (`ragdash.labels` gathers a run's labels and calls these):
- `agreement`: the judge against human labels, the reference metrics and between labellers
  (accuracy, Cohen's kappa, bootstrap CIs, a verdict);
- `ppi`: the share correct from labels only, the judge only, and prediction-powered intervals
  (`ppi_py`: PPI++, cross-PPI); `ppi_shares.share_table` per system and pooled.

`method="sweep"` is exact and deterministic; `method="de"` is the paper's optimiser (seeded
differential evolution, rounded to 2 decimals) for comparison. Tie rule: the lowest optimal
interval. Null judge scores are errors: excluded and counted, never averaged in.
Shares are in percent; classes are "1", "2-4", "5" (`CLASSES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.lazy import exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each module loads on first use
    from ragdash.calibration.estimates import (
        CLASSES,
        calls_avoided,
        compare,
        confusion,
        estimate,
        judge_class,
        pairs,
        rule_class,
        share_errors,
    )
    from ragdash.calibration.model import ProbabilisticEstimator, cross_validate
    from ragdash.calibration.result import Calibration, calibrate
    from ragdash.calibration.threshold_fit import (
        ThresholdFit,
        agreement_at,
        bootstrap_ci,
        fit_threshold,
        objective_curve,
    )

_SOURCES = {
    "ragdash.calibration.estimates": ("CLASSES", "calls_avoided", "compare", "confusion",
                                      "estimate", "judge_class", "pairs", "rule_class",
                                      "share_errors"),
    "ragdash.calibration.model": ("ProbabilisticEstimator", "cross_validate"),
    "ragdash.calibration.result": ("Calibration", "calibrate"),
    "ragdash.calibration.threshold_fit": ("ThresholdFit", "agreement_at", "bootstrap_ci",
                                          "fit_threshold", "objective_curve"),
}
__all__ = [
    "CLASSES",
    "Calibration",
    "ProbabilisticEstimator",
    "ThresholdFit",
    "agreement_at",
    "bootstrap_ci",
    "calibrate",
    "calls_avoided",
    "compare",
    "confusion",
    "cross_validate",
    "estimate",
    "fit_threshold",
    "judge_class",
    "objective_curve",
    "pairs",
    "rule_class",
    "share_errors",
]

__getattr__, __dir__ = exports(__name__, _SOURCES, globals())
