"""The order in which a rule draws a run's answers to label; a sample of n is the first n, so a
larger sample extends a smaller one and stays a sample by the same rule.

- `judge` (the default): stratified by system × the judge's verdict (judged 5 or not), with
  proportional allocation: every prefix holds each stratum in proportion to its size (to within
  an answer or two), in a random order within it. The verdict is known before any label, so
  the labels go where the judge is unsure of nothing and everything alike, and the stratified
  estimate (`ragdash.calibration.survey`) is narrower than a uniform sample's for the same
  labels.
- `neyman`: the same strata, allocated in proportion to N_h × S_h, S_h the spread of the run's
  reference metric "contains a gold answer" in the stratum (known before any label; floored at
  0.15 so no stratum is starved); proportional when the run has no reference metric. Neyman's
  allocation is the narrowest only when S_h is the labels' own spread: with the reference's
  spread standing in, it was never narrower than proportional on the SQuAD demo's "these
  answers" (benchmarks/bench_ppi_coverage.py), so `judge` stays the default. Any allocation
  keeps the stratified estimate unbiased: it weights each stratum by its size, not by its
  labels.
- `uniform`: every answer equally likely, in a random order.
- `stratified` (by system): equal counts per system, round-robin; for comparing systems, each
  with the same number of labels (the estimate weights each system by its size).

Seeds go through numpy's generator only, so a seed draws the same sample on any machine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RULES = ("judge", "neyman", "uniform", "stratified")
DEFAULT_RULE = "judge"
RULE_NAMES = {"judge": "by system × judge's verdict (proportional)",
              "neyman": "by system × judge's verdict (Neyman, by the reference's spread)",
              "uniform": "uniform at random", "stratified": "equal per system"}


MIN_SPREAD = 0.15
"""The smallest stratum spread the Neyman rule assumes (a stratum the reference finds all alike
still gets labels: the reference is not the truth)."""


def _interleaved(groups: pd.Series, rng: np.random.Generator, proportional: bool,
                 spread: pd.Series | None = None) -> np.ndarray:
    """Positions ordering the rows: within each group a random order; across groups, the j-th
    row of a group of size G at key (j + u) / (G × spread) (proportional; spread 1 unless given)
    or j + u (equal counts), with u one uniform offset per group."""
    key = np.empty(len(groups))
    codes, names = pd.factorize(groups, sort=True)
    for g, name in enumerate(names):
        at = np.flatnonzero(codes == g)
        rank = np.empty(at.size)
        rank[rng.permutation(at.size)] = np.arange(at.size)
        s = 1.0 if spread is None else float(spread.get(name, 1.0))
        key[at] = (rank + rng.random()) / (at.size * s if proportional else 1.0)
    return np.lexsort((codes, key))


def _spread(strata: pd.Series, reference: pd.Series) -> pd.Series | None:
    """Each stratum's sqrt(q (1 − q)) of the reference metric (None without one)."""
    if reference.isna().all():
        return None
    q = reference.astype(float).groupby(strata).mean().fillna(0.5)
    return np.sqrt(q * (1 - q)).clip(lower=MIN_SPREAD)


def ordering(population: pd.DataFrame, rule: str, seed: int) -> pd.DataFrame:
    """Every answer of `population` (qid, system, and for `judge` and `neyman` judged5: 1, 0 or
    NaN; for `neyman` also `reference`: 1, 0 or NaN) in the order the rule draws them."""
    if rule not in RULES:
        raise ValueError(f"sample rule {rule!r} is not one of {', '.join(RULES)}")
    rng = np.random.default_rng(seed)
    if rule == "uniform":
        at = rng.permutation(len(population))
    elif rule == "stratified":
        at = _interleaved(population["system"].astype(str), rng, proportional=False)
    else:
        five = (population["judged5"].fillna(0).to_numpy(float) >= 0.5
                if "judged5" in population else np.zeros(len(population), bool))
        strata = population["system"].astype(str) + np.where(five, "|5", "|<5")
        spread = None
        if rule == "neyman" and "reference" in population:
            spread = _spread(strata.reset_index(drop=True),
                             population["reference"].reset_index(drop=True))
        at = _interleaved(strata, rng, proportional=True, spread=spread)
    return population.iloc[at].reset_index(drop=True)
