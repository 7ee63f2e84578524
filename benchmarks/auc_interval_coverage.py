"""Coverage of the signal table's AUC interval (`ragdash.analysis.signals`: a percentile
bootstrap over questions), by simulation: 5 answers per question with question-level effects on
correctness and on the signal; the share of 150 draws whose interval holds the true AUC, at 5,
10, 20 and 40 questions. Behind `signals.MIN_QUESTIONS` (measured: 0.89 at 5, 0.94 at 10).

    .venv/bin/python benchmarks/auc_interval_coverage.py
"""

from __future__ import annotations

import numpy as np

from ragdash.analysis.signals import _bootstrap_auc, auc

DRAWS, PER_QUESTION, N_BOOT = 150, 5, 400


def draw(rng: np.random.Generator, questions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A signal, whether each answer is correct, and its question."""
    effect = rng.normal(0, 0.7, questions)  # a question is easier, and retrieves better
    group = np.repeat(np.arange(questions), PER_QUESTION)
    correct = rng.random(len(group)) < 1 / (1 + np.exp(-effect[group]))
    signal = 0.8 * correct + 0.5 * effect[group] + rng.normal(0, 1, len(group))
    return signal, correct, group


def main() -> None:
    rng = np.random.default_rng(1)
    truth = auc(*draw(rng, 20_000)[:2])
    for questions in (5, 10, 20, 40):
        held = tried = 0
        for _ in range(DRAWS):
            signal, correct, group = draw(rng, questions)
            if correct.all() or not correct.any():
                continue
            low, high = _bootstrap_auc(signal, correct, group.astype(str), N_BOOT, 0.95, rng)
            if np.isnan(low):
                continue
            tried += 1
            held += low <= truth <= high
        print(f"{questions} questions: coverage {held / tried:.3f} of {tried} draws")


if __name__ == "__main__":
    main()
