"""The sample's design, fixed when it is drawn: label_sample.parquet holds every labelable
answer of the run at the first draw in the rule's seeded order, each with its stratum (system ×
the judge's verdict then) and its inclusion probability at the sample's size; the sample is
the rows drawn so far (`drawn` set: the first n positions).

Asking for more extends the sample along the stored order, so the strata, the order and the
probabilities never follow the judge's later verdicts: a judge run again after the draw changes
no answer's stratum, and the estimate (`ragdash.calibration.survey`, stratified on the stored
strata) stays that of the design actually drawn: strata are fixed before selection.
`changed` counts the answers whose verdict differs now.

A file written before strata were stored (only the drawn rows, no `stratum`) is read as it
is; extending it freezes the rest of the order from the verdicts at that time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ragdash.labels.sampling import ordering
from ragdash.rundir import Run

DESIGN_COLUMNS = ("qid", "system", "position", "rule", "seed", "drawn", "stratum", "inclusion")


def stratum_of(population: pd.DataFrame) -> pd.Series:
    """Each answer's stratum from its verdict (judged5: 1, 0 or NaN): "<system>|5" or
    "<system>|<5" (as `ragdash.calibration.survey.strata`)."""
    five = population["judged5"].fillna(0).to_numpy(float) >= 0.5
    return population["system"].astype(str) + np.where(five, "|5", "|<5")


def _unit(design: pd.DataFrame, rule: str) -> pd.Series:
    """What an answer's inclusion probability is shared with: its stratum (judge, neyman),
    its system (stratified) or every answer (uniform)."""
    if rule in ("judge", "neyman"):
        return design["stratum"]
    if rule == "stratified":
        return design["system"]
    return pd.Series("all", index=design.index)


def _with_inclusion(design: pd.DataFrame, rule: str) -> pd.DataFrame:
    """Each answer's inclusion probability at the sample's size: the share of its unit drawn
    (a prefix of the rule's order holds each unit in proportion, ±1)."""
    unit = _unit(design, rule)
    drawn = design["drawn"].notna()
    share = drawn.groupby(unit).mean()
    return design.assign(inclusion=unit.map(share).astype(float).to_numpy())


def is_design(stored: pd.DataFrame | None) -> bool:
    """Whether a stored label_sample.parquet holds the design (strata stored), not only the
    drawn rows of a file written before."""
    return stored is not None and "stratum" in stored.columns


def extended(stored: pd.DataFrame | None, population: pd.DataFrame, rule: str, seed: int,
             n: int, drawn: str) -> pd.DataFrame:
    """The design with its first `n` positions drawn (those newly drawn stamped `drawn`).

    `stored`: the file as read (None: a first draw, whose order and strata come from
    `population`: qid, system, judged5 and, for neyman, reference); a stored design keeps its
    order and strata; a file without strata keeps its rows first and orders the rest by the
    rule with the verdicts now."""
    if is_design(stored):
        design = stored.sort_values("position").reset_index(drop=True)
    else:
        order = ordering(population, rule, seed)
        order = order.assign(stratum=stratum_of(order).to_numpy())[["qid", "system", "stratum"]]
        if stored is None:
            first = order.iloc[:0].assign(drawn=None)
        else:
            first = stored.sort_values("position")[["qid", "system", "drawn"]].merge(
                order, on=["qid", "system"], how="left")  # an answer gone since: no stratum
        rest = order.merge(first[["qid", "system"]], on=["qid", "system"], how="left",
                           indicator=True)
        rest = rest[rest["_merge"] == "left_only"].drop(columns="_merge").assign(drawn=None)
        design = pd.concat([first, rest], ignore_index=True)
        design = design.assign(rule=rule, seed=int(seed))
    design["drawn"] = design["drawn"].astype(object)
    take = np.arange(len(design)) < n
    design.loc[take & design["drawn"].isna().to_numpy(), "drawn"] = drawn
    design = design.assign(position=np.arange(1, len(design) + 1))
    return _with_inclusion(design, rule)[list(DESIGN_COLUMNS)]


def read_design(run: Run) -> pd.DataFrame | None:
    """The stored file as it is (the design, or the drawn rows of an older file), or None."""
    if not run.has("label_sample"):
        return None
    return run.read("label_sample").astype({"qid": str, "system": str})


def sample_rows(stored: pd.DataFrame) -> pd.DataFrame:
    """The drawn rows of a stored file, in order (all of a file without strata)."""
    rows = stored[stored["drawn"].notna()] if is_design(stored) else stored
    return rows.sort_values("position").reset_index(drop=True)


def with_strata(frame: pd.DataFrame, stored: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` (qid, system, judged5, …) with `stratum`: the stored one of each answer in the
    design, NaN for answers outside it or without a stored design (their verdict now is
    used)."""
    if not is_design(stored):
        return frame.assign(stratum=np.nan)
    got = frame[["qid", "system"]].merge(stored[["qid", "system", "stratum"]],
                                         on=["qid", "system"], how="left")["stratum"]
    return frame.assign(stratum=got.to_numpy())


def changed(frame: pd.DataFrame) -> int:
    """The answers whose stored stratum differs from their verdict now (the judge changed
    since the draw)."""
    if "stratum" not in frame:
        return 0
    stored = frame["stratum"]
    return int((stored.notna() & (stored != stratum_of(frame))).sum())
