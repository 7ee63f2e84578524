"""Coverage of a system mean's interval (`curves.bootstrap_band` with the signal's range, as
`system_means` and the Score_IR bands use it), by simulation: n questions with a 0/1 signal
(the share judged 5, exact match) or a [0, 1] signal with a point mass at 0 (token F1-like:
0 with probability 1 − q, else uniform), the true mean known. Reported: the share of 1,000 draws
whose interval holds the true mean, and the share of draws at an end of the range on every
question (where the percentile band had no width).

    .venv/bin/python benchmarks/mean_interval_coverage.py

writes benchmarks/results/mean_interval_coverage.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragdash.analysis.curves import bootstrap_band

DRAWS, N_BOOT = 1000, 400
OUT = Path(__file__).with_name("results") / "mean_interval_coverage.md"


def main() -> None:
    rng = np.random.default_rng(3)
    lines = ["| signal | true mean | questions | draws all at an end | coverage |",
             "|---|---|---|---|---|"]
    for kind in ("0/1", "0 or uniform"):
        for p in (0.01, 0.05, 0.2, 0.5, 0.95, 0.99):
            mean = p if kind == "0/1" else p / 2
            for n in (10, 20, 60):
                held = ends = 0
                for _ in range(DRAWS):
                    hit = rng.random(n) < p
                    values = hit.astype(float) if kind == "0/1" else hit * rng.random(n)
                    ends += bool((values == 0).all() or (values == 1).all())
                    lo, hi = bootstrap_band(values[:, None], rng, N_BOOT, 0.95,
                                            bounds=(0.0, 1.0))
                    held += lo[0] <= mean <= hi[0]
                lines.append(f"| {kind} | {mean:.3f} | {n} | {ends / DRAWS:.2f} | "
                             f"{held / DRAWS:.3f} |")
                print(lines[-1], flush=True)
    OUT.write_text("# Mean interval coverage (`benchmarks/mean_interval_coverage.py`, "
                   f"{DRAWS} draws a cell, {N_BOOT} resamples, stated 0.95)\n\n"
                   + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
