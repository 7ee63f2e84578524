"""eRAG's calls as data (Salemi & Zamani, SIGIR 2024, §3.1): one item per chunk a retriever
ranked within the top k for a question, each asked alone with the generator's own prompt
(`ragdash.llm.prompts.generation_messages` with a one-chunk context). The same question and
chunk from two retrievers is one prompt, so one call (`ragdash.llm.generate.generation_plan`).
What a run sends (`evaluate`) and a dry run prices (`ragdash.stages.erag.plan`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import pandas as pd

from ragdash.analysis.reference import gold_answers
from ragdash.llm.generate import GenerationPlan, GenerationRequest, generation_plan


class ChunkItem(NamedTuple):
    """One chunk to judge: the question, the retriever (`system`), the chunk's rank (1 = top)
    and its text."""

    qid: str
    system: str
    rank: int
    chunk_id: str
    question: str
    text: str


def has_gold(golds: Iterable[object]) -> bool:
    """Whether a question has a gold answer to score outputs against."""
    return any(isinstance(g, str) and g.strip() for g in golds)


def chunk_items(examples: pd.DataFrame, retrieved: pd.DataFrame, chunks: pd.DataFrame,
                depth: Mapping[str, int], limit: int | None = None) -> list[ChunkItem]:
    """The chunks at rank <= depth[retriever] of every retriever in `depth` (in its order) for
    the first `limit` questions, question by question. A question without a gold answer is left
    out: no metric could score what the LLM makes of its chunks."""
    golds = gold_answers(examples)
    qids = [q for q in examples["qid"].astype(str).tolist()[: limit or None]
            if has_gold(golds.get(q, ()))]
    question = dict(zip(examples["qid"].astype(str), examples["question"].astype(str),
                        strict=True))
    text = dict(zip(chunks["chunk_id"].astype(str), chunks["text"].astype(str), strict=True))
    r = retrieved.assign(qid=retrieved["qid"].astype(str))
    r = r[r["qid"].isin(set(qids)) & r["retriever"].isin(set(depth))]
    r = r.assign(pos=r.groupby(["qid", "retriever"])["rank"].rank(method="first").astype(int))
    r = r[r["pos"] <= r["retriever"].map(depth)]
    order = {q: i for i, q in enumerate(qids)}
    systems = {s: i for i, s in enumerate(depth)}
    r = r.sort_values(["qid", "retriever", "pos"],
                      key=lambda c: c.map(order) if c.name == "qid"
                      else c.map(systems) if c.name == "retriever" else c)
    return [ChunkItem(q, s, int(p), str(c), question[q], text[str(c)])
            for q, s, p, c in zip(r["qid"], r["retriever"], r["pos"], r["chunk_id"],
                                  strict=True)]


def erag_plan(items: Iterable[ChunkItem], *, reference_prompts: bool = False,
              prompt: str = "paper") -> GenerationPlan:
    """The calls of `items`: the generation prompt with each chunk as the only document, one
    call per distinct prompt (`GenerationPlan.slots` maps each item to its call)."""
    return generation_plan([GenerationRequest(i.qid, i.system, None, i.question, i.text)
                            for i in items], reference_prompts=reference_prompts, prompt=prompt)
