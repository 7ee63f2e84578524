"""Step 3, near-duplicates: a question too close to one kept before it is rejected.

Questions are embedded with the bundled MiniLM (`ragdash.embeddings`, through the embedding
cache of the runs root when one is in effect) and compared by cosine, in sample order: a
question is kept when its cosine with every question kept so far is below the threshold
(`ragdash.synth.settings.DEDUP_THRESHOLD`), else it names the kept one it repeats.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragdash.evidence.rank import Embed, minilm


def near_duplicates(questions: Sequence[str], threshold: float,
                    embed: Embed | None = None) -> list[tuple[int, float] | None]:
    """For each question in order: None when it is kept, else (index of the kept question it
    repeats, their cosine)."""
    if not questions:
        return []
    vectors = np.asarray((embed or minilm())(list(questions)), dtype=np.float32)
    kept: list[int] = []
    out: list[tuple[int, float] | None] = []
    for i, v in enumerate(vectors):
        if kept:
            cos = vectors[kept] @ v
            j = int(np.argmax(cos))
            if cos[j] >= threshold - 1e-6:
                out.append((kept[j], float(cos[j])))
                continue
        kept.append(i)
        out.append(None)
    return out
