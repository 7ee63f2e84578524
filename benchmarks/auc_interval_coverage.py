"""Coverage and width of the signal table's AUC interval (`ragdash.analysis.signals`), by
simulation, beside the percentile bootstrap it replaced.

Each draw: `questions` questions with a question-level effect (an easier question retrieves
better and is answered right more often), `per` answers each (systems), a signal that is
`strength` higher for a correct answer plus the question's effect and noise. The true AUC is
that of 20,000 questions. A draw with one class only, or a resample with one class, is left
out as the product leaves it out. Percentile: the bootstrap's 2.5 and 97.5 percentiles;
product: `signals.auc_interval` (Clopper–Pearson at the effective sample size, floored at the
questions of the smaller class). Perfect: the share of draws whose signal separates the
classes perfectly (where a percentile interval is 1.00–1.00).

    .venv/bin/python benchmarks/auc_interval_coverage.py [draws]

writes benchmarks/results/auc_interval_coverage.md.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

from ragdash.analysis.signals import auc, auc_interval, bootstrap_aucs, effective_classes

N_BOOT, LEVEL = 400, 0.95
STRENGTHS = (0.8, 2.0, 3.5, 6.0)
SPREADS = (0.7, 3.0)
OUT = Path(__file__).with_name("results") / "auc_interval_coverage.md"


def draw(rng: np.random.Generator, questions: int, per: int, strength: float,
         spread: float = 0.7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A signal, whether each answer is correct, and its question (`spread`: the sd of the
    question effect; 3 makes a question's answers nearly all right or all wrong)."""
    effect = rng.normal(0, spread, questions)
    group = np.repeat(np.arange(questions), per)
    correct = rng.random(len(group)) < 1 / (1 + np.exp(-effect[group]))
    signal = strength * correct + 0.5 * effect[group] + rng.normal(0, 1, len(group))
    return signal, correct, group


def cell(rng: np.random.Generator, truth: float, draws: int, questions: int, per: int,
         strength: float, spread: float) -> dict[str, float]:
    """Coverage and mean width of both intervals over `draws` draws, and the share of draws
    that separate the classes perfectly."""
    held = {"pct": 0, "cp": 0}
    width = {"pct": 0.0, "cp": 0.0}
    tried = perfect = 0
    for _ in range(draws):
        signal, correct, group = draw(rng, questions, per, strength, spread)
        if correct.all() or not correct.any():
            continue
        a = auc(signal, correct)
        reps = bootstrap_aucs(signal, correct, group, N_BOOT, rng)
        if not len(reps):
            continue
        tried += 1
        perfect += a == 1.0
        pct = tuple(np.percentile(reps, [2.5, 97.5]))
        cp = auc_interval(a, reps, effective_classes(correct, group), LEVEL)
        for name, (lo, hi) in (("pct", pct), ("cp", cp)):
            held[name] += lo <= truth <= hi
            width[name] += hi - lo
    return {"tried": tried, "perfect": perfect / tried,
            **{f"{k}_cov": v / tried for k, v in held.items()},
            **{f"{k}_width": v / tried for k, v in width.items()}}


def main(draws: int = 200) -> None:
    rng = np.random.default_rng(1)
    lines = ["| question effect sd | true AUC | questions | answers each | draws | perfect "
             "| percentile: coverage | width | product: coverage | width |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    worst = 1.0
    truths: dict[tuple[float, float], float] = {}
    for spread, strength, questions, per in itertools.product(SPREADS, STRENGTHS, (10, 20, 40),
                                                              (1, 5)):
        if per == 1 and spread != SPREADS[0]:
            continue  # one answer a question: nothing for the spread to cluster
        if (spread, strength) not in truths:
            truths[spread, strength] = auc(*draw(rng, 20_000, 1, strength, spread)[:2])
        truth = truths[spread, strength]
        c = cell(rng, truth, draws, questions, per, strength, spread)
        worst = min(worst, c["cp_cov"])
        lines.append(f"| {spread} | {truth:.3f} | {questions} | {per} | {c['tried']} | "
                     f"{c['perfect']:.2f} | {c['pct_cov']:.3f} | {c['pct_width']:.3f} | "
                     f"{c['cp_cov']:.3f} | {c['cp_width']:.3f} |")
        print(lines[-1], flush=True)
    lines.append(f"\nLowest coverage of the product's interval: {worst:.3f} (stated: {LEVEL}).")
    OUT.write_text("# AUC interval coverage (`benchmarks/auc_interval_coverage.py`, "
                   f"{draws} draws a cell, {N_BOOT} resamples)\n\n" + "\n".join(lines) + "\n")
    print(lines[-1])


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
