"""Coverage of a mean's interval (`survey.mean_interval`, as the Score_IR bands, the area headline,
paired differences and every system mean use it) against the percentile bootstrap it replaced
(plain, without the exact bound it had at the range's ends), by simulation: n questions from a
known distribution on the signal's range, the true mean known. Distributions: 0/1 (the share
judged 5, exact match), a point mass at 0 else uniform (token-F1-like, rarely above 0 for small
q), Beta shapes (skewed, U-shaped, central), a nearly constant signal, and differences of two
scores in [−1, 1] with many ties. Reported per cell: the share of draws whose interval holds the
true mean, and the mean width.

    .venv/bin/python benchmarks/mean_interval_coverage.py

writes benchmarks/results/mean_interval_coverage.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ragdash.calibration.survey import mean_interval

DRAWS, N_BOOT, LEVEL = 1000, 400, 0.95
SIZES = (5, 10, 20, 60)
OUT = Path(__file__).with_name("results") / "mean_interval_coverage.md"
Draw = Callable[[np.random.Generator, int], np.ndarray]


def percentile(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean (the baseline)."""
    n = len(values)
    boots = rng.multinomial(n, np.full(n, 1 / n), size=N_BOOT) @ values / n
    lo, hi = np.quantile(boots, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def distributions() -> Iterator[tuple[str, float, Draw, tuple[float, float]]]:
    """(name, true mean, draw, range)."""
    for p in (0.01, 0.05, 0.1, 0.15, 0.2, 0.5, 0.95):
        yield f"0/1, p = {p}", p, lambda r, n, p=p: (r.random(n) < p).astype(float), (0, 1)
    for q in (0.05, 0.2, 0.5, 0.99):
        yield (f"0 or uniform, q = {q}", q / 2,
               lambda r, n, q=q: (r.random(n) < q) * r.random(n), (0, 1))
    for a, b in ((0.5, 0.5), (2, 2), (5, 1), (0.3, 3)):
        yield f"Beta({a}, {b})", a / (a + b), lambda r, n, a=a, b=b: r.beta(a, b, n), (0, 1)
    yield "0.5 ± 0.02", 0.5, lambda r, n: 0.5 + 0.04 * (r.random(n) - 0.5), (0, 1)
    for t in (0.5, 0.9):
        yield (f"difference, {t:.0%} ties", 0.1 * (1 - t),
               lambda r, n, t=t: np.where(r.random(n) < t, 0.0, r.uniform(-0.4, 0.6, n)),
               (-1, 1))
    yield ("difference of two 0-or-uniform", 0.0,
           lambda r, n: (r.random(n) < .3) * r.random(n) - (r.random(n) < .3) * r.random(n),
           (-1, 1))


def main() -> None:
    rng = np.random.default_rng(3)
    lines = ["| signal | true mean | questions | coverage | width | percentile coverage | "
             "percentile width |", "|---|---|---|---|---|---|---|"]
    worst = 1.0
    for name, mean, draw, bounds in distributions():
        for n in SIZES:
            held = held_p = 0
            width = width_p = 0.0
            for _ in range(DRAWS):
                values = draw(rng, n)
                lo, hi = mean_interval(values[:, None], bounds, LEVEL)
                held += lo[0] <= mean <= hi[0]
                width += hi[0] - lo[0]
                plo, phi = percentile(values, rng)
                held_p += plo <= mean <= phi
                width_p += phi - plo
            worst = min(worst, held / DRAWS)
            lines.append(f"| {name} | {mean:.3f} | {n} | {held / DRAWS:.3f} | "
                         f"{width / DRAWS:.3f} | {held_p / DRAWS:.3f} | {width_p / DRAWS:.3f} |")
            print(lines[-1], flush=True)
    OUT.write_text(f"# Mean interval coverage (`benchmarks/mean_interval_coverage.py`, {DRAWS} "
                   f"draws a cell, percentile with {N_BOOT} resamples, stated {LEVEL})\n\n"
                   f"Lowest coverage of `survey.mean_interval`: {worst:.3f}.\n\n"
                   + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
