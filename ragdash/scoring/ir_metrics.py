"""Classic IR metrics at chunk level, through ir_measures.

A chunk is relevant to a question when it contains one of its parts, or at least `share` of a
part as a contiguous substring (share < 1). Only chunks of documents that contain the part (or,
for share < 1, its first share of characters) are candidates, which keeps the judgement cheap.
"""

from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import RR, P, R, nDCG

from ragdash.scoring import part_scores

CUTOFFS = (5, 10)


def relevant_chunks(chunks: pd.DataFrame, parts: dict[str, list[str]],
                    share: float = 1.0) -> pd.DataFrame:
    """qrels frame (query_id, doc_id, relevance=1) of chunks holding a part (or `share` of it)."""
    by_doc: dict[object, list[tuple[str, str]]] = {}  # documents in order of first chunk
    for d, cid, text in zip(chunks["doc_id"], chunks["chunk_id"].astype(str), chunks["text"],
                            strict=True):
        by_doc.setdefault(d, []).append((cid, text))
    doc_ids = list(by_doc)
    joined = "\x00".join(" ".join(t for _, t in by_doc[d]) for d in doc_ids)
    starts = np.cumsum([0] + [sum(len(t) + 1 for _, t in by_doc[d]) for d in doc_ids])
    rows = []
    for qid, plist in parts.items():
        hit: set[str] = set()
        for p in plist:
            probe = p if share >= 1 else p[: max(8, int(len(p) * share))]
            for doc in _docs_containing(probe, joined, starts, doc_ids):
                for cid, text in by_doc[doc]:
                    if cid not in hit and (p in text or (share < 1 and part_scores(
                            [p], text, [len(text)])[0, 0] >= share)):
                        hit.add(cid)
        rows.extend((qid, cid, 1) for cid in sorted(hit))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def _docs_containing(probe: str, joined: str, starts: np.ndarray, doc_ids: list) -> list:
    found, at = [], joined.find(probe)
    while at >= 0:
        doc = doc_ids[int(np.searchsorted(starts, at, side="right")) - 1]
        if doc not in found:
            found.append(doc)
        at = joined.find(probe, at + 1)
    return found


def chunk_metrics(retrieved: pd.DataFrame, chunks: pd.DataFrame, parts: dict[str, list[str]],
                  share: float = 1.0, per_query: bool = False,
                  retrievers: list[str] | None = None) -> pd.DataFrame:
    """Recall@k, P@k, MRR and nDCG@k per retriever (or per query with `per_query`), columns in
    a fixed order. `retrievers` lists every retriever of the run: one that retrieved nothing for
    any question scores 0 (a question with no chunk already counts 0 in the mean)."""
    qrels = relevant_chunks(chunks, parts, share)
    measures = [m @ k for k in CUTOFFS for m in (R, P, nDCG)] + [RR]
    names = list(dict.fromkeys([*(retrievers or []), *retrieved["retriever"]]))
    out = []
    for name in names:
        res = retrieved[retrieved["retriever"] == name]
        run = pd.DataFrame({"query_id": res["qid"].astype(str),
                            "doc_id": res["chunk_id"].astype(str),
                            "score": -res["rank"].astype(float)})  # keep the retriever's order
        if per_query:
            out += [{"retriever": name, "qid": m.query_id, "measure": str(m.measure),
                     "value": m.value} for m in ir_measures.iter_calc(measures, qrels, run)]
            continue
        agg = ({str(m): float(v) for m, v in ir_measures.calc_aggregate(measures, qrels, run)
                .items()} if len(run) and len(qrels) else {})
        out.append({"retriever": name, **{str(m): agg.get(str(m), 0.0) for m in measures},
                    "questions_with_relevant": int(qrels["query_id"].nunique())})
    return pd.DataFrame(out)
