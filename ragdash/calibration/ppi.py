"""Prediction-powered estimates of the share of correct answers, with intervals from
`ppi_py` (Angelopoulos et al.'s prediction-powered inference; the estimators are theirs).

The share correct over a run's answers is estimated four ways:

- `labels_only`: the labelled answers alone (the classical interval);
- `judge_only`: the share judged 5 over every judged answer (valid only if the judge is right);
- `ppi`: predictions on every answer (the judge's "judged 5", or the retrieval model's
  probability) rectified by the labelled answers (PPI++, power-tuned: never much worse than
  labels only, whatever the predictor's bias);
- `cross_ppi`: the same when the predictor is fitted on the labels themselves (K folds, each
  answer predicted by a model that never saw its label).

Labels are 1 (correct) or 0, or a fraction when several labellers judged one answer; the
labelled answers must be a random sample of the answers (the stored label sample is). Shares
and intervals are in percent, clipped to [0, 100].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
MIN_LABELS = 2
"""Fewer labels give no interval (a clear message instead)."""
FEW_LABELS = 10
"""Under this many labels an interval is shown with a note: its normal approximation is rough."""


@dataclass(frozen=True)
class Estimate:
    """One estimate of the share correct: `pct` and `ci` in percent (None, with `reason`, when
    there is none); `n` labels and `N` unlabelled answers it rests on; `var_labelled` and
    `var_unlabelled` are the per-answer variances of the two terms of the PPI variance
    (var_labelled / n + var_unlabelled / N), from which `labels_to_halve` is worked out."""

    method: str
    pct: float | None = None
    ci: tuple[float, float] | None = None
    n: int = 0
    N: int = 0
    lam: float | None = None
    var_labelled: float | None = None
    var_unlabelled: float = 0.0
    reason: str = ""
    note: str = ""

    @property
    def width(self) -> float | None:
        return None if self.ci is None else self.ci[1] - self.ci[0]

    def to_dict(self, n_total: int | None = None) -> dict:
        """JSON-native; with `n_total` (the answers that could be labelled), how many more labels
        would about halve the interval (`labels_to_halve`)."""
        out: dict = {"pct": _round(self.pct), "ci": None if self.ci is None else
                     [_round(self.ci[0]), _round(self.ci[1])], "method": self.method,
                     "n_labelled": self.n, "n_unlabelled": self.N}
        if self.lam is not None:
            out["lam"] = round(self.lam, 4)
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        if n_total is not None and self.var_labelled is not None:
            out["labels_to_halve"] = labels_to_halve(self, n_total)
        return out


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 3)


def _alpha(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return 1 - level


def _pct(lo: float, hi: float) -> tuple[float, float]:
    return (max(0.0, float(lo) * 100), min(100.0, float(hi) * 100))


def too_few(n: int, method: str) -> Estimate:
    """No interval from `n` < MIN_LABELS labels, saying so."""
    what = "no answer is labelled" if n == 0 else "only 1 answer is labelled"
    return Estimate(method, n=n, reason=f"{what}: an interval needs at least {MIN_LABELS} "
                    "labelled answers (label more of the sample)")


NO_WIDTH = ("every label is the same, so the interval has no width: it says nothing about "
            "the uncertainty; label more answers")


def _note(y: np.ndarray, ci: tuple[float, float]) -> str:
    """What to beware of in an interval from labels `y`: no width, or few labels."""
    if ci[1] - ci[0] <= 1e-9:
        return NO_WIDTH
    if y.size < FEW_LABELS:
        return (f"under {FEW_LABELS} labels: the normal approximation behind this interval "
                "is rough")
    return ""


def labels_only(y: np.ndarray, level: float = LEVEL) -> Estimate:
    """The share correct among the labelled answers, with the classical (CLT) interval."""
    from ppi_py import classical_mean_ci

    method = "labels only (classical interval)"
    y = np.asarray(y, float)
    if y.size < MIN_LABELS:
        return too_few(y.size, method)
    ci = _pct(*classical_mean_ci(y, alpha=_alpha(level)))
    return Estimate(method, float(y.mean()) * 100, ci, n=y.size, var_labelled=float(y.var()),
                    note=_note(y, ci))


def judge_only(judged_correct: np.ndarray, level: float = LEVEL) -> Estimate:
    """The share judged 5 over every judged answer: its interval covers the judge's own share,
    and the true share only if the judge is right."""
    from ppi_py import classical_mean_ci

    p = np.asarray(judged_correct, float)
    method = "judge only (assumes the judge is right)"
    if p.size < 2:
        return Estimate(method, reason=f"{p.size} judged answer(s): no interval")
    lo, hi = classical_mean_ci(p, alpha=_alpha(level))
    return Estimate(method, float(p.mean()) * 100, _pct(lo, hi), N=p.size)


def _tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray,
                  estimate: float) -> float:
    """The power-tuning λ ppi_py chose, read back from its point estimate (which is
    mean(y) + λ (mean(ŷ unlabelled) − mean(ŷ labelled))); 1 when that gap is ~0."""
    gap = float(yhat_unlabelled.mean() - yhat.mean())
    if abs(gap) < 1e-9:
        return 1.0
    return float(np.clip((estimate - y.mean()) / gap, 0.0, 1.0))


def ppi(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, level: float = LEVEL,
        lam: float | None = None, predictor: str = "predictions") -> Estimate:
    """Prediction-powered estimate (`ppi_py.ppi_mean_ci`): `y` the labels of the labelled
    answers, `yhat` the predictions on them, `yhat_unlabelled` those on the other answers.
    `lam=None` is PPI++ (power-tuned); `lam=1` plain PPI."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    unl = np.asarray(yhat_unlabelled, float)
    method = (f"PPI++ with {predictor} (power-tuned)" if lam is None
              else f"PPI with {predictor} (λ = {lam:g})")
    if y.size < MIN_LABELS:
        return too_few(y.size, method)
    if unl.size == 0:
        alone = labels_only(y, level)
        return Estimate(method, alone.pct, alone.ci, n=y.size, var_labelled=alone.var_labelled,
                        note="every answer is labelled: the labels alone give the share")
    alpha = _alpha(level)
    point = float(np.ravel(ppi_mean_pointestimate(y, yhat, unl, lam=lam))[0])
    lo, hi = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, yhat, unl, alpha=alpha, lam=lam))
    tuned = _tuned_lambda(y, yhat, unl, point) if lam is None else float(lam)
    ci = _pct(lo, hi)
    return Estimate(method, point * 100, ci, n=y.size, N=unl.size, lam=tuned,
                    var_labelled=float((y - tuned * yhat).var()),
                    var_unlabelled=float((tuned * unl).var()), note=_note(y, ci))


def cross_ppi(y: np.ndarray, yhat_out_of_fold: np.ndarray, yhat_unlabelled: np.ndarray,
              level: float = LEVEL, predictor: str = "predictions") -> Estimate:
    """Cross-prediction-powered estimate (`ppi_py.crossppi_mean_ci`) for a predictor fitted on
    the labels: `yhat_out_of_fold[i]` comes from the model that did not see label i;
    `yhat_unlabelled` is N × K (each fold's model on the unlabelled answers)."""
    from ppi_py import crossppi_mean_ci, crossppi_mean_pointestimate

    y, yhat = np.asarray(y, float), np.asarray(yhat_out_of_fold, float)
    unl = np.asarray(yhat_unlabelled, float)
    k = unl.shape[1] if unl.ndim == 2 else 0
    method = f"cross-PPI with {predictor} fitted on the labels ({k} folds)"
    if y.size < MIN_LABELS:
        return too_few(y.size, method)
    if unl.shape[0] == 0:
        alone = labels_only(y, level)
        return Estimate(method, alone.pct, alone.ci, n=y.size, var_labelled=alone.var_labelled,
                        note="every answer is labelled: the labels alone give the share")
    point = float(np.ravel(crossppi_mean_pointestimate(y, yhat, unl))[0])
    lo, hi = (float(np.ravel(v)[0]) for v in crossppi_mean_ci(y, yhat, unl,
                                                              alpha=_alpha(level)))
    ci = _pct(lo, hi)
    return Estimate(method, point * 100, ci, n=y.size, N=unl.shape[0], lam=1.0,
                    var_labelled=float((yhat - y).var()),
                    var_unlabelled=float(unl.mean(axis=1).var()), note=_note(y, ci))


def labels_to_halve(est: Estimate, n_total: int) -> dict:
    """About how many more labels would halve the interval's width, from the PPI variance
    var_labelled / n + var_unlabelled / N (N = the answers left unlabelled, which shrinks as
    labels are added; λ kept as it is): {"more", "total"}, or {"more": None, "reason"}."""
    if est.var_labelled is None or est.n < MIN_LABELS:
        return {"more": None, "reason": "no interval yet"}
    n, va, vu = est.n, est.var_labelled, est.var_unlabelled
    now = va / n + (vu / est.N if est.N else 0.0)
    if now <= 0:
        return {"more": None, "reason": "the interval has no width yet (every label the "
                                        "same): label more answers first"}
    m = np.arange(n + 1, n_total)
    ok = np.flatnonzero(va / m + vu / (n_total - m) <= now / 4)
    if ok.size:
        return {"more": int(m[ok[0]] - n), "total": int(m[ok[0]])}
    return {"more": None, "reason": f"labelling fewer than (nearly) all {n_total:,} answers "
                                    "would not halve it"}
