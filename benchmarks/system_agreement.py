"""Do the signals rank a run's systems the same way? Every signal's mean with its 95 %
CI per system (Score_IR at N, the judge as a quality order, the reference metrics, RAGAS and
RAGChecker metrics where measured) and Kendall's tau-b between each signal's order and the
truth's (human labels, else the reference metric `contains`), then against Score_IR's
(`ragdash.analysis.system_means`; the Compare retrievers page shows the same).

    .venv/bin/python benchmarks/system_agreement.py data/demo_squad [--budget 500]
"""

from __future__ import annotations

import argparse

import pandas as pd

from ragdash.analysis.system_means import format_board, signal_board
from ragdash.rundir import Run
from ragdash.view import RunView


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--budget", type=int, help="N of Score_IR (default: the generation budget)")
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    view = RunView(Run(args.run_dir))
    budget = args.budget or view.generation_budget or max(view.budgets)
    frame, names, reference, called = view.system_signals(budget)
    print(f"{args.run_dir}: {frame['qid'].nunique()} questions, {frame['system'].nunique()} "
          f"systems; Score_IR at N = {budget}")
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(format_board(view.signal_board(budget, n_boot=args.n_boot)))
        if reference != "score_ir" and "score_ir" in names:
            print()
            against = signal_board(frame, names, "score_ir", n_boot=args.n_boot)
            print("\n".join(format_board(against).split("\n\n", 1)[1:]))


if __name__ == "__main__":
    main()
