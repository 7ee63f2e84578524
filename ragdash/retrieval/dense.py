"""Dense retrievers over one exact FAISS index of normalised all-MiniLM-L6-v2 chunk embeddings.

- `sim`: exact inner-product search (= cosine on unit vectors), top k.
- `mmr`: LangChain maximal marginal relevance (fetch_k candidates, lambda_mult trade-off).
- `reo`: the sim top k reordered by LangChain `LongContextReorder` (best chunk last).

The index is stored with `faiss.write_index` plus a Parquet list of chunk ids (no pickle), and
wrapped in a LangChain `FAISS` vector store in memory.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.embeddings import DEFAULT_MODEL, get_embedder
from ragdash.retrieval.base import Retriever, cached_build, corpus_fingerprint, index_key


def build_vectorstore(chunks: pd.DataFrame, cache_dir: Path, model: str = DEFAULT_MODEL):
    """A LangChain FAISS store over the chunks, built once per corpus and model, then cached."""
    key = index_key("faiss", corpus_fingerprint(chunks), {"model": model})
    return _load_vectorstore(str(cached_build(cache_dir, key, _builder(chunks, model))),
                             model)


def _builder(chunks: pd.DataFrame, model: str):
    def build(path: Path) -> None:
        import faiss

        texts = chunks["text"].tolist()
        vectors = np.asarray(get_embedder(model).embed_documents(texts), dtype=np.float32)
        index = faiss.IndexFlatIP(vectors.shape[1] if len(vectors) else 384)
        if len(vectors):
            index.add(vectors)
        faiss.write_index(index, str(path / "index.faiss"))
        chunks[["chunk_id", "text"]].to_parquet(path / "docs.parquet", index=False)

    return build


@lru_cache(maxsize=4)
def _load_vectorstore(path: str, model: str):
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy
    from langchain_core.documents import Document

    index = faiss.read_index(str(Path(path) / "index.faiss"))
    docs = pd.read_parquet(Path(path) / "docs.parquet")
    ids = docs["chunk_id"].astype(str).tolist()
    store = InMemoryDocstore({
        cid: Document(page_content=text, metadata={"chunk_id": cid}, id=cid)
        for cid, text in zip(ids, docs["text"], strict=True)
    })
    return FAISS(
        embedding_function=get_embedder(model),
        index=index,
        docstore=store,
        index_to_docstore_id=dict(enumerate(ids)),
        distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
        normalize_L2=False,
    )


class _Dense(Retriever):
    embeds = True

    def __init__(self, chunks: pd.DataFrame, cache_dir: Path, k: int = 10,
                 model: str = DEFAULT_MODEL):
        super().__init__(k)
        self.model = model
        self.store = build_vectorstore(chunks, cache_dir, model)

    def embed(self, queries: list[str]) -> list[list[float]]:
        return self.store.embedding_function.embed_documents(queries)

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        return [self.search_vector(v) for v in self.embed(queries)]

    def search_vector(self, vector: list[float]) -> list[tuple[str, float]]:
        raise NotImplementedError


class Sim(_Dense):
    """Exact cosine similarity search, top k."""

    name = "sim"

    def search_vector(self, vector):
        hits = self.store.similarity_search_with_score_by_vector(vector, k=self.k)
        return [(d.metadata["chunk_id"], float(s)) for d, s in hits]


class MMR(_Dense):
    """LangChain maximal marginal relevance: fetch_k nearest, then k diverse ones."""

    name = "mmr"

    def __init__(self, chunks, cache_dir, k: int = 10, fetch_k: int = 20,
                 lambda_mult: float = 0.5, model: str = DEFAULT_MODEL):
        if fetch_k < k:
            raise ValueError(f"mmr: fetch_k ({fetch_k}) must be >= k ({k})")
        if not 0.0 <= lambda_mult <= 1.0:
            raise ValueError(f"mmr: lambda_mult must be in [0, 1], got {lambda_mult}")
        super().__init__(chunks, cache_dir, k, model)
        self.fetch_k, self.lambda_mult = fetch_k, lambda_mult

    def search_vector(self, vector):
        hits = self.store.max_marginal_relevance_search_with_score_by_vector(
            vector, k=self.k, fetch_k=self.fetch_k, lambda_mult=self.lambda_mult)
        return [(d.metadata["chunk_id"], float(s)) for d, s in hits]


class Reorder(Sim):
    """The sim top k reordered by LongContextReorder: ranks 1..10 become [2,4,6,8,10,9,7,5,3,1]."""

    name = "reo"

    def search_vector(self, vector):
        from langchain_community.document_transformers import LongContextReorder
        from langchain_core.documents import Document

        ranked = super().search_vector(vector)
        docs = [Document(page_content=c, metadata={"score": s}) for c, s in ranked]
        return [(d.page_content, d.metadata["score"])
                for d in LongContextReorder().transform_documents(docs)]
