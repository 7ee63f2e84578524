"""Measure the floor of the `semantic` Score_IR: the cosine of unrelated sentence pairs.

2,000 sentences drawn at random (seed 0) from the context paragraphs of the bundled HotpotQA
sample, embedded with the bundled MiniLM; 40,000 random pairs, of which those whose sentences
come from different questions are kept. Prints the percentiles of their cosine; FLOOR in
`ragdash/scoring/semantic.py` is the 99th percentile, rounded to two decimals.

    .venv/bin/python benchmarks/semantic_floor.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from ragdash.scoring.semantic import FLOOR, minilm

SAMPLE = Path(__file__).resolve().parent.parent / "data" / \
    "hotpot_dev_distractor_v1_subset1186.json.gz"


def main() -> None:
    with gzip.open(SAMPLE) as fh:
        data = json.load(fh)
    sentences, owner = [], []
    for q, ex in enumerate(data):
        for _title, sents in ex["context"]:
            for s in (s.strip() for s in sents):
                if len(s) > 20:
                    sentences.append(s)
                    owner.append(q)
    rng = np.random.default_rng(0)
    pick = rng.choice(len(sentences), 2000, replace=False)
    vecs = minilm()([sentences[i] for i in pick])
    a, b = rng.integers(0, 2000, 40_000), rng.integers(0, 2000, 40_000)
    keep = np.asarray(owner)[pick[a]] != np.asarray(owner)[pick[b]]
    cos = (vecs[a[keep]] * vecs[b[keep]]).sum(axis=1)
    pct = dict(zip((50, 90, 95, 99, 99.9), np.percentile(cos, [50, 90, 95, 99, 99.9]),
                   strict=True))
    print(f"{keep.sum():,} unrelated pairs: mean {cos.mean():.3f}; percentiles "
          + ", ".join(f"{k}: {v:.3f}" for k, v in pct.items()))
    print(f"FLOOR in use: {FLOOR:.2f}; share of unrelated pairs above it: "
          f"{(cos > FLOOR).mean():.2%}")


if __name__ == "__main__":
    main()
