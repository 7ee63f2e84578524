"""Do I need LLM calls to evaluate retrieval? eRAG (Salemi & Zamani, SIGIR 2024: k generator
calls per question and retriever) against Score_IR (none), chunk-level R@5 and nDCG@5 from the
relevant parts (none), and RAGAS context precision and recall (an LLM per answer), on the same
answers and against the same truth (each answer contains a gold answer): per-answer AUC with its
95 % interval over questions, Kendall's tau between each signal's order of the retrievers and
the truth's, and what each signal cost in LLM calls.

Needs a run with answers, reference scores and erag.parquet (`ragdash erag --run-dir R`);
RAGAS's metrics are read from `--metrics` (a metrics.parquet of the same run) when given.

    .venv/bin/python benchmarks/erag_vs_score_ir.py R \\
        --metrics benchmarks/results/demo_squad-metrics-limit20.parquet \\
        --out benchmarks/results/erag-vs-score-ir
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ragdash.analysis import frames, signals
from ragdash.analysis.system_means import signal_board
from ragdash.erag.measures import MEASURES
from ragdash.rundir import Run
from ragdash.scoring.ir_metrics import chunk_metrics
from ragdash.view import RunView

CHUNK = {"R@5": "chunk R@5 (relevant parts)", "nDCG@5": "chunk nDCG@5 (relevant parts)"}
RAGAS = ("context_precision", "context_recall")


def frame_of(run_dir: str, metrics: str | None) -> tuple[pd.DataFrame, list[str], dict]:
    """One row per (question, retriever) answered, with every signal and the truth, restricted
    to the answers eRAG labelled; the signals; what each cost."""
    view = RunView(Run(run_dir))
    run = view.run
    budget = view.generation_budget
    extra = pd.read_parquet(metrics) if metrics else None
    ref = frames.primary(view.reference(), budget)
    ir = frames.at_budget(view.ir_scores(), budget)
    erag = view.erag()
    frame, _, names, _ = signals.answer_signals(
        ref, ir=ir, metrics=frames.primary(extra, budget) if extra is not None else None,
        erag=erag.per_answer)
    examples = run.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    per_q = chunk_metrics(run.read("retrieved"), run.read("chunks"), parts, per_query=True)
    wide = per_q[per_q["measure"].isin(CHUNK)].pivot_table(
        index=["qid", "retriever"], columns="measure", values="value").rename(columns=CHUNK)
    wide = wide.reset_index().rename(columns={"retriever": "system"})
    frame = frame.merge(wide, on=["qid", "system"], how="left")
    frame[list(CHUNK.values())] = frame[list(CHUNK.values())].fillna(0.0)  # nothing relevant
    frame = frame.dropna(subset=list(MEASURES))  # the answers eRAG labelled
    keep = ["score_ir", *CHUNK.values(), *[m for m in RAGAS if m in names], *MEASURES]
    cost = view.signal_costs(keep)
    if extra is not None:  # RAGAS's cost as recorded in its own file, on these answers
        same = extra.assign(qid=extra["qid"].astype(str)).merge(frame[["qid", "system"]])
        cost.update(signals.signal_costs([m for m in RAGAS if m in names], metrics=same))
    return frame, keep, cost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--metrics", help="metrics.parquet with RAGAS's context metrics")
    ap.add_argument("--out", help="write <out>.md and <out>.json")
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    frame, names, cost = frame_of(args.run_dir, args.metrics)
    auc = signals.signal_agreement(frame, names, "truth", correct_at=1.0, n_boot=args.n_boot)
    board = signal_board(frame.assign(contains=frame["truth"]), ["contains", *names],
                         "contains", n_boot=args.n_boot)
    tau = board.agreement.set_index("signal")
    rows = []
    for r in auc.to_dict("records"):
        t = tau.loc[r["signal"]] if r["signal"] in tau.index else None
        calls, tokens = cost.get(r["signal"], (float("nan"), float("nan")))
        rows.append({"signal": signals.signal_label(r["signal"]), "answers": r["n"],
                     "AUC": round(r["auc"], 3), "AUC low": round(r["auc_low"], 3),
                     "AUC high": round(r["auc_high"], 3),
                     "tau": None if t is None or pd.isna(t["tau"]) else round(t["tau"], 3),
                     "LLM cost": signals.cost_text(calls, tokens)})
    table = pd.DataFrame(rows)
    head = (f"{frame['qid'].nunique()} questions × {frame['system'].nunique()} retrievers "
            f"({len(frame)} answers) of {args.run_dir}; truth: the answer contains a gold "
            "answer; tau: Kendall's tau-b of the retrievers' order by the signal's mean against "
            "the truth's.")
    print(head)
    print(table.to_string(index=False))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        cells = [list(table.columns), ["---"] * len(table.columns),
                 *([("–" if pd.isna(v) else str(v)) for v in row]
                   for row in table.itertuples(index=False))]
        out.with_suffix(".md").write_text(head + "\n\n" + "\n".join(
            "| " + " | ".join(row) + " |" for row in cells) + "\n")
        out.with_suffix(".json").write_text(json.dumps(
            {"about": head, "rows": rows}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
