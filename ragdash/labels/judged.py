"""The judge's verdict on each answer a run can label: what the default sample stratifies by
and what the estimates correct with the labels."""

from __future__ import annotations

import pandas as pd

from ragdash.rundir import Run


def judge_scores(run: Run) -> pd.DataFrame | None:
    """(qid, system, judge) of the answers with a valid judge score, or None."""
    from ragdash.run_spec import judgments

    j = judgments(run)
    if j is None:
        return None
    j = j[j["score"].isin([1, 2, 3, 4, 5])]
    if j.empty:
        return None
    return (j.astype({"qid": str, "system": str}).drop_duplicates(["qid", "system"])
            .assign(judge=lambda d: d["score"].astype(int))[["qid", "system", "judge"]])
