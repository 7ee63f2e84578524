"""The `erag` section of the run specification (`ragdash.config.RunSpec.erag`): which chunks
eRAG judges, with which downstream metric and which LLM (Salemi & Zamani, SIGIR 2024, §3).

Kept free of heavy imports: `ragdash.config` composes it as it composes `metrics`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragdash.llm.settings import LLMSpec
from ragdash.params import MAX_K, MAX_QUESTIONS

METRICS = ("contains", "f1", "rouge_l")
"""The downstream metrics a chunk's output is scored with against the gold answers
(`ragdash.analysis.reference`): contains a gold answer (a binary label), SQuAD token F1 and
ROUGE-L (graded labels in [0, 1])."""
Metric = Literal["contains", "f1", "rouge_l"]
DEFAULT_MAX_K = 10
"""The default cap on the chunks judged per question and retriever (each is one LLM call)."""


class ERAGSpec(BaseModel):
    """eRAG: each retrieved chunk alone given to the generator, its output scored against the
    gold answers, the scores aggregated with IR measures (`ragdash erag`; docs/metrics.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: bool = False
    """`ragdash run` runs the stage (`ragdash erag --run-dir R` runs it on its own)."""
    k: Annotated[int, Field(ge=1, le=MAX_K)] | None = None
    """Chunks judged per question and retriever, from the top (default: each retriever's own
    k, retrievers.params.NAME.k), at most max_k."""
    max_k: Annotated[int, Field(ge=1, le=MAX_K)] = DEFAULT_MAX_K
    """The most chunks judged per question and retriever, whatever k is: each one is an LLM
    call."""
    metric: Metric = "contains"
    """The downstream metric that labels a chunk: contains (the output contains a gold answer:
    relevant or not), f1 or rouge_l (graded; relevant above 0.5)."""
    limit: Annotated[int, Field(ge=1, le=MAX_QUESTIONS)] | None = None
    """Judge the chunks of the first N questions only."""
    llm: LLMSpec | None = None
    """The LLM given each chunk (default: the generator's, generation.llm, else the run's
    `llm`: eRAG asks the downstream model itself)."""

    def depth(self, retriever_k: int) -> int:
        """The chunks judged for a retriever that keeps `retriever_k`: `k` (default
        `retriever_k`), at most `max_k`."""
        return min(self.k or retriever_k, self.max_k)
