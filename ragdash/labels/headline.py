"""The share correct in a few sentences, generated from the ppi section's numbers (the
Overview's and the report's headline when a run has labels)."""

from __future__ import annotations

PREFERRED = ("ppi_judge", "ppi_retrieval", "labels_only")
"""The headline estimator, first with an interval: PPI with the judge, then with retrieval,
then the labels alone."""
HOW = {"ppi_judge": "with the judge's scores (PPI)",
       "ppi_retrieval": "with retrieval's predictions (PPI)",
       "labels_only": "alone"}


def best(entry: dict) -> str | None:
    """The key of the headline estimator of one system's (or pooled) ppi entry."""
    return next((k for k in PREFERRED if (entry.get(k) or {}).get("ci")), None)


def _half(e: dict) -> float:
    return (e["ci"][1] - e["ci"][0]) / 2


def sentences(ppi: dict, level: float = 0.95) -> list[str]:
    """Markdown sentences on the pooled share correct: the estimate and what it rests on, how
    far the judge alone is from it, and what retrieval alone would give. [] without an
    interval (too few labels)."""
    pooled = ppi.get("pooled") or {}
    key = best(pooled)
    if key is None:
        return []
    e = pooled[key]
    n_all = pooled.get("n_labelled", 0) + pooled.get("n_unlabelled", 0)
    out = [f"**About {e['pct']:.0f} % of answers are correct** ({level:.0%} interval "
           f"{e['ci'][0]:.0f}–{e['ci'][1]:.0f} %), from {pooled.get('n_labelled', 0)} labels "
           f"{HOW[key]} on {n_all:,} answers."]
    judge = pooled.get("judge_only") or {}
    if judge.get("pct") is not None:
        gap = judge["pct"] - e["pct"]
        inside = e["ci"][0] <= judge["pct"] <= e["ci"][1]
        lean = "too lenient" if gap > 0 else "too strict"
        out.append(f"The judge alone says {judge['pct']:.0f} %: "
                   + (f"{abs(gap):.0f} points {'above' if gap > 0 else 'below'}"
                      if round(abs(gap)) >= 1 else "the same")
                   + (", within the interval." if inside else
                      f", outside the interval: the judge is {lean} here."))
    retr = pooled.get("ppi_retrieval") or {}
    if key != "ppi_retrieval" and retr.get("ci"):
        ratio = _half(retr) / max(_half(e), 1e-9)
        verdict = ("about as precise" if ratio <= 1.15 else
                   "less precise: the judge adds information")
        out.append(f"Retrieval alone (Score_IR) would give {retr['pct']:.0f} % "
                   f"({retr['ci'][0]:.0f}–{retr['ci'][1]:.0f} %, ±{_half(retr):.0f} points "
                   f"against ±{_half(e):.0f}): {verdict}.")
    return out
