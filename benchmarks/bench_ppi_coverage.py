"""Benchmark: does every interval the product shows cover the truth at its stated 95 %, and how
many labels give ±5 points?

On the SQuAD demo run (data/demo_squad, read only: 360 answers, 60 questions × LLM-only and 5
retrievers, each judged 1–5 by a 1.5B judge) a truth plays a person's labels. Five truths:

- contains: "contains a gold answer";
- f1: the official SQuAD token F1 against the best gold answer ≥ 0.5;
- harsh: "contains", with 20 % of the correct answers called wrong (drawn afresh each time);
- judge-xor: the judge's own verdict (judged 5) with 30 % of answers flipped (afresh each time);
- near: "contains", with 5 % of the correct answers called wrong (afresh each time): a
  reference metric a person nearly always agrees with, where disagreements go unseen in many
  samples (the test of the regression estimate's variance floor).

Two estimators on the same draws: `stratified` (`ragdash.calibration.survey.share`, the
stratified mean on the judge's verdict) and `assisted` (`ragdash.calibration.assisted.share`,
the regression estimate with a predictor cross-fitted on the labels over the run's
auxiliaries: judge score, Score_IR, reference metrics). Contains and F1 are themselves
reference metrics the predictor reads, so its residuals are near 0 there; harsh, near and
judge-xor say what is left when a person disagrees with them.

For each sampling rule (uniform; judge, the default: by system × the judge's verdict,
proportional; neyman: the same strata by N_h S_h), number of labels and truth, many samples are
drawn with the product's own ordering (`ragdash.labels.sampling`) and each estimator gives each
interval the Overview would show, pooled and per system (a system's only from 20 of its
labels). Two estimands:

- "these answers": the truth is the share over the 360 answers (of this draw's truth);
- "new questions": each draw first resamples the 60 questions with replacement (a new run of
  questions like these), then labels its answers; the truth is the expected share over the 60
  questions' answers, which no run sees whole.

Per cell: coverage of the intervals shown, how often one is shown, the mean width, and the
planner's labels for ±5 points (pooled, median). Then, per truth and estimator, the labels at
which the pooled interval's mean half-width reaches 5 points ("these answers", default rule;
pooled only), by interpolating between sizes, beside the fewest the regression estimate would
need with the ideal predictor, each answer's own chance of being correct (`least_labels`).
Results go to benchmarks/results/ppi-coverage.json and a table.

    nice -n 19 .venv/bin/python benchmarks/bench_ppi_coverage.py [--reps 600 --plan-reps 200]
        [--labels 20,30,50,100,150] [--plan 40,50,...,250] [--truths ...] [--rules ...]
        [--estimators stratified,assisted] [--estimands ...]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.calibration import assisted, survey
from ragdash.labels.findings import answer_table, auxiliaries, judge_scores
from ragdash.labels.sampling import ordering
from ragdash.labels.store import labelable, read_labels
from ragdash.rundir import Run
from ragdash.view import RunView

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo_squad"
OUT = ROOT / "benchmarks" / "results" / "ppi-coverage.json"
RULES = ("uniform", "judge", "neyman")
TRUTHS = ("contains", "f1", "harsh", "judge-xor", "near")
ESTIMATORS = ("stratified", "assisted")
"""survey.share (the stratified mean on the judge's verdict) and assisted.share (the
regression estimate with a cross-fitted predictor)."""
POOLED = "pooled"


def demo_table(run: Run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The answers (qid, system, judged5, reference, stratum and the regression estimate's
    auxiliaries, `findings.auxiliaries`) and their reference metrics (contains, f1) in the
    same order."""
    answers = labelable(run)
    judge = judge_scores(run)
    frame = auxiliaries(run, answer_table(run, read_labels(run).iloc[:0], judge, answers),
                        judge)
    ref = RunView(run).reference().astype({"qid": str, "system": str})
    ref = frame[["qid", "system"]].merge(ref, on=["qid", "system"], how="left")
    aux = [c for c in assisted.AUXILIARIES if c in frame and c != "judged5"]
    frame = frame[["qid", "system", "judged5", *aux]].assign(
        reference=ref["contains"].astype(float).to_numpy())
    return frame.assign(stratum=survey.strata(frame)), ref[["contains", "f1"]].astype(float)


def expected(name: str, frame: pd.DataFrame, ref: pd.DataFrame) -> np.ndarray:
    """Each answer's probability of being correct under the truth."""
    five = frame["judged5"].to_numpy(float)
    return {"contains": ref["contains"].to_numpy(),
            "f1": (ref["f1"].to_numpy() >= 0.5).astype(float),
            "harsh": 0.8 * ref["contains"].to_numpy(),
            "judge-xor": 0.7 * five + 0.3 * (1 - five),
            "near": 0.95 * ref["contains"].to_numpy()}[name]


def realised(name: str, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of the truth's labels (the random truths drawn afresh)."""
    return p.copy() if name in ("contains", "f1") else (rng.random(p.size) < p).astype(float)


def resampled(frame: pd.DataFrame, p: np.ndarray, rng: np.random.Generator
              ) -> tuple[pd.DataFrame, np.ndarray]:
    """A run of questions drawn with replacement from the demo's (each draw its own qid)."""
    qids = frame["qid"].unique()
    by_q = {q: np.flatnonzero(frame["qid"].to_numpy() == q) for q in qids}
    picks = rng.choice(qids, qids.size, replace=True)
    rows = np.concatenate([by_q[q] for q in picks])
    new_q = np.concatenate([[f"{q}#{i}"] * by_q[q].size for i, q in enumerate(picks)])
    return frame.iloc[rows].assign(qid=new_q).reset_index(drop=True), p[rows]


def one_share(estimator: str, frame: pd.DataFrame, y: np.ndarray,
              pred: np.ndarray | str | None, estimand: str, **kw: object) -> survey.Share:
    """The share an estimator gives for one scope (`pred`: the regression estimate's
    predictions of the scope's answers, or why there are none)."""
    if estimator == "assisted":
        return assisted.share(frame, y, pred, estimand, **kw)
    return survey.share(frame, y, estimand, **kw)


def intervals(frame: pd.DataFrame, order: np.ndarray, truth: np.ndarray, sizes: list[int],
              estimand: str, systems: list[str], estimators: list[str]) -> dict:
    """{n: {(estimator, scope): (ci, to_target)}} when the first n answers of `order` are
    labelled (the regression estimate's predictor cross-fitted once over every answer, as the
    share section does)."""
    at = {s: (frame["system"] == s).to_numpy() for s in systems}
    parts = {s: frame[at[s]] for s in systems}
    out = {}
    for n in sizes:
        y = np.full(len(frame), np.nan)
        y[order[:n]] = truth[order[:n]]
        got = {}
        for est in estimators:
            pred = assisted.cross_fitted(frame, y) if est == "assisted" else None
            got[(est, POOLED)] = one_share(est, frame, y, pred, estimand,
                                           min_labels=survey.MIN_POOLED_LABELS,
                                           target=survey.TARGET_HALF)
            for s in systems:
                sub = pred if pred is None or isinstance(pred, str) else pred[at[s]]
                got[(est, s)] = one_share(est, parts[s], y[at[s]], sub, estimand)
        out[n] = {k: (v.ci, v.to_target) for k, v in got.items()}
    return out


def run_cells(frame: pd.DataFrame, ref: pd.DataFrame, truths: list[str], rules: list[str],
              sizes: list[int], reps: int, seed: int, estimands: list[str],
              estimators: list[str], per_system: bool = True) -> list[dict]:
    """Coverage, share shown, mean width and the planner's figure per cell (one per
    estimator, on the same draws; the pooled interval only without `per_system`)."""
    systems = list(frame["system"].unique()) if per_system else []
    scopes = [POOLED, *systems]
    keys = [(e, s) for e in estimators for s in scopes]
    cells = []
    for estimand in estimands:
        for name in truths:
            p_all = expected(name, frame, ref)
            for rule in rules:
                rng = np.random.default_rng([seed, TRUTHS.index(name), RULES.index(rule)])
                rec = {(n, k): [] for n in sizes for k in keys}
                plan = {(n, e): [] for n in sizes for e in estimators}
                start = time.perf_counter()
                for rep in range(reps):
                    f, p = (frame, p_all) if estimand == "these answers" else \
                        resampled(frame, p_all, rng)
                    truth = realised(name, p, rng)
                    # these answers: this draw's share; new questions: the population's
                    target, tf = (truth, f) if estimand == "these answers" else (p_all, frame)
                    true = {POOLED: float(target.mean()),
                            **{s: float(target[(tf["system"] == s).to_numpy()].mean())
                               for s in systems}}
                    order = ordering(f.assign(_row=np.arange(len(f))), rule,
                                     seed * 100_000 + rep)["_row"].to_numpy()
                    for n, got in intervals(f, order, truth, sizes, estimand, systems,
                                            estimators).items():
                        for (e, s), (ci, _need) in got.items():
                            if ci is not None:
                                rec[(n, (e, s))].append((ci[0] <= true[s] <= ci[1],
                                                         ci[1] - ci[0]))
                        for e in estimators:
                            plan[(n, e)].append(got[(e, POOLED)][1])
                for e in estimators:
                    for n in sizes:
                        for s in scopes:
                            r = np.array(rec[(n, (e, s))], float).reshape(-1, 2)
                            needs = ([x for x in plan[(n, e)] if x is not None]
                                     if s == POOLED else [])
                            cells.append({
                                "estimand": estimand, "truth": name, "rule": rule,
                                "estimator": e, "labels": n, "scope": s, "shown": len(r) / reps,
                                "coverage": float(r[:, 0].mean()) if len(r) else None,
                                "width": float(r[:, 1].mean()) if len(r) else None,
                                "to_target": float(np.median(needs)) if needs else None,
                                "no_target": (sum(x is None for x in plan[(n, e)]) / reps
                                              if s == POOLED else None)})
                    pooled = [c for c in cells[-len(sizes) * len(scopes):]
                              if c["scope"] == POOLED]
                    print(f"{estimand} · {name} · {rule} · {e}: pooled "
                          + ", ".join(f"{c['labels']}: {c['coverage']:.3f}/"
                                      f"{c['width'] * 100:.1f}" for c in pooled if c["width"])
                          + f" ({time.perf_counter() - start:.0f} s)", flush=True)
    return cells


def labels_for_five(cells: list[dict], truths: list[str], rule: str = "judge",
                    estimator: str = "stratified") -> dict:
    """Per truth, the labels at which the pooled mean half-width ("these answers") reaches 5
    points, linear between the two sizes around it (None beyond the largest)."""
    out = {}
    for name in truths:
        pts = sorted((c["labels"], c["width"] * 50) for c in cells
                     if c["truth"] == name and c["rule"] == rule and c["scope"] == POOLED
                     and c.get("estimator", "stratified") == estimator
                     and c["estimand"] == "these answers" and c["width"] is not None)
        out[name] = None
        for (n0, h0), (n1, h1) in zip(pts, pts[1:], strict=False):
            if h0 > 5 >= h1:
                out[name] = round(n0 + (h0 - 5) / (h0 - h1) * (n1 - n0))
                break
        if pts and pts[0][1] <= 5:
            out[name] = pts[0][0]
    return out


def least_labels(p: np.ndarray, half: float = 0.05, z: float = 1.959964) -> dict:
    """The fewest labels at which the regression (difference) estimator with the ideal
    predictor, each answer's own chance `p` of being correct, reaches ±`half` on "these
    answers": its residuals y − p keep the variance p(1 − p) no predictor removes, and the
    estimator corrects the prediction with the labels' residuals as a design-based estimate
    must (it may not assume the residuals average 0: that is what the labels check). Its
    variance is Σ σ_i² (1/π_i − 1) / N²: proportional (π = n/N) σ̄² (1/n − 1/N); the best
    allocation, π_i ∝ σ_i (Neyman; active inference with the ideal predictor),
    ((Σ σ_i)²/n − Σ σ_i²)/N² (probabilities capped at 1 ignored)."""
    var = p * (1 - p)
    big_n = p.size
    bound = (half / z) ** 2
    proportional = var.mean() / (bound + var.mean() / big_n)
    sd = np.sqrt(var)
    neyman = sd.sum() ** 2 / (bound * big_n**2 + var.sum())
    return {"proportional": float(np.ceil(proportional)), "neyman": float(np.ceil(neyman))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300, help="samples per cell")
    ap.add_argument("--labels", default="20,30,50,100,150", help="numbers of labels")
    ap.add_argument("--plan", default="40,50,60,75,100,125,150,175,200,250",
                    help="numbers of labels for the ±5-point search (default rule)")
    ap.add_argument("--plan-reps", type=int, default=100)
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--estimators", default=",".join(ESTIMATORS))
    ap.add_argument("--estimands", default=",".join(survey.ESTIMANDS))
    ap.add_argument("--pooled-only", action="store_true",
                    help="the pooled interval only (no per-system intervals)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    sizes = [int(s) for s in args.labels.split(",")] if args.labels else []
    truths, rules = args.truths.split(","), args.rules.split(",")
    estimators = args.estimators.split(",")
    start = time.perf_counter()
    frame, ref = demo_table(Run(DEMO))
    print(f"SQuAD demo: {len(frame)} answers; judged 5: {frame['judged5'].mean():.1%}; "
          + "; ".join(f"{t}: {expected(t, frame, ref).mean():.1%}" for t in truths) + ".")
    least = {t: least_labels(expected(t, frame, ref)) for t in truths}
    print("Fewest labels for ±5 of the regression estimate with the ideal predictor "
          "(proportional / best allocation): "
          + ", ".join(f"{t} {v['proportional']:.0f}/{v['neyman']:.0f}"
                      for t, v in least.items()))
    cells = run_cells(frame, ref, truths, rules, sizes, args.reps, args.seed,
                      args.estimands.split(","), estimators,
                      per_system=not args.pooled_only) if sizes else []
    plan_sizes = [int(s) for s in args.plan.split(",")] if args.plan else []
    plan = run_cells(frame, ref, truths, ["judge"], plan_sizes, args.plan_reps, args.seed + 1,
                     ["these answers"], estimators, per_system=False) if plan_sizes else []
    five = {e: labels_for_five(plan, truths, estimator=e) for e in estimators}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "reps": args.reps, "sizes": sizes, "plan_reps": args.plan_reps,
        "rules": rules, "estimators": estimators, "pooled_only": args.pooled_only,
        "plan_sizes": plan_sizes, "truth": {t: float(expected(t, frame, ref).mean())
                                            for t in truths},
        "least_labels": least, "labels_for_five": five, "cells": cells, "plan": plan},
        indent=1))
    print(table(cells, sizes, args.reps))
    for e, by_truth in five.items():
        print(f"\nLabels for ±5 points ({e}; pooled, these answers, default rule, mean "
              "half-width): " + ", ".join(
                  f"{t} {n if n is not None else f'> {max(plan_sizes, default=0)}'}"
                  for t, n in by_truth.items()))
    for c in plan:
        if c["scope"] == POOLED:
            print(f"  {c['estimator']} · {c['truth']} · {c['labels']}: ±{c['width'] * 50:.1f}"
                  f" points, coverage {c['coverage']:.1%}, planner {c['to_target']}")
    print(f"\n({time.perf_counter() - start:.0f} s)")


def table(cells: list[dict], sizes: list[int], reps: int) -> str:
    """Markdown: one row per estimand × truth × rule × estimator for the pooled interval and
    one for the systems, one column per size: coverage · mean width (points), and how often an
    interval is shown when not always; for the systems, coverage and width over every
    system's intervals shown, and the lowest coverage of a system with 50 or more intervals
    shown (fewer say little) with that number."""
    rows: dict = {}
    for c in cells:
        pooled = c["scope"] == POOLED
        key = (c["estimand"], c["truth"], c["rule"], c.get("estimator", "stratified"),
               POOLED if pooled else "per system")
        rows.setdefault(key, {}).setdefault(c["labels"], []).append(c)
    lines = ["| estimand | truth | rule | estimator | scope | "
             + " | ".join(f"{n} labels" for n in sizes) + " |",
             "|---|---|---|---|---|" + "---|" * len(sizes)]
    for key, by_n in rows.items():
        out = []
        for n in sizes:
            shown = [c for c in by_n.get(n, []) if c["coverage"] is not None]
            if not shown:
                out.append("no interval")
                continue
            k = np.array([c["shown"] * reps for c in shown])
            cov = float(np.average([c["coverage"] for c in shown], weights=k))
            width = float(np.average([c["width"] for c in shown], weights=k)) * 100
            seen = np.mean([c["shown"] for c in by_n[n]])
            text = f"{cov:.1%} · {width:.1f}" + ("" if seen == 1 else f" ({seen:.0%} shown)")
            many = [c for c in shown if c["shown"] * reps >= 50]
            if key[-1] != POOLED and many:
                low = min(many, key=lambda c: c["coverage"])
                text += f"; lowest {low['coverage']:.1%} of {low['shown'] * reps:.0f}"
            out.append(text)
        lines.append("| " + " | ".join(key) + " | " + " | ".join(out) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
