"""`calibrate()`: fit h and k on a run's tables and gather everything `calibration.json` holds."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ragdash.calibration.estimates import compare, confusion, pairs, share_errors
from ragdash.calibration.predictive import predictiveness, share_estimates
from ragdash.calibration.threshold_fit import ThresholdFit, Tie, bootstrap_ci, fit_threshold
from ragdash.rundir.calibration import POOLED, Calibration

__all__ = ["POOLED", "Calibration", "calibrate"]


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
                                              seed=seed, level=level))
