"""What the controlled contexts say (Chen et al., AAAI 2024): accuracy against the noise ratio
(noise robustness) and against where the evidence stands, the rejection rate when the context
holds no evidence (negative rejection), and accuracy against the contexts' Score_IR beside the
run's own answers at the same Score_IR (the causal curve beside the observed one)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from ragdash.calibration.predictive import wilson
from ragdash.stress.contexts import ALL_PARTS, INTEGRATION, NOISE, ONE_PART, POSITION

BINS = np.linspace(0.0, 1.0, 6)
"""Score_IR bins of the dose-response curve: fifths of [0, 1], each closed on the right (the
first also at 0)."""
LEVEL = 0.95
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)


@dataclass(frozen=True)
class Summary:
    """`by_ratio` and `by_position`: per level, answered contexts (`n`), `accuracy` (share
    containing a gold answer) with its Wilson interval (`lo`, `hi`) and the share refused;
    `rejection`: the share refused with no evidence at all (ratio 1), its interval, and how
    many; `curve`: accuracy per Score_IR bin of the controlled contexts; `by_parts`: with one
    part's evidence and with every part's (questions whose parts lie in different chunks)."""

    by_ratio: pd.DataFrame
    by_position: pd.DataFrame
    by_parts: pd.DataFrame
    rejection: float | None
    rejection_ci: tuple[float, float] | None
    rejection_n: int
    curve: pd.DataFrame


def rates(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """Accuracy (Wilson interval), the share refused and the contexts' mean Score_IR per value
    of `key`, over the answered contexts (a failed call is left out)."""
    done = table[table["error"].isna() & table["correct"].notna()]
    rows = []
    for value, g in done.groupby(key, sort=True):
        n, k = len(g), int(g["correct"].astype(bool).sum())
        lo, hi = wilson(k, n, Z)
        rows.append({key: value, "n": n, "accuracy": k / n, "lo": float(lo), "hi": float(hi),
                     "refused": float(g["refused"].astype(bool).mean()),
                     "score_ir": float(g["score_ir"].mean()) if "score_ir" in g else np.nan})
    return pd.DataFrame(rows, columns=[key, "n", "accuracy", "lo", "hi", "refused", "score_ir"]
                        ).set_index(key)


def by_score(table: pd.DataFrame, score: str = "score_ir") -> pd.DataFrame:
    """Accuracy per Score_IR bin (`BINS`): bin, its middle, n, accuracy and Wilson interval."""
    done = table[table["correct"].notna()]
    i = np.digitize(done[score].clip(0, 1).to_numpy(float), BINS[1:-1], right=True)
    return rates(done.assign(mid=np.round((BINS[i] + BINS[i + 1]) / 2, 3)), "mid").reset_index()


def summary(table: pd.DataFrame) -> Summary:
    """The stress stage's table (`ragdash.stages.stress.COLUMNS`) summarised."""
    noise = table[table["test"] == NOISE]
    by_ratio = rates(noise, "ratio")
    by_position = rates(table[table["test"] == POSITION], "position")
    by_position = by_position.reindex([p for p in ("first", "middle", "last")
                                       if p in by_position.index])
    by_parts = rates(table[table["test"] == INTEGRATION], "position")
    by_parts = by_parts.reindex([p for p in (ONE_PART, ALL_PARTS) if p in by_parts.index])
    none = noise[(noise["relevant"] == 0) & noise["refused"].notna()]
    rejection, ci = None, None
    if len(none):
        k = int(none["refused"].astype(bool).sum())
        rejection = k / len(none)
        lo, hi = wilson(k, len(none), Z)
        ci = (float(lo), float(hi))
    return Summary(by_ratio, by_position, by_parts, rejection, ci, len(none), by_score(table))


def observed_curve(ir_at_budget: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """The run's own answers by their context's Score_IR at the generation budget: accuracy
    (contains a gold answer) per bin, as `by_score` gives for the controlled contexts.
    `ir_at_budget`: qid, retriever, score; `reference`: qid, system, contains."""
    joined = ir_at_budget.rename(columns={"retriever": "system", "score": "score_ir"}).merge(
        reference[["qid", "system", "contains"]], on=["qid", "system"])
    joined = joined.assign(correct=joined["contains"].astype("boolean"), refused=False,
                           error=None).dropna(subset=["correct"])
    return by_score(joined)
