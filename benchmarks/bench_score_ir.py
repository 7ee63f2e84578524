"""Benchmark: `part_scores` against the original brute force, on the bundled sample's contexts.

Contexts are the 10 paragraphs of each HotpotQA question joined with one space (what a 10-chunk
retriever returns), parts are its supporting facts, budgets N = 100..1000 cut with the Llama-3
tokenizer. Both methods score the same (context, cuts) inputs in this process; the script checks
the scores are identical and prints the speed ratio, then the end-to-end rate of the score stage
(tokenizing included) in contexts per second.

    .venv/bin/python benchmarks/bench_score_ir.py [--questions 40] [--all 1186]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.budget import DEFAULT_BUDGETS, cuts_from_ends, get_tokenizer
from ragdash.scoring import brute_force_part_scores, part_scores
from ragdash.scoring.contexts import score_contexts

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "hotpot_dev_distractor_v1_subset1186.json.gz"


def load_cases(n: int) -> list[tuple[str, str, list[str]]]:
    with gzip.open(SAMPLE) as f:
        records = json.load(f)[:n]
    cases = []
    for r in records:
        paras = {title: sents for title, sents in r["context"]}
        parts = [paras[t][i] for t, i in r["supporting_facts"]
                 if t in paras and i < len(paras[t]) and paras[t][i]]
        context = " ".join("".join(sents) for _, sents in r["context"])
        cases.append((r["_id"], context, parts))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=40, help="questions timed with brute force")
    ap.add_argument("--all", type=int, default=1186, help="questions for the end-to-end rate")
    args = ap.parse_args()

    tok = get_tokenizer("llama3")
    budgets = list(DEFAULT_BUDGETS)
    cases = load_cases(args.questions)
    ends = tok.token_ends([c for _, c, _ in cases])
    inputs = [(parts, ctx, cuts_from_ends(e, budgets, len(ctx)))
              for (_, ctx, parts), e in zip(cases, ends, strict=True)]
    part_scores(["warm"], "up the compiled kernel", [5])

    t0 = time.perf_counter()
    slow = [brute_force_part_scores(p, c, k) for p, c, k in inputs]
    t_slow = time.perf_counter() - t0

    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        fast = [part_scores(p, c, k) for p, c, k in inputs]
    t_fast = (time.perf_counter() - t0) / reps

    identical = all(np.array_equal(a, b) for a, b in zip(fast, slow, strict=True))
    n = len(inputs)
    print(f"inputs: {n} HotpotQA contexts (mean {np.mean([len(c) for _, c, _ in inputs]):.0f} "
          f"chars), {sum(len(p) for p, _, _ in inputs)} parts, {len(budgets)} budgets each")
    print(f"brute force (original code): {t_slow / n * 1000:9.2f} ms per context")
    print(f"part_scores (suffix automaton): {t_fast / n * 1000:6.3f} ms per context")
    print(f"speed-up: {t_slow / t_fast:,.0f}x   identical scores: {identical}")
    if not identical:
        raise SystemExit("scores differ from the brute force")

    all_cases = load_cases(args.all)
    ctx = pd.DataFrame({"qid": [q for q, _, _ in all_cases], "retriever": "bench",
                        "context": [c for _, c, _ in all_cases]})
    parts = {q: p for q, _, p in all_cases}
    t0 = time.perf_counter()
    ir = score_contexts(ctx, parts, budgets, "llama3", "substring", "corrected")
    dt = time.perf_counter() - t0
    print(f"end to end (tokenize + cut + score, {len(ctx)} contexts x {len(budgets)} budgets): "
          f"{len(ctx) / dt:,.0f} contexts/s ({dt:.2f} s); mean Score_IR@1000 = "
          f"{ir[ir.budget == 1000].score.mean():.3f}")
    full = 7405 * 5
    print(f"=> the full HotpotQA dev set x 5 retrievers ({full:,} contexts) in about "
          f"{full / (len(ctx) / dt):.0f} s")


if __name__ == "__main__":
    main()
