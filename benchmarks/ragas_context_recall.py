"""Times RAGAS NonLLMContextRecall on contexts exported by bench_scoring.py.

Runs in a virtualenv that has ragas (ragas cannot share ragdash's: it pins an older openai), so it
imports nothing from ragdash. Each context is scored with the metric's public async API,
`NonLLMContextRecall().single_turn_ascore(SingleTurnSample(retrieved_contexts=chunks,
reference_contexts=parts))`, one event loop for all contexts, `--reps` times; the same loop is
also timed with rapidfuzz alone (the Levenshtein similarity RAGAS computes, without its
framework), to show where its time goes.

    /tmp/ragas-venv/bin/python benchmarks/ragas_context_recall.py contexts.parquet out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import warnings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("contexts", help="parquet with list columns `chunks` and `parts`")
    ap.add_argument("out", help="JSON file for the timings and scores")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()

    import pandas as pd
    import ragas
    from rapidfuzz.distance import Levenshtein

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import NonLLMContextRecall

    frame = pd.read_parquet(args.contexts)
    rows = [([str(c) for c in ch], [str(p) for p in pa])
            for ch, pa in zip(frame["chunks"], frame["parts"], strict=True)]
    metric = NonLLMContextRecall()

    async def score_all() -> list[float]:
        return [await metric.single_turn_ascore(SingleTurnSample(
            retrieved_contexts=chunks, reference_contexts=parts)) for chunks, parts in rows]

    def rapidfuzz_only() -> list[float]:  # NonLLMContextRecall's arithmetic, nothing else
        out = []
        for chunks, parts in rows:
            best = [max(1 - Levenshtein.normalized_distance(c, p) for c in chunks)
                    for p in parts]
            out.append(sum(b > metric.threshold for b in best) / len(best))
        return out

    scores = asyncio.run(score_all())  # warm-up, and the scores
    if rapidfuzz_only() != scores:
        raise SystemExit("rapidfuzz alone does not reproduce NonLLMContextRecall")
    ragas_s, fuzz_s = [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        asyncio.run(score_all())
        ragas_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rapidfuzz_only()
        fuzz_s.append(time.perf_counter() - t0)
    with open(args.out, "w") as f:
        json.dump({"ragas": ragas.__version__, "contexts": len(rows), "ragas_s": ragas_s,
                   "rapidfuzz_s": fuzz_s, "scores": scores}, f)


if __name__ == "__main__":
    main()
