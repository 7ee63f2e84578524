"""How good is the judge? Its agreement with human labels, with the reference metrics (no LLM)
and between labellers, each with a bootstrap interval over questions and its n, and a one-line
verdict made from the numbers.

"Correct" is judge 5 and label `correct` (5). The judge's 1–5 scale is not ordered (4 is
"incorrect", 1 "not enough information"), so the weighted kappa puts both on the labels' scale
first: 5 correct, 2–3 partly correct (3), 1 and 4 wrong (1). A disagreement is *lenient* when the
judge gave 5 to an answer that is not correct, *strict* when it gave less to a correct one.
Accuracy and kappa are fractions in [0, 1] (kappa in [−1, 1]).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ragdash.calibration.predictive import _ci, _resamples
from ragdash.calibration.survey import mean_interval
from ragdash.constants import REFERENCE_METRICS as METRICS

LABEL_ROWS = ("correct", "partly correct", "wrong")
LABEL_SCORE = {"correct": 5, "partly correct": 3, "wrong": 1}
JUDGE_SCORES = (1, 2, 3, 4, 5)
ON_LABEL_SCALE = {1: 1, 2: 3, 3: 3, 4: 1, 5: 5}
"""The judge's score on the labels' ordered scale (1 wrong, 3 partly correct, 5 correct)."""
REFERENCE_METRICS = {name: m.named() for name, m in METRICS.items()}
"""Each reference metric's name with the cut-off from which an answer counts as correct."""
LENIENT_RATIO = 2
"""Disagreements lean one way when that way counts at least twice the other."""


def _weights(k: int, weights: str | None) -> np.ndarray:
    i = np.arange(k)
    if weights is None:
        return (i[:, None] != i[None, :]).astype(float)
    if weights == "quadratic":
        return ((i[:, None] - i[None, :]) ** 2).astype(float)
    raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")


def _kappa_codes(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float | None:
    """Cohen's kappa of two integer-coded ratings (0..k-1) with disagreement weights `w`."""
    k = w.shape[0]
    if x.size == 0:
        return None
    observed = np.bincount(x * k + y, minlength=k * k).reshape(k, k) / x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    chance = float((w * expected).sum())
    return None if chance <= 0 else 1.0 - float((w * observed).sum()) / chance


def kappa(a, b, labels, weights: str | None = None) -> float | None:
    """Cohen's kappa of ratings `a` and `b` over `labels` (in their order, for the weights), as
    scikit-learn's `cohen_kappa_score`; None when undefined (both rate everything alike)."""
    code = {v: i for i, v in enumerate(labels)}
    x = np.array([code[v] for v in a], int)
    y = np.array([code[v] for v in b], int)
    return _kappa_codes(x, y, _weights(len(labels), weights))


def _stat(values: list[float | None], point: float | None, n: int, level: float,
          shares: np.ndarray | None = None) -> dict:
    """The point, its bootstrap interval and n. A bootstrap interval of no width (every
    resample alike: no disagreement, or one class) is no result: for a share (`shares`, its
    value per question) the interval of its mean over questions (`survey.mean_interval`, the
    share intervals' of every page, never of zero width), else none."""
    ci = None if point is None else _ci(values, level)
    if ci is not None and ci[0] == ci[1]:
        ci = None
        if shares is not None and len(shares):
            lo, hi = mean_interval(np.asarray(shares, float)[:, None], (0.0, 1.0), level)
            ci = [min(float(lo[0]), point), max(float(hi[0]), point)]
    return {"value": None if point is None else round(point, 4),
            "ci": None if ci is None else [round(ci[0], 4), round(ci[1], 4)], "n": n}


def binary(judged5: np.ndarray, truth: np.ndarray, qids: np.ndarray, n_boot: int = 200,
           seed: int = 0, level: float = 0.95) -> dict:
    """Agreement of "judged 5" with a yes/no truth: accuracy and Cohen's kappa with bootstrap
    CIs over questions, and the disagreements (lenient: judged 5, not true; strict: true, not
    judged 5)."""
    p, t = np.asarray(judged5, bool), np.asarray(truth, bool)
    boots = _resamples(np.asarray(qids), n_boot, seed) if p.size else []
    x, y, w = t.astype(int), p.astype(int), _weights(2, None)
    acc = float((p == t).mean()) if p.size else None
    return {"n": int(p.size),
            "accuracy": _stat([float((p[b] == t[b]).mean()) for b in boots], acc, p.size,
                              level, pd.Series(p == t, dtype=float).groupby(
                                  np.asarray(qids)).mean().to_numpy() if p.size else None),
            "kappa": _stat([_kappa_codes(x[b], y[b], w) for b in boots], _kappa_codes(x, y, w),
                           p.size, level),
            "disagreements": {"n": int((p != t).sum()), "lenient": int((p & ~t).sum()),
                              "strict": int((~p & t).sum())}}


def judge_vs_labels(table: pd.DataFrame, n_boot: int = 200, seed: int = 0,
                    level: float = 0.95) -> dict:
    """`table`: one row per label (qid, system, label in LABEL_ROWS, judge 1–5). The binary
    agreement on "correct", the 3 × 5 confusion matrix (label × judge score) and the weighted
    kappa on the labels' scale."""
    if table.empty:
        return {"n": 0, "message": "no labelled answer has a judge score"}
    judge = table["judge"].to_numpy(int)
    label = table["label"].map(LABEL_SCORE).to_numpy(int)
    qids = table["qid"].astype(str).to_numpy()
    out = binary(judge == 5, label == 5, qids, n_boot, seed, level)
    counts = pd.crosstab(pd.Categorical(table["label"], LABEL_ROWS),
                         pd.Categorical(judge, JUDGE_SCORES), dropna=False)
    out["confusion"] = {"rows": list(LABEL_ROWS), "columns": list(JUDGE_SCORES),
                        "counts": counts.to_numpy().astype(int).tolist()}
    scale = {1: 0, 3: 1, 5: 2}  # the labels' ordered scale, coded
    x = np.array([scale[v] for v in label], int)
    y = np.array([scale[ON_LABEL_SCALE[v]] for v in judge], int)
    w = _weights(3, "quadratic")
    out["weighted_kappa"] = _stat([_kappa_codes(x[b], y[b], w)
                                   for b in _resamples(qids, n_boot, seed)],
                                  _kappa_codes(x, y, w), len(label), level)
    out["answers"] = int(table[["qid", "system"]].drop_duplicates().shape[0])
    return out


def judge_vs_reference(table: pd.DataFrame, n_boot: int = 200, seed: int = 0,
                       level: float = 0.95) -> dict:
    """`table`: one row per judged answer with a gold answer (qid, judge and the reference
    metrics). Per metric of REFERENCE_METRICS with a value for every answer (a run scored before
    ROUGE-L and similarity lacks them): the binary agreement and a 2 × 5 confusion matrix."""
    out = {}
    for metric, name in REFERENCE_METRICS.items():
        if metric not in table.columns or table[metric].isna().any():
            continue
        qids = table["qid"].astype(str).to_numpy()
        judge = table["judge"].to_numpy(int)
        values = table[metric].astype(float).to_numpy()
        truth = values >= METRICS[metric].correct_at
        stats = binary(judge == 5, truth, qids, n_boot, seed, level)
        rows = pd.crosstab(pd.Categorical(np.where(truth, "yes", "no"), ("yes", "no")),
                           pd.Categorical(judge, JUDGE_SCORES), dropna=False)
        stats["confusion"] = {"rows": ["yes", "no"], "columns": list(JUDGE_SCORES),
                              "counts": rows.to_numpy().astype(int).tolist()}
        out[metric] = {"name": name, **stats}
    return out


def inter_annotator(labels: pd.DataFrame) -> list[dict]:
    """Per pair of labellers who labelled the same answers: n, the share of identical labels
    and Cohen's kappa on the three labels (None when undefined). `labels`: qid, system, label,
    labeller (no "cannot tell")."""
    wide = labels.pivot_table(index=["qid", "system"], columns="labeller", values="label",
                              aggfunc="first")
    out = []
    for a, b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[a, b]].dropna()
        if both.empty:
            continue
        x, y = both[a].to_numpy(str), both[b].to_numpy(str)
        out.append({"labellers": [a, b], "n": int(len(both)),
                    "agreement": round(float((x == y).mean()), 4),
                    "kappa": None if (k := kappa(x, y, labels=list(LABEL_ROWS))) is None
                    else round(k, 4)})
    return out


def _pct(stat: dict) -> str:
    v, ci = stat["value"], stat["ci"]
    return f"{v * 100:.0f} %" + (f" [{ci[0] * 100:.0f}, {ci[1] * 100:.0f}]" if ci else "")


def _kappa_text(stat: dict) -> str:
    return "κ n/a" if stat["value"] is None else f"κ = {stat['value']:.2f}"


def _lean(d: dict, lenient: str, strict: str) -> str:
    n, le, st = d["n"], d["lenient"], d["strict"]
    if n == 0:
        return "no disagreement"
    if le >= LENIENT_RATIO * st:
        return f"it is too lenient: {le} of {n} disagreements are {lenient}"
    if st >= LENIENT_RATIO * le:
        return f"it is too strict: {st} of {n} disagreements are {strict}"
    return (f"its {n} disagreements go both ways ({le} {lenient.removeprefix('answers ')}, "
            f"{st} {strict.removeprefix('answers ')})")


def verdict(agreement: dict, stand_in: str | None = None, long_answers: bool = False) -> str:
    """One line from the numbers: against the labels when there are any (`stand_in` names the
    reference metric they stand in for), else against "contains a gold answer" — unless the
    gold answers are long (`long_answers`): an answer in other words never contains one, so
    the judge would look lenient by construction."""
    lab = agreement.get("labels") or {}
    if lab.get("n"):
        who = (f"the stand-in labels ({stand_in}; not human)" if stand_in else "your labels")
        lean = _lean(lab["disagreements"], "answers judged 5 but labelled wrong or partly "
                     "correct", "answers labelled correct but judged below 5")
        return (f"The judge agrees with {who} on {_pct(lab['accuracy'])} of {lab['n']} labels "
                f"({_kappa_text(lab['kappa'])}); {lean}.")
    ref = (agreement.get("reference") or {}).get("contains")
    if ref and ref["n"] and long_answers:
        return ("No labels yet. The gold answers are long, and an answer in other words never "
                "contains one, so \"contains a gold answer\" cannot check the judge here; label "
                "a sample of answers (ragdash label export).")
    if ref and ref["n"]:
        return ("No labels yet. Against \"contains a gold answer\" (no LLM) the judge agrees on "
                f"{_pct(ref['accuracy'])} of {ref['n']} answers ({_kappa_text(ref['kappa'])}); "
                + _lean(ref["disagreements"], "answers judged 5 that contain no gold answer",
                        "answers containing a gold answer but judged below 5") + ".")
    return ("No labels and no gold answers: nothing checks the judge here; label a sample of "
            "answers (ragdash label export).")
