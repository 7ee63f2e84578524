"""The records of calibration.json, typed: `Calibration` (thresholds h and k, their fits, the
estimated vs actual shares, the calibrate stage's sections) and `ThresholdFit` (one fitted
threshold). `ragdash.calibration` fits them (§3.3); `Run.calibration()` reads them back."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ragdash.constants import CLASSES


@dataclass(frozen=True)
class ThresholdFit:
    """One fitted threshold.

    `lo`/`hi` bound the optimal interval that holds `threshold` ([lo, hi) for ">", (lo, hi] for
    "<", closed at a domain bound); for the DE method it is the interval of thresholds that
    classify exactly as the DE value does. `ci` is a bootstrap percentile interval, if computed.
    """

    rule: str
    threshold: float
    lo: float
    hi: float
    accuracy: float
    n: int
    n_positive: int
    method: str = "sweep"
    n_plateaus: int = 1
    ci: tuple[float, float] | None = None
    ci_level: float | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ci"] = None if self.ci is None else [float(v) for v in self.ci]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ThresholdFit:
        d = dict(d)
        d["ci"] = None if d.get("ci") is None else (float(d["ci"][0]), float(d["ci"][1]))
        return cls(**d)


POOLED = "pooled"
VERSION = 1


@dataclass
class Calibration:
    """Fitted thresholds and estimated-vs-actual shares at one budget.

    `fits` maps a scope ("pooled", and each retriever when fitted per retriever) to its
    {"h": ThresholdFit, "k": ThresholdFit}; `h`/`k` are the pooled values. `per_retriever` is the
    `compare()` table (using each retriever's own thresholds when `scope == "per_retriever"`),
    `errors` its `share_errors()` summary, `confusion` 3×3 counts (estimated × actual class) per
    retriever and pooled.
    """

    h: float
    k: float
    method: str
    budget: int
    scope: str
    n: int
    n_excluded: int
    n_missing: int
    fits: dict[str, dict[str, ThresholdFit]]
    per_retriever: pd.DataFrame
    errors: dict
    confusion: dict[str, list[list[int]]]
    h_ge_k: bool = False
    message: str = ""
    evidence: dict | None = None  # `predictiveness()`: does Score_IR predict the judge here?
    shares: dict | None = None  # `share_estimates()`: estimated vs actual share correct
    # what the calibrate stage adds (absent from a bare `calibrate()` result):
    generation_budget: int | None = None  # the run's generation budget
    scores: str | None = None  # the Score_IR matching method h and k apply to
    estimators: dict | None = None  # {"verdict": the estimators cross-validated, in words}
    labels: dict | None = None  # `ragdash.labels.evaluate`: who labelled what,
    agreement: dict | None = None  # the judge against the labels and the reference metrics,
    ppi: dict | None = None  # the share correct with prediction-powered intervals
    share: dict | None = None  # the share correct from the sample (`ragdash.calibration.survey`)

    @property
    def estimator_verdict(self) -> str:
        """The estimators' cross-validation in words ("" when not run)."""
        return str((self.estimators or {}).get("verdict", ""))

    def fits_on(self, method: str) -> bool:
        """Whether h and k were fitted on Score_IR by matching `method` (a run's scoring.method
        when the calibration does not say)."""
        return (self.scores or method) == method

    def thresholds(self, retriever: str | None = None) -> tuple[float, float]:
        """(h, k) used for `retriever` (its own when fitted per retriever, else pooled)."""
        f = self.fits.get(retriever or POOLED, self.fits[POOLED])
        return f["h"].threshold, f["k"].threshold

    def to_dict(self) -> dict:
        """Plain JSON-native dict (the content of calibration.json)."""
        table = self.per_retriever.astype(object).where(self.per_retriever.notna(), None)
        records = [{str(c): _native(v) for c, v in row.items()}
                   for row in table.to_dict(orient="records")]
        return {
            "version": VERSION, "h": float(self.h), "k": float(self.k), "method": self.method,
            "budget": int(self.budget), "scope": self.scope, "n": int(self.n),
            "n_excluded": int(self.n_excluded), "n_missing": int(self.n_missing),
            "h_ge_k": bool(self.h_ge_k), "message": self.message,
            "fits": {s: {r: f.to_dict() for r, f in d.items()} for s, d in self.fits.items()},
            "per_retriever": records,
            "errors": _native(self.errors),
            "confusion": {"labels": list(CLASSES),
                          **{s: [[int(v) for v in row] for row in m]
                             for s, m in self.confusion.items()}},
            "evidence": _native(self.evidence), "shares": _native(self.shares),
            **{name: getattr(self, name) for name in _STAGE_FIELDS
               if getattr(self, name) is not None},
        }

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        conf = {s: m for s, m in d["confusion"].items() if s != "labels"}
        return cls(h=float(d["h"]), k=float(d["k"]), method=d["method"], budget=int(d["budget"]),
                   scope=d["scope"], n=int(d["n"]), n_excluded=int(d["n_excluded"]),
                   n_missing=int(d.get("n_missing", 0)),
                   fits={s: {r: ThresholdFit.from_dict(f) for r, f in v.items()}
                         for s, v in d["fits"].items()},
                   per_retriever=pd.DataFrame(d["per_retriever"]), errors=d["errors"],
                   confusion=conf, h_ge_k=bool(d["h_ge_k"]), message=d.get("message", ""),
                   evidence=d.get("evidence"), shares=d.get("shares"),
                   **{name: d.get(name) for name in _STAGE_FIELDS})


_STAGE_FIELDS = ("generation_budget", "scores", "estimators", "labels", "agreement", "ppi",
                 "share")
"""The sections of calibration.json the calibrate stage (and `ragdash.labels.refresh`) writes
after `calibrate()`'s, in this order."""


def _native(v):
    """Numpy scalars/arrays and NaN to JSON-native values, recursively."""
    if isinstance(v, dict):
        return {str(k): _native(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_native(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


