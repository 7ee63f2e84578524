"""The paper's values, labels and system names, in one place (El Yagouby, Chevallet & Gaussier,
2024). Nothing here imports anything from ragdash."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

PROJECT_ROOT = Path(__file__).resolve().parent.parent

LLM_ONLY = "llm_only"
"""The system that answers without retrieved documents (the paper's "LLM only", §3.2)."""

PAPER_RETRIEVERS = ("bm25", "sim", "mmr", "reo", "mlq")
"""The paper's retrievers in its table order (§3.1)."""

MLQ_MODES = ("default", "reference")
"""The multi-query retriever's modes: default (the original question searched too, fused by
rank) or the paper's code (§3.1, MLQ); each has its sub-question prompt."""

def label(name: str) -> str:
    """Display name of a system: 'LLM only', the paper's retrievers in capitals ('BM25', 'SIM',
    ...), any other (a user's own system or live retriever) as its owner named it."""
    if name == LLM_ONLY:
        return "LLM only"
    return str(name).upper() if name in PAPER_RETRIEVERS else str(name)


PAPER_SYSTEMS = (LLM_ONLY, *PAPER_RETRIEVERS)
"""The systems judged in the paper: the LLM alone, then each retriever (§3.2, Table 3.3)."""

PAPER_H, PAPER_K = 0.105, 0.67
"""The thresholds the paper fits on its data at N = 1000 (§3.3)."""

SCORES = (1, 2, 3, 4, 5)
SCORE_LABELS = {1: "1 · not enough information", 2: "2 · partly correct, some errors",
                3: "3 · partly correct, incomplete", 4: "4 · incorrect", 5: "5 · correct"}
"""The judge's 1-5 scale (§2.3)."""

CLASSES = ("1", "2-4", "5")
CLASS_LABELS = {"1": "lacks information", "2-4": "risk of hallucination", "5": "correct"}
"""The three outcome classes the thresholds predict (§3.3): IR < h -> 1, IR > k -> 5."""

DEFAULT_TOKENIZER = "llama3"
"""The tokenizer that counts the N tokens of C_N by default (the paper's Llama 3)."""

DEFAULT_SCORING_MODE = "corrected"
"""Score_IR's default mode (`reference`: the paper's code as published)."""

DEFAULT_SCORING_METHOD = "substring"
"""How Score_IR matches a relevant part in C_N by default: the longest common substring, as the
paper's code does (`ragdash.scoring.METHODS`)."""

LLM_CACHE, INDEX_CACHE, EMBEDDING_CACHE = "_llm_cache.sqlite", "_index_cache", \
    "_embedding_cache.sqlite"
UPLOADS, DATASETS = "_uploads", "_datasets"
"""The names of the places the runs under one runs root share (`ragdash.rundir.root.RunsRoot`
gives their paths), here where the lowest layer (the embedding cache) can reach them."""

BUNDLED_RUNS = ("data/demo_squad", "data/demo_run")
"""The demo runs shipped with ragdash, relative to `PROJECT_ROOT` (the dashboard's default runs,
and the latencies a local model's first time estimate rests on, `ragdash.llm.speed`)."""


class ReferenceMetric(NamedTuple):
    """A reference metric of an answer against the gold answers (no LLM): its display name and
    the value from which the answer counts as correct (agreement with the judge, stand-in
    labels). The cut-offs below 1 are conventions, not fitted on any data."""

    label: str
    correct_at: float

    def named(self) -> str:
        """'exact match', 'token F1 ≥ 0.5'."""
        return self.label if self.correct_at >= 1 else f"{self.label} ≥ {self.correct_at:g}"


REFERENCE_METRICS = {
    "contains": ReferenceMetric("contains a gold answer", 1.0),
    "em": ReferenceMetric("exact match", 1.0),
    "f1": ReferenceMetric("token F1", 0.5),
    "rouge_l": ReferenceMetric("ROUGE-L", 0.5),
    "similarity": ReferenceMetric("meaning (MiniLM cosine)", 0.7),
}
"""The reference metrics, in display order (`ragdash.analysis.reference` computes them): SQuAD's
exact match, token F1 and contains for short answers; ROUGE-L and the cosine of MiniLM embeddings
for long answers written in other words."""
