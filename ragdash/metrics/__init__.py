"""RAGAS and RAGChecker metrics of a run's answers, computed with the run's own LLM.

Why our own implementation: `pip install --dry-run ragas` (0.4.3) against ragdash's pinned
environment would downgrade openai (3.x to 1.109), rich and tenacity, and `ragchecker` (0.1.9,
with refchecker 0.2) would downgrade transformers, tokenizers, plotly and python-dateutil; so
the published definitions are implemented here, going through ragdash's LLM layer (reply cache,
retries, executor, cost estimate). docs/metrics.md gives the check, and the agreement with the
real ragas (in its own virtualenv, `benchmarks/ragas_agreement.py`).

- RAGAS (Es et al. 2024, "RAGAS: Automated Evaluation of Retrieval Augmented Generation", and
  the ragas documentation): `faithfulness`, `answer_relevancy`, `context_precision`,
  `context_recall` (`ragas.py`).
- RAGChecker (Ru et al. 2024, "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-
  Augmented Generation", Table 1): claim-level precision, recall, F1, the retriever's claim
  recall and context precision, and the generator's faithfulness, hallucination,
  self-knowledge, context utilisation and noise sensitivity (`ragchecker.py`).

This module is the catalogue (names, framework, what each needs) and imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STEPS = ("answer_claims", "gold_claims", "precision_check", "recall_check", "chunk_check",
         "nli", "questions", "chunk_useful", "recall_attribution")
"""The LLM steps of one answer (`calls.AnswerTask`): claims of the answer and of the gold answer,
the answer's claims against the gold answer, the gold claims against the answer, all claims
against each retrieved chunk (RAGChecker); the answer's claims against the whole context,
questions generated from the answer, each chunk's usefulness, the gold answer's sentences
against the context (RAGAS)."""


@dataclass(frozen=True)
class Metric:
    """One metric: its column, framework, the LLM steps it reads, and whether it needs a
    retrieved context (NaN without an error for the LLM-only answers)."""

    name: str
    framework: str  # ragas or ragchecker
    steps: tuple[str, ...]
    about: str
    context: bool = True
    parts: bool = False  # a chunk is relevant when it holds a gold relevant part (ragdash)
    lower_better: bool = False  # a share of wrong claims: the better answer has less


_RC_GEN = ("answer_claims", "gold_claims", "precision_check", "chunk_check")
CATALOGUE: tuple[Metric, ...] = (
    Metric("faithfulness", "ragas", ("answer_claims", "nli"),
           "share of the answer's claims the retrieved context supports"),
    Metric("answer_relevancy", "ragas", ("questions",),
           "mean cosine (MiniLM) of questions generated from the answer with the question; 0 "
           "for a noncommittal answer", context=False),
    Metric("context_precision", "ragas", ("chunk_useful",),
           "average precision of the chunks, in rank order, judged useful to reach the gold "
           "answer"),
    Metric("context_recall", "ragas", ("recall_attribution",),
           "share of the gold answer's sentences attributable to the retrieved context"),
    Metric("claim_precision", "ragchecker", ("answer_claims", "precision_check"),
           "share of the answer's claims entailed by the gold answer", context=False),
    Metric("claim_recall", "ragchecker", ("gold_claims", "recall_check"),
           "share of the gold answer's claims entailed by the answer", context=False),
    Metric("claim_f1", "ragchecker", ("answer_claims", "gold_claims", "precision_check",
                                      "recall_check"),
           "harmonic mean of claim precision and claim recall", context=False),
    Metric("retriever_claim_recall", "ragchecker", ("gold_claims", "chunk_check"),
           "share of the gold claims entailed by some retrieved chunk"),
    Metric("rc_context_precision", "ragchecker", ("gold_claims", "chunk_check"),
           "share of the retrieved chunks that entail a gold claim (relevant, RAGChecker)"),
    Metric("rc_context_precision_parts", "ragchecker", (),
           "share of the retrieved chunks that hold a gold relevant part (relevant, ragdash)",
           parts=True),
    Metric("context_utilization", "ragchecker", ("gold_claims", "recall_check", "chunk_check"),
           "of the gold claims the chunks entail, the share the answer entails too"),
    Metric("noise_sensitivity_relevant", "ragchecker", _RC_GEN,
           "share of the answer's claims that are wrong and entailed by a relevant chunk",
           lower_better=True),
    Metric("noise_sensitivity_irrelevant", "ragchecker", _RC_GEN,
           "share of the answer's claims that are wrong and entailed only by irrelevant chunks",
           lower_better=True),
    Metric("noise_sensitivity_relevant_parts", "ragchecker", _RC_GEN[:1] + _RC_GEN[2:],
           "noise_sensitivity_relevant with a chunk relevant when it holds a relevant part",
           parts=True, lower_better=True),
    Metric("noise_sensitivity_irrelevant_parts", "ragchecker", _RC_GEN[:1] + _RC_GEN[2:],
           "noise_sensitivity_irrelevant with a chunk relevant when it holds a relevant part",
           parts=True, lower_better=True),
    Metric("hallucination", "ragchecker", _RC_GEN[:1] + _RC_GEN[2:],
           "share of the answer's claims that are wrong and entailed by no chunk",
           lower_better=True),
    Metric("self_knowledge", "ragchecker", _RC_GEN[:1] + _RC_GEN[2:],
           "share of the answer's claims that are correct and entailed by no chunk"),
    Metric("rc_faithfulness", "ragchecker", ("answer_claims", "chunk_check"),
           "share of the answer's claims entailed by some chunk"),
)
METRICS: dict[str, Metric] = {m.name: m for m in CATALOGUE}
FRAMEWORKS = ("ragas", "ragchecker")
GROUPS = ("all", *FRAMEWORKS)


def resolve(use: Iterable[str] | str | None) -> list[str]:
    """The metric names `use` selects, in catalogue order: names, `ragas`, `ragchecker` or
    `all` (a comma-separated string accepted; None: all); ValueError for an unknown name."""
    if use is None:
        return list(METRICS)
    if isinstance(use, str):
        use = [u.strip() for u in use.split(",") if u.strip()]
    wanted: set[str] = set()
    for u in use:
        if not isinstance(u, str) or (u not in METRICS and u not in GROUPS):
            raise ValueError(f"unknown metric {u!r}; metrics: {', '.join(METRICS)} (or "
                             f"{', '.join(GROUPS)})")
        wanted |= ({m.name for m in CATALOGUE if u in ("all", m.framework)} if u in GROUPS
                   else {u})
    if not wanted:
        raise ValueError("metrics.use selects no metric")
    return [m for m in METRICS if m in wanted]


def steps_for(names: Iterable[str]) -> tuple[str, ...]:
    """The LLM steps the metrics read, in STEPS order."""
    need = {s for n in names for s in METRICS[n].steps}
    return tuple(s for s in STEPS if s in need)
