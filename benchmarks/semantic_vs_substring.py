"""Does `semantic` matching rank the retrievers as `substring` does? On a run scored with
`scoring.also: [semantic]`: mean Score_IR at N per retriever with a 95 % interval over
questions (`survey.mean_interval`), the ranking by each method, every pair of retrievers
compared per method (mean paired difference with its interval, Wilcoxon p with Holm's
correction: `ragdash.analysis.compare.pairwise`), whether a pair's verdict changes, and how
well the two methods' per-question scores agree (Spearman).

    ragdash score --config CONFIG_WITH_ALSO --limit 100 --retrievers bm25,sim,mmr,reo \
        --run-dir DIR
    .venv/bin/python benchmarks/semantic_vs_substring.py DIR [--budget 1000]
"""

from __future__ import annotations

import argparse

import pandas as pd

from ragdash.analysis.compare import pairwise
from ragdash.analysis.curves import mean_curves
from ragdash.run_spec import ir_scores, run_spec, score_methods
from ragdash.rundir import Run


def verdict(row: pd.Series) -> str:
    """'a > b', 'a < b' or 'tie' from the Holm-corrected Wilcoxon p at 0.05."""
    if row["p_holm"] is None or pd.isna(row["p_holm"]) or row["p_holm"] >= 0.05:
        return "no difference"
    return f"{row['a']} {'>' if row['mean_diff'] > 0 else '<'} {row['b']}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--budget", type=int, default=1000)
    args = ap.parse_args()
    run = Run(args.run_dir)
    methods = score_methods(run)
    if len(methods) < 2:
        raise SystemExit(f"{args.run_dir} is scored by {methods[0]} only: set scoring.also")
    rets = run_spec(run).compared
    verdicts = {}
    for m in methods:
        ir = ir_scores(run, m)
        bands = mean_curves(ir)
        at = bands[bands["budget"] == args.budget].set_index("retriever").loc[rets]
        order = at["mean"].sort_values(ascending=False).index.tolist()
        print(f"\n{m} at N = {args.budget} ({int(at['n'].iloc[0])} questions): ranking "
              + " > ".join(order))
        for r, row in at.iterrows():
            print(f"  {r:5s} {row['mean']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}]")
        pairs = pairwise(ir, rets, args.budget)
        for _, row in pairs.iterrows():
            verdicts.setdefault((row["a"], row["b"]), {})[m] = verdict(row)
            print(f"  {row['a']}-{row['b']}: {row['mean_diff']:+.3f} [{row['lo']:+.3f}, "
                  f"{row['hi']:+.3f}], Holm p {row['p_holm']:.4g}")
    first, second = (ir_scores(run, m) for m in methods[:2])
    at = [x[x["budget"] == args.budget].set_index(["retriever", "qid"])["score"]
          for x in (first, second)]
    rho = at[0].groupby(level="retriever").apply(
        lambda s: s.corr(at[1].loc[s.index], method="spearman"))
    print(f"\nper-question Spearman correlation, {methods[0]} vs {methods[1]}: "
          + ", ".join(f"{r} {rho[r]:.2f}" for r in rets))
    changed = [(p, v) for p, v in verdicts.items() if len(set(v.values())) > 1]
    print(f"\npairs whose verdict (Holm p < 0.05) differs between methods: {len(changed)} of "
          f"{len(verdicts)}")
    for (a, b), v in changed:
        print(f"  {a}-{b}: " + "; ".join(f"{m}: {x}" for m, x in v.items()))


if __name__ == "__main__":
    main()
