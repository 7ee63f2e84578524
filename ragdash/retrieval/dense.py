"""Dense retrievers over a FAISS index of normalised all-MiniLM-L6-v2 chunk embeddings.

- `sim`: inner-product search (= cosine on unit vectors), top k.
- `mmr`: LangChain maximal marginal relevance (fetch_k candidates, lambda_mult trade-off).
- `reo`: the sim top k reordered by LangChain `LongContextReorder` (best chunk last).

`index`: "exact" (a flat index, the paper's search) or, for large corpora, an approximate one
built from the same vectors: "hnsw" (graph, INDEXES["hnsw"]) or "ivf" (k-means cells, nprobe of
them searched). `index_recall` measures an approximate index against exact search.

Indexes are stored with `faiss.write_index` plus a Parquet list of chunk ids (no pickle), and
wrapped in a LangChain `FAISS` vector store in memory.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.embeddings import DEFAULT_MODEL, current_settings, get_embedder
from ragdash.retrieval.base import (
    Retriever,
    cached_build,
    corpus_fingerprint,
    index_key,
    searched,
)
from ragdash.retrieval.choices import INDEXES, LONG_CHUNKS
from ragdash.retrieval.long_chunks import embed_whole

Embed = Callable[[list[str]], Sequence]
"""Texts to their vectors (one row each, in order)."""



def check_index(kind: object) -> str:
    """`kind` if it names an index kind, else ValueError listing them."""
    if kind not in INDEXES:
        raise ValueError(f"index must be one of {', '.join(INDEXES)}, not {kind!r}")
    return str(kind)


def build_vectorstore(chunks: pd.DataFrame, cache_dir: Path, model: str = DEFAULT_MODEL,
                      index: str = "exact", embed: Embed | None = None,
                      long_chunks: str = "truncate"):
    """A LangChain FAISS store over the chunks, built once per corpus, model, embedding
    precision, handling of long chunks (`ragdash.retrieval.long_chunks`) and index kind, then
    cached. An approximate index is built from the vectors of the exact one (so both search
    the same embeddings). `embed` (texts -> vectors) replaces the model's own call when the
    index is built, e.g. to embed in batches on a cluster."""
    check_index(index)
    if long_chunks not in LONG_CHUNKS:
        raise ValueError(f"long_chunks must be one of {', '.join(LONG_CHUNKS)}, "
                         f"not {long_chunks!r}")
    corpus = corpus_fingerprint(chunks)
    precision = current_settings().precision
    params = {"model": model, **({} if precision == "fp32" else {"precision": precision}),
              **({} if long_chunks == "truncate" else {"long_chunks": long_chunks})}
    if long_chunks == "windows":
        embed = partial(embed_whole, model=model, embed=embed or get_embedder(model)
                        .embed_documents)
    exact = cached_build(cache_dir, index_key("faiss", corpus, params),
                         _builder(chunks, model, embed))
    if index == "exact":
        return _load_vectorstore(str(exact), model)
    approx = cached_build(cache_dir, index_key(f"faiss-{index}", corpus,
                                               {**params, "index": INDEXES[index]}),
                          _approximate(exact, index))
    return _load_vectorstore(str(approx), model)


def _builder(chunks: pd.DataFrame, model: str, embed: Embed | None = None):
    def build(path: Path) -> None:
        import faiss

        texts = chunks["text"].tolist()
        vectors = np.asarray((embed or get_embedder(model).embed_documents)(texts),
                             dtype=np.float32)
        index = faiss.IndexFlatIP(vectors.shape[1] if len(vectors) else 384)
        if len(vectors):
            index.add(vectors)
        faiss.write_index(index, str(path / "index.faiss"))
        chunks[["chunk_id", "text"]].to_parquet(path / "docs.parquet", index=False)

    return build


def _approximate(exact: Path, kind: str):
    def build(path: Path) -> None:
        import faiss

        flat = faiss.read_index(str(exact / "index.faiss"))
        vectors = flat.reconstruct_n(0, flat.ntotal) if flat.ntotal else None
        faiss.write_index(approximate_index(kind, vectors, flat.d), str(path / "index.faiss"))
        shutil.copyfile(exact / "docs.parquet", path / "docs.parquet")

    return build


def approximate_index(kind: str, vectors: np.ndarray | None, dim: int = 384):
    """An HNSW or IVF inner-product index holding `vectors` (rows in order: row i is id i).
    IVF uses min(4 sqrt(n), n / 39) cells (faiss wants 39 training points per cell) and
    searches max(8, cells / 8) of them. No vectors: an empty exact index."""
    import faiss

    n = 0 if vectors is None else len(vectors)
    if n == 0:
        return faiss.IndexFlatIP(dim)
    dim = vectors.shape[1]
    if kind == "hnsw":
        p = INDEXES["hnsw"]
        index = faiss.IndexHNSWFlat(dim, p["M"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = p["ef_construction"]
        index.hnsw.efSearch = p["ef_search"]
    elif kind == "ivf":
        cells = max(1, min(round(4 * math.sqrt(n)), n // 39))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells,
                                   faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = min(cells, max(8, cells // 8))
    else:
        raise ValueError(f"not an approximate index kind: {kind!r}")
    index.add(vectors)
    return index


@lru_cache(maxsize=4)
def _load_vectorstore(path: str, model: str):
    import faiss
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy
    from langchain_core.documents import Document

    index = faiss.read_index(str(Path(path) / "index.faiss"))
    ivf = faiss.try_extract_index_ivf(index)
    if ivf is not None:
        ivf.make_direct_map()  # MMR reconstructs the candidates' vectors
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


def recall_at_k(approx, exact, vectors: np.ndarray, k: int = 10) -> float:
    """Mean over query vectors of the share of the exact index's top k that the approximate
    index also returns in its top k (1.0 = the same chunks)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if len(vectors) == 0 or exact.ntotal == 0:
        return 1.0
    _, found = approx.search(vectors, k)
    _, truth = exact.search(vectors, k)
    shares = [len(set(f[f >= 0]) & set(t[t >= 0])) / max(1, int((t >= 0).sum()))
              for f, t in zip(found, truth, strict=True)]
    return float(np.mean(shares))


class _Dense(Retriever):
    embeds = True

    def __init__(self, chunks: pd.DataFrame, cache_dir: Path, k: int = 10,
                 model: str = DEFAULT_MODEL, index: str = "exact",
                 long_chunks: str = "truncate"):
        super().__init__(k)
        self.model, self.index_kind = model, check_index(index)
        self.chunks, self.cache_dir, self.long_chunks = chunks, cache_dir, long_chunks
        self.store = build_vectorstore(chunks, cache_dir, model, index,
                                       long_chunks=long_chunks)

    def embed(self, queries: list[str]) -> list[list[float]]:
        return self.store.embedding_function.embed_documents(queries)

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        return [self.search_vector(v) for v in self.embed(queries)]

    def search_vector(self, vector: list[float]) -> list[tuple[str, float]]:
        raise NotImplementedError

    def index_recall(self, queries: list[str], k: int = 10) -> float:
        """Recall@k of this retriever's index against exact search on `queries` (1.0 for an
        exact index)."""
        if self.index_kind == "exact":
            return 1.0
        exact = build_vectorstore(self.chunks, self.cache_dir, self.model,
                                  long_chunks=self.long_chunks)
        return recall_at_k(self.store.index, exact.index, np.asarray(self.embed(queries)), k)


class Sim(_Dense):
    """Cosine similarity search, top k (exact unless `index` says otherwise)."""

    name = "sim"

    def search_vector(self, vector):
        hits = self.store.similarity_search_with_score_by_vector(
            vector, k=searched(self.k, self.store.index.ntotal))
        return [(d.metadata["chunk_id"], float(s)) for d, s in hits]


class MMR(_Dense):
    """LangChain maximal marginal relevance: fetch_k nearest, then k diverse ones."""

    name = "mmr"

    def __init__(self, chunks, cache_dir, k: int = 10, fetch_k: int = 20,
                 lambda_mult: float = 0.5, model: str = DEFAULT_MODEL, index: str = "exact",
                 long_chunks: str = "truncate"):
        if fetch_k < k:
            raise ValueError(f"mmr: fetch_k ({fetch_k}) must be >= k ({k})")
        if not 0.0 <= lambda_mult <= 1.0:
            raise ValueError(f"mmr: lambda_mult must be in [0, 1], got {lambda_mult}")
        super().__init__(chunks, cache_dir, k, model, index, long_chunks)
        self.fetch_k, self.lambda_mult = fetch_k, lambda_mult

    def search_vector(self, vector):
        hits = self.store.max_marginal_relevance_search_with_score_by_vector(
            vector, k=searched(self.k, self.store.index.ntotal),
            fetch_k=searched(self.fetch_k, self.store.index.ntotal), lambda_mult=self.lambda_mult)
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
