"""Time the Thresholds page's slider redraw on 40,000 (question, retriever) points.

What a slider move costs in the fragment: the panel numbers
(`ragdash.analysis.threshold_panel.panel`) plus the five figures built and serialised to JSON
as `st.plotly_chart` does. The one-off preparation at a budget (`threshold_data`: sort, join
judgments, fit h and k, objective curves; cached by the page) is timed apart.

    python benchmarks/bench_thresholds_panel.py [N_QUESTIONS]   (default 8000 × 5 retrievers)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fixtures.make_run import synthetic_scores  # noqa: E402

from ragdash.analysis import threshold_panel  # noqa: E402
from ragdash.viz import calibration  # noqa: E402


def redraw(data: threshold_panel.ThresholdData, h: float, k: float) -> int:
    res = threshold_panel.panel(data, h, k)
    figs = [calibration.threshold_curves(data, res["estimated"], h, k),
            calibration.estimated_vs_actual(res["compare"]),
            calibration.confusion(res["confusion"]),
            calibration.ir_by_judge(data, h, k), calibration.objective(data, h, k)]
    return sum(len(f.to_json()) for f in figs)


def main(n_questions: int = 8000) -> None:
    ir, judgments = synthetic_scores(n_questions)
    t = time.perf_counter()
    data = threshold_panel.threshold_data(ir, judgments, 1000)
    prep = time.perf_counter() - t
    points = sum(len(v) for v in data.sorted_ir.values())
    redraw(data, 0.1, 0.6)  # warm-up (imports, plotly validators)
    times, size = [], 0
    for i in range(20):
        h, k = 0.05 + 0.01 * (i % 10), 0.5 + 0.02 * i
        t = time.perf_counter()
        size = redraw(data, h, k)
        times.append(time.perf_counter() - t)
    print(f"points: {points:,} (IR scores at N = 1000), judged pairs: {len(data.pairs):,}")
    print(f"prepare at one budget (once, cached): {prep * 1000:.0f} ms")
    print(f"slider redraw (panel numbers + 5 figures + JSON, {size / 1024:.0f} KiB): "
          f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
          f"over {len(times)} moves")
    res_t = []
    for _ in range(20):
        t = time.perf_counter()
        threshold_panel.panel(data, 0.1, 0.6)
        res_t.append(time.perf_counter() - t)
    print(f"  of which the numbers (shares, confusion, agreement): "
          f"median {statistics.median(res_t) * 1000:.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
