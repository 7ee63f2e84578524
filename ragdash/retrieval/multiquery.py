"""MLQ: multi-query retrieval as LangChain's `MultiQueryRetriever` does it — an LLM decomposes
the question, each sub-question is searched with `sim`, and the results are fused.

The LLM is not called here: the retriever is given `ask`, which returns the LLM's reply to the
sub-question prompt of each question (the retrieve stage passes `ragdash.llm.decompose`, so the
calls go through the reply cache, the retries and the cost estimate); the replies are parsed here.

Default (corrected) behaviour: the original question is searched too, empty, numbering-only and
preamble lines ("Here are the sub-questions:") are dropped, and the per-query rankings are merged
by reciprocal-rank fusion so that every sub-question contributes to the k chunks kept.

`mode="reference"` reproduces the paper's code (§3.1, MLQ): decomposition prompt with worked
examples, lines split on newlines and stripped with empty lines *kept* as queries, no original
question, unique union in query order, truncated to k (in practice the sim top-k of the first line).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from ragdash.constants import MLQ_MODES as MODES
from ragdash.embeddings import DEFAULT_MODEL
from ragdash.retrieval.base import Retriever, searched
from ragdash.retrieval.dense import build_vectorstore

Ask = Callable[[Sequence[str]], list[str]]
"""The LLM's reply to the sub-question prompt of each question, in order."""

_PREAMBLE = re.compile(r"^(here (are|is)|sure|certainly|decomposition|sub-?questions?)\b", re.I)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|q\d+[:.])\s*", re.I)


def parse_queries(text: str, max_queries: int = 5) -> list[str]:
    """Sub-questions from an LLM reply: one per line, without bullets, blanks or preambles."""
    out = []
    for line in text.strip().splitlines():
        line = _BULLET.sub("", line).strip().strip('"').strip()
        if not line or line.endswith(":") or _PREAMBLE.match(line):
            continue
        if line not in out:
            out.append(line)
    return out[:max_queries]


def parse_queries_reference(text: str) -> list[str]:
    """The paper's parser: strip, split on newlines, strip each line; empty lines are kept."""
    return [line.strip() for line in text.strip().split("\n")]


def rrf(rankings: list[list[tuple[str, float]]], k: int, c: int = 60) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of several rankings; ties keep first-seen order."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for r, (docno, _) in enumerate(ranking):
            fused[docno] = fused.get(docno, 0.0) + 1.0 / (c + r + 1)
    return sorted(fused.items(), key=lambda kv: -kv[1])[:k]


class MultiQuery(Retriever):
    """Multi-query retrieval: `ask` gives the LLM's sub-question replies (see the module)."""

    name = "mlq"
    embeds = True

    def __init__(self, chunks: pd.DataFrame, cache_dir: Path, ask: Ask | None = None, k: int = 5,
                 per_query_k: int = 10, mode: str = "default", max_queries: int = 5,
                 model: str = DEFAULT_MODEL):
        super().__init__(k)
        if mode not in MODES:
            raise ValueError(f"mlq: unknown mode '{mode}' (use default or reference)")
        if ask is None:
            raise ValueError("mlq needs an LLM to write its sub-questions; none was configured")
        self.ask, self.mode, self.max_queries = ask, mode, max_queries
        self.per_query = build_vectorstore(chunks, cache_dir, model).as_retriever(
            search_kwargs={"k": searched(per_query_k, len(chunks))})
        self.generated: dict[str, list[str]] = {}

    def _parse(self, reply: str) -> list[str]:
        if self.mode == "reference":
            return parse_queries_reference(reply)
        return parse_queries(reply, self.max_queries)

    def _ids(self, query: str) -> list[str]:
        return [d.metadata["chunk_id"] for d in self.per_query.invoke(query)]

    def _one(self, question: str, queries: list[str]) -> list[tuple[str, float]]:
        if self.mode == "reference":  # MultiQueryRetriever's unique union, in query order
            ids = list(dict.fromkeys(c for q in queries for c in self._ids(q)))[: self.k]
            return [(c, float(self.k - i)) for i, c in enumerate(ids)]
        return rrf([[(c, 0.0) for c in self._ids(q)] for q in [question, *queries]], self.k)

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        replies = self.ask(queries)
        out = []
        for question, reply in zip(queries, replies, strict=True):
            self.generated[question] = self._parse(reply)
            out.append(self._one(question, self.generated[question]))
        return out
