"""Which signal agrees with the truth on a run: every answer's Score_IR at the generation budget,
1-5 judge, reference metrics and (if measured) RAGAS/RAGChecker metrics against human labels,
else the reference metric `contains` (`ragdash.analysis.signals`); best first.

    .venv/bin/python benchmarks/signal_agreement.py data/demo_squad [--truth contains]
"""

from __future__ import annotations

import argparse

import pandas as pd

from ragdash.analysis.frames import at_budget
from ragdash.analysis.signals import answer_signals, signal_agreement
from ragdash.run_spec import ir_scores, run_spec
from ragdash.rundir import Run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--truth", default="contains", help="reference metric used without labels")
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    run = Run(args.run_dir)
    budget = run_spec(run).generation.budget
    frame, truth, signals, correct_at = answer_signals(
        run.read("reference"), ir=at_budget(ir_scores(run), budget) if budget else None,
        judgments=run.table("judgments"), metrics=run.table("metrics"),
        labels=run.table("labels"), truth_metric=args.truth)
    table = signal_agreement(frame, signals, "truth", correct_at=correct_at, n_boot=args.n_boot)
    print(f"truth: {truth}; {frame['truth'].notna().sum()} answers, "
          f"{frame['qid'].nunique()} questions; Score_IR at N = {budget}")
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        print(table.drop(columns=["calls", "tokens"]).to_string(
            index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
