"""`calibrate()`: fit h and k on a run's tables and gather everything `calibration.json` holds."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ragdash.calibration.estimates import compare, confusion, pairs, share_errors
from ragdash.calibration.predictive import predictiveness, share_estimates
from ragdash.calibration.thresholds import ThresholdFit, Tie, bootstrap_ci, fit_threshold
from ragdash.constants import CLASSES

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


_STAGE_FIELDS = ("generation_budget", "scores", "estimators", "labels", "agreement", "ppi")
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


def _fit_pair(df: pd.DataFrame, method: str, n_boot: int, seed: int, level: float, tie: Tie,
              bounds: tuple[float, float]) -> dict[str, ThresholdFit]:
    x, judge, q = df["ir"].to_numpy(), df["judge"].to_numpy(), df["qid"].to_numpy()
    out = {}
    for name, rule, y in (("h", "<", judge == 1), ("k", ">", judge == 5)):
        f = fit_threshold(x, y, rule, method=method, bounds=bounds, tie=tie, seed=seed)
        if n_boot > 0:
            ci = bootstrap_ci(x, y, q, rule, n_boot=n_boot, seed=seed, level=level,
                              bounds=bounds, tie=tie)
            f = replace(f, ci=(ci["lo"], ci["hi"]), ci_level=float(level))
        out[name] = f
    return out


def calibrate(ir_scores: pd.DataFrame, judgments: pd.DataFrame, budget: int = 1000,
              per_retriever: bool = False, method: str = "sweep", n_boot: int = 200,
              seed: int = 0, level: float = 0.95, tie: Tie = "lowest",
              bounds: tuple[float, float] = (0.0, 1.0)) -> Calibration:
    """Fit h and k (pooled over retrievers as in the paper, plus per retriever on request) at
    `budget`, with bootstrap CIs over questions, and compare estimated with actual shares.

    Null judge scores are errors: excluded and counted (`n_excluded`). h ≥ k is flagged, not
    hidden. `method="de"` reproduces the paper's optimiser (seeded, rounded to 2 decimals);
    bootstrap intervals always come from the exact sweep. `evidence` says how well Score_IR
    separates the judge classes (AUC with CI, reliability, verdict) and `shares` gives the
    estimated vs actual share judged correct for the h/k rule and the logistic estimator.
    """
    df, info = pairs(ir_scores, judgments, budget)
    fits = {POOLED: _fit_pair(df, method, n_boot, seed, level, tie, bounds)}
    if per_retriever:
        for ret, g in df.groupby("retriever", sort=False):
            fits[str(ret)] = _fit_pair(g, method, n_boot, seed, level, tie, bounds)
    rets = [str(r) for r in df["retriever"].unique()]
    if per_retriever:
        h = {r: fits[r]["h"].threshold for r in rets}
        k = {r: fits[r]["k"].threshold for r in rets}
    else:
        h = dict.fromkeys(rets, fits[POOLED]["h"].threshold)
        k = dict.fromkeys(rets, fits[POOLED]["k"].threshold)
    bad = [s for s, f in fits.items() if f["h"].threshold >= f["k"].threshold]
    message = "; ".join(
        f"{s}: h = {fits[s]['h'].threshold:.4g} >= k = {fits[s]['k'].threshold:.4g} (the bands "
        f"overlap or touch; a score above k counts as 'correct' first)"
        for s in bad)
    table = compare(df, h, k)
    conf = {POOLED: confusion(df, h, k).to_numpy().tolist()}
    for ret, g in df.groupby("retriever", sort=False):
        conf[str(ret)] = confusion(g, h, k).to_numpy().tolist()
    return Calibration(h=fits[POOLED]["h"].threshold, k=fits[POOLED]["k"].threshold,
                       method=method, budget=int(budget),
                       scope="per_retriever" if per_retriever else POOLED, n=len(df),
                       n_excluded=info["n_excluded"], n_missing=info["n_missing"], fits=fits,
                       per_retriever=table, errors=share_errors(table), confusion=conf,
                       h_ge_k=bool(bad), message=message,
                       evidence=predictiveness(df, n_boot=n_boot, seed=seed, level=level),
                       shares=share_estimates(df, ir_scores, judgments, fits[POOLED]["h"]
                                              .threshold, fits[POOLED]["k"].threshold, budget,
                                              n_boot=n_boot, seed=seed, level=level))
