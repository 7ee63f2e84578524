"""Benchmark: does every interval the product shows cover the truth at its stated 95 %?

On the SQuAD demo run (data/demo_squad, read only: 360 answers, 60 questions × LLM-only and 5
retrievers, each judged 1–5 by a 1.5B judge), "contains a gold answer" stands in for a person's
label (it only plays one here). For each sampling rule (uniform, and the default: by system ×
the judge's verdict) and number of labels, many samples are drawn with the product's own
ordering (`ragdash.labels.sampling`) and the product's own estimator
(`ragdash.calibration.survey.share`) gives each interval the Overview would show, pooled and per
system (a system's interval only from 20 of its labels on). Two estimands:

- "these answers": the truth is the share over the 360 answers;
- "new questions": each draw first resamples the 60 questions with replacement (a new run of
  questions like these), then labels its answers; the truth is the share over the 60 questions'
  answers (the questions' distribution), which no run sees whole.

Per cell: coverage of the intervals shown, how often one is shown, the mean width, and labels
needed for ±5 points (pooled). Results go to benchmarks/results/ppi-coverage.json and a table.

    nice .venv/bin/python benchmarks/bench_ppi_coverage.py [--reps 1000] [--labels 20,30,50,100,150]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.calibration import survey
from ragdash.labels.findings import answer_table, judge_scores
from ragdash.labels.sampling import ordering
from ragdash.labels.store import labelable, read_labels
from ragdash.rundir import Run
from ragdash.view import RunView

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo_squad"
OUT = ROOT / "benchmarks" / "results" / "ppi-coverage.json"
RULES = ("uniform", "judge")
POOLED = "pooled"


def demo_table(run: Run) -> tuple[pd.DataFrame, np.ndarray]:
    """The answers (qid, system, judged5) and each one's stand-in label."""
    answers = labelable(run)
    frame = answer_table(run, read_labels(run).iloc[:0], judge_scores(run), answers)
    ref = RunView(run).reference().astype({"qid": str, "system": str})
    contains = frame[["qid", "system"]].merge(ref, on=["qid", "system"], how="left")["contains"]
    return frame[["qid", "system", "judged5"]], contains.astype(float).to_numpy()


def resampled(frame: pd.DataFrame, truth: np.ndarray, rng: np.random.Generator
              ) -> tuple[pd.DataFrame, np.ndarray]:
    """A run of questions drawn with replacement from the demo's (each draw its own qid)."""
    qids = frame["qid"].unique()
    by_q = {q: np.flatnonzero(frame["qid"].to_numpy() == q) for q in qids}
    picks = rng.choice(qids, qids.size, replace=True)
    rows = np.concatenate([by_q[q] for q in picks])
    new_q = np.concatenate([[f"{q}#{i}"] * by_q[q].size for i, q in enumerate(picks)])
    return frame.iloc[rows].assign(qid=new_q).reset_index(drop=True), truth[rows]


def one_draw(frame: pd.DataFrame, truth: np.ndarray, n: int, rule: str, estimand: str,
             seed: int) -> dict[str, tuple[float, float] | None]:
    """Each scope's shown interval when the first `n` answers of the rule's order are labelled."""
    order = ordering(frame.assign(_row=np.arange(len(frame))), rule, seed)["_row"].to_numpy()
    y = np.full(len(frame), np.nan)
    y[order[:n]] = truth[order[:n]]
    out = {POOLED: survey.share(frame, y, estimand, min_labels=survey.MIN_POOLED_LABELS)}
    for system in frame["system"].unique():
        at = (frame["system"] == system).to_numpy()
        out[system] = survey.share(frame[at], y[at], estimand)
    return {k: (s.ci, s.to_target) for k, s in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000, help="samples per cell")
    ap.add_argument("--labels", default="20,30,50,100,150", help="numbers of labels")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sizes = [int(s) for s in args.labels.split(",")]
    start = time.perf_counter()
    frame, truth = demo_table(Run(DEMO))
    scopes = [POOLED, *frame["system"].unique()]
    true = {POOLED: float(truth.mean()),
            **{s: float(truth[(frame["system"] == s).to_numpy()].mean())
               for s in scopes[1:]}}
    print(f"SQuAD demo: {len(frame)} answers; stand-in label = \"contains a gold answer\"; "
          f"true share {true[POOLED]:.1%}; judged 5: {frame['judged5'].mean():.1%}.")
    rng = np.random.default_rng(args.seed)
    cells = []
    for estimand in survey.ESTIMANDS:
        for rule in RULES:
            for n in sizes:
                hits = {s: [] for s in scopes}
                widths = {s: [] for s in scopes}
                target = []
                for rep in range(args.reps):
                    f, t = (frame, truth) if estimand == "these answers" else \
                        resampled(frame, truth, rng)
                    got = one_draw(f, t, n, rule, estimand, seed=rep)
                    for s, (ci, _to_target) in got.items():
                        if ci is not None:
                            hits[s].append(ci[0] <= true[s] <= ci[1])
                            widths[s].append(ci[1] - ci[0])
                    target.append(got[POOLED][1])
                for s in scopes:
                    cells.append({
                        "estimand": estimand, "rule": rule, "labels": n, "scope": s,
                        "truth": true[s], "shown": len(hits[s]) / args.reps,
                        "coverage": float(np.mean(hits[s])) if hits[s] else None,
                        "width": float(np.mean(widths[s])) if widths[s] else None,
                        "to_target": (float(np.median([x for x in target if x is not None]))
                                      if s == POOLED and any(x is not None for x in target)
                                      else None)})
                print(f"{estimand} · {rule} · {n}: pooled "
                      f"{cells[-len(scopes)]['coverage']}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"reps": args.reps, "sizes": sizes, "truth": true,
                                          "cells": cells}, indent=1))
    print(table(cells, sizes))
    print(f"\n({time.perf_counter() - start:.0f} s)")


def table(cells: list[dict], sizes: list[int]) -> str:
    """Markdown: one row per estimand × rule × scope, one column per size: coverage · width
    (points) · share of draws showing an interval."""
    rows = {}
    for c in cells:
        key = (c["estimand"], c["rule"], c["scope"])
        rows.setdefault(key, {})[c["labels"]] = (
            "no interval" if c["coverage"] is None else
            f"{c['coverage']:.1%} · {c['width'] * 100:.1f}"
            + ("" if c["shown"] == 1 else f" ({c['shown']:.0%} shown)"))
    lines = ["| estimand | rule | scope | " + " | ".join(f"{n} labels" for n in sizes) + " |",
             "|---|---|---|" + "---|" * len(sizes)]
    for (estimand, rule, scope), by_n in rows.items():
        lines.append(f"| {estimand} | {rule} | {scope} | "
                     + " | ".join(by_n.get(n, "") for n in sizes) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
