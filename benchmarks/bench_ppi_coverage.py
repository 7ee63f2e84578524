"""Benchmark: do the share-correct intervals cover the truth? Coverage and width of each 95 %
interval on the SQuAD demo run, with "contains a gold answer" standing in for a human label.

The demo (data/demo_squad, read only) has 360 answers (60 questions × LLM-only and 5 retrievers),
each judged 1–5 by a 1.5B LLM judge and scored against SQuAD's gold answers in memory. The
stand-in label of an answer is whether it contains a gold answer (not a human judgment: it only
plays one here); the truth is the share over all 360 answers. For each number of labels, random
subsets of that many answers are revealed, many times, and each estimator's interval is checked
against the truth:

- labels only (classical interval); judge only (share judged 5; one interval, no labels);
- PPI++ and plain PPI (λ = 1) with the judge's "judged 5";
- PPI++ with retrieval alone (the logistic Score_IR model fitted on the judge's scores);
- cross-PPI with retrieval alone fitted on the revealed labels (no judge at all).

    nice .venv/bin/python benchmarks/bench_ppi_coverage.py [--reps 500] [--labels 30,60,120]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.calibration.ppi import cross_ppi, judge_only, labels_only, ppi
from ragdash.calibration.ppi_shares import cross_predictions
from ragdash.labels.findings import answer_table, judge_scores
from ragdash.labels.store import labelable, read_labels
from ragdash.rundir import Run
from ragdash.view import RunView

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo_squad"
ROWS = ("labels only", "judge only", "PPI++ judge", "PPI judge (λ = 1)",
        "PPI++ retrieval (fitted on judge)", "cross-PPI retrieval (no judge)")


def demo_table(run: Run) -> tuple[pd.DataFrame, np.ndarray]:
    """The answers (judged5, p_retrieval, ir@ features) and each one's stand-in label."""
    answers = labelable(run)
    frame = answer_table(run, read_labels(run).iloc[:0], judge_scores(run), answers)
    ref = RunView(run).reference().astype({"qid": str, "system": str})
    contains = frame[["qid", "system"]].merge(ref, on=["qid", "system"], how="left")["contains"]
    return frame, contains.astype(float).to_numpy()


def one_draw(frame: pd.DataFrame, truth: np.ndarray, n: int, rng: np.random.Generator,
             seed: int) -> dict[str, tuple[float, float] | None]:
    """Each estimator's interval (fractions) when the labels of `n` random answers are shown."""
    lab = np.zeros(len(frame), bool)
    lab[rng.choice(len(frame), n, replace=False)] = True
    y, judged = truth[lab], frame["judged5"].to_numpy(float)
    p = frame["p_retrieval"].to_numpy(float)
    p = np.where(np.isnan(p), np.nanmean(p), p)
    shown = frame.assign(y=np.where(lab, truth, np.nan))
    cross = cross_predictions(shown, seed=seed)
    estimates = {
        "labels only": labels_only(y),
        "judge only": judge_only(judged),
        "PPI++ judge": ppi(y, judged[lab], judged[~lab]),
        "PPI judge (λ = 1)": ppi(y, judged[lab], judged[~lab], lam=1),
        "PPI++ retrieval (fitted on judge)": ppi(y, p[lab], p[~lab]),
    }
    if not isinstance(cross, str):
        pc, fold = cross
        estimates["cross-PPI retrieval (no judge)"] = cross_ppi(
            y, pc[np.flatnonzero(lab), fold[lab]], pc[~lab])
    return {name: None if e.ci is None else (e.ci[0] / 100, e.ci[1] / 100)
            for name, e in estimates.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500, help="random label subsets per size")
    ap.add_argument("--labels", default="30,60,120", help="numbers of labels revealed")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.labels.split(",")]
    start = time.perf_counter()
    frame, truth = demo_table(Run(DEMO))
    share = float(truth.mean())
    print(f"SQuAD demo: {len(frame)} answers; stand-in label = \"contains a gold answer\" (not "
          f"a human label); true share {share:.1%}; judged 5: {frame['judged5'].mean():.1%}.")
    rng = np.random.default_rng(args.seed)
    rows = {name: {} for name in ROWS}
    for n in sizes:
        hits = {name: [] for name in ROWS}
        widths = {name: [] for name in ROWS}
        for rep in range(args.reps):
            for name, ci in one_draw(frame, truth, n, rng, seed=rep).items():
                if ci is not None:
                    hits[name].append(ci[0] <= share <= ci[1])
                    widths[name].append(ci[1] - ci[0])
        for name in ROWS:
            rows[name][n] = (f"{np.mean(hits[name]):.1%} · {np.mean(widths[name]) * 100:.1f}"
                             if hits[name] else "—")
    print(f"\n95 % intervals, {args.reps} random label subsets per size: coverage of the true "
          "share · mean width (percentage points)\n")
    print("| estimator | " + " | ".join(f"{n} labels" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in ROWS:
        print(f"| {name} | " + " | ".join(rows[name][n] for n in sizes) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
