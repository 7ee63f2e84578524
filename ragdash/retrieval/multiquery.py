"""MLQ: LangChain `MultiQueryRetriever` — an LLM decomposes the question, each sub-question is
searched with `sim`, and the results are fused.

Default (corrected) behaviour: the original question is searched too, empty, numbering-only and
preamble lines ("Here are the sub-questions:") are dropped, and the per-query rankings are merged
by reciprocal-rank fusion so that every sub-question contributes to the k chunks kept.

`mode="reference"` reproduces the paper's code (§3.1, MLQ): decomposition prompt with worked
examples, lines split on newlines and stripped with empty lines *kept* as queries, no original
question, unique union in query order, truncated to k (in practice the sim top-k of the first line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ragdash.embeddings import DEFAULT_MODEL
from ragdash.retrieval.base import Retriever
from ragdash.retrieval.dense import build_vectorstore

MODES = ("default", "reference")
"""default: the original question searched too, fused by rank; reference: the paper's code."""

# Chat-form few-shot prompt: small local models follow turns far better than one long message.
DECOMPOSE_MESSAGES = [
    ("system", "You split a complex question into the simple factual questions needed to answer "
               "it. Reply with one question per line (at most {max_queries}) and nothing else."),
    ("human", "Which was founded first, the University of Oslo or the University of Helsinki?"),
    ("ai", "When was the University of Oslo founded?\nWhen was the University of Helsinki "
           "founded?"),
    ("human", "Who directed the film that won the Academy Award for Best Picture in 1998?"),
    ("ai", "Which film won the Academy Award for Best Picture in 1998?\nWho directed the 1998 "
           "Best Picture winner?"),
    ("human", "{question}"),
]

# The paper's prompt structure (task, instructions, worked examples, "Your Task"), reworded.
REFERENCE_PROMPT = """You are an expert at decomposing complex questions into simpler component \
questions.

Instructions: Break the complex question into simpler questions. Answering them should give \
all the information needed to answer the original question.

Example 1:
Complex Question: "Which is older, Real Madrid or FC Barcelona?"
Decomposition:

When was Real Madrid founded?
When was FC Barcelona founded?

Example 2:
Complex Question: "Which is longer, the Amazon or the Nile?"
Decomposition:

How long is the Amazon river?
How long is the Nile river?

Example 3:
Complex Question: "Who won more Nobel prizes, Marie Curie or Albert Einstein?"
Decomposition:

How many Nobel prizes did Marie Curie win?
How many Nobel prizes did Albert Einstein win?

Your Task:
Decompose the following complex question: "{question}"
Give only the questions, one per line, with no additional text.
"""

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
    """Multi-query retrieval with an LLM (any LangChain chat model)."""

    name = "mlq"
    embeds = True

    def __init__(self, chunks: pd.DataFrame, cache_dir: Path, llm, k: int = 5,
                 per_query_k: int = 10, mode: str = "default", max_queries: int = 5,
                 model: str = DEFAULT_MODEL, progress: Callable[[int, int], None] | None = None):
        super().__init__(k)
        if mode not in MODES:
            raise ValueError(f"mlq: unknown mode '{mode}' (use default or reference)")
        if llm is None:
            raise ValueError("mlq needs an LLM (a LangChain chat model); none was configured")
        from langchain_classic.retrievers.multi_query import MultiQueryRetriever
        from langchain_core.output_parsers import StrOutputParser
        from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
        from langchain_core.runnables import RunnableLambda

        self.mode, self.per_query_k, self.progress = mode, per_query_k, progress
        store = build_vectorstore(chunks, cache_dir, model)
        if mode == "reference":
            prompt = PromptTemplate.from_template(REFERENCE_PROMPT)
            parser = RunnableLambda(parse_queries_reference)
        else:
            prompt = ChatPromptTemplate.from_messages(DECOMPOSE_MESSAGES).partial(
                max_queries=str(max_queries))
            parser = RunnableLambda(lambda t: parse_queries(t, max_queries))
        self.mqr = MultiQueryRetriever(
            retriever=store.as_retriever(search_kwargs={"k": per_query_k}),
            llm_chain=prompt | llm | StrOutputParser() | parser,
            include_original=(mode == "default"),
        )
        self.generated: dict[str, list[str]] = {}

    def _one(self, question: str) -> list[tuple[str, float]]:
        from langchain_core.callbacks import CallbackManagerForRetrieverRun

        run = CallbackManagerForRetrieverRun.get_noop_manager()
        queries = self.mqr.generate_queries(question, run)
        self.generated[question] = list(queries)
        if self.mode == "reference":
            docs = self.mqr.unique_union(self.mqr.retrieve_documents(queries, run))[: self.k]
            return [(d.metadata["chunk_id"], float(self.k - i)) for i, d in enumerate(docs)]
        rankings = [[(d.metadata["chunk_id"], 0.0) for d in self.mqr.retriever.invoke(q)]
                    for q in [question, *queries]]
        return rrf(rankings, self.k)

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        out = []
        for i, q in enumerate(queries):
            out.append(self._one(q))
            if self.progress:
                self.progress(i + 1, len(queries))
        return out
