"""Classic IR metrics at chunk level, through ir_measures.

A chunk is relevant to a question when it contains one of its parts, or at least `share` of a
part as a contiguous substring (share < 1). Only chunks of documents that contain the part (or,
for share < 1, its first share of characters) are candidates, which keeps the judgement cheap.
"""

from __future__ import annotations

import ahocorasick
import ir_measures
import pandas as pd
from ir_measures import RR, P, R, nDCG

from ragdash.scoring import part_scores

CUTOFFS = (5, 10)
PROBE_CHARS = 1_000
"""Longest key given to the Aho-Corasick automaton: a part's prefix of this length finds every
document that could hold the part (each candidate is then checked exactly), and keys stay far
below the lengths at which pyahocorasick has crashed the process (~600k characters)."""


def relevant_chunks(chunks: pd.DataFrame, parts: dict[str, list[str]],
                    share: float = 1.0) -> pd.DataFrame:
    """qrels frame (query_id, doc_id, relevance=1) of chunks holding a part (or `share` of it)."""
    by_doc: dict[object, list[tuple[str, str]]] = {}  # documents in order of first chunk
    for d, cid, text in zip(chunks["doc_id"].tolist(), chunks["chunk_id"].astype(str).tolist(),
                            chunks["text"].tolist(), strict=True):
        by_doc.setdefault(d, []).append((cid, text))
    doc_ids = list(by_doc)
    probe = {p: _probe(p, share) for plist in parts.values() for p in plist}
    docs_with = _docs_containing(set(probe.values()), doc_ids,
                                 [" ".join(t for _, t in by_doc[d]) for d in doc_ids])
    rows = []
    for qid, plist in parts.items():
        hit: set[str] = set()
        for p in plist:
            for doc in docs_with.get(probe[p], ()):
                for cid, text in by_doc[doc]:
                    if cid not in hit and (p in text or (share < 1 and part_scores(
                            [p], text, [len(text)])[0, 0] >= share)):
                        hit.add(cid)
        rows.extend((qid, cid, 1) for cid in sorted(hit))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def _probe(part: str, share: float) -> str:
    """The prefix of `part` every document holding the part (or, for share < 1, its first
    share of characters) contains, at most PROBE_CHARS long."""
    head = part if share >= 1 else part[: max(8, int(len(part) * share))]
    return head[:PROBE_CHARS]


def _docs_containing(probes: set[str], doc_ids: list, texts: list[str]) -> dict[str, list]:
    """The documents (in order) whose text contains each probe: one Aho-Corasick pass over all
    texts for all probes (an empty probe is in no document)."""
    probes = {p for p in probes if p}
    if not probes:
        return {}
    automaton = ahocorasick.Automaton()
    for p in probes:
        automaton.add_word(p, p)
    automaton.make_automaton()
    found: dict[str, list] = {}
    for doc, text in zip(doc_ids, texts, strict=True):
        for p in {p for _, p in automaton.iter(text)}:
            found.setdefault(p, []).append(doc)
    return found


def chunk_metrics(retrieved: pd.DataFrame, chunks: pd.DataFrame, parts: dict[str, list[str]],
                  share: float = 1.0, per_query: bool = False,
                  retrievers: list[str] | None = None) -> pd.DataFrame:
    """Recall@k, P@k, MRR and nDCG@k per retriever (or per query with `per_query`), columns in
    a fixed order. `retrievers` lists every retriever of the run: one that retrieved nothing for
    any question scores 0 (a question with no chunk already counts 0 in the mean)."""
    qrels: dict[str, dict[str, int]] = {}
    frame = relevant_chunks(chunks, parts, share)
    for q, d in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), strict=True):
        qrels.setdefault(q, {})[d] = 1
    measures = [m @ k for k in CUTOFFS for m in (R, P, nDCG)] + [RR]
    evaluator = ir_measures.evaluator(measures, qrels) if qrels else None
    names = list(dict.fromkeys([*(retrievers or []), *retrieved["retriever"]]))
    out = []
    for name in names:
        res = retrieved[retrieved["retriever"] == name]
        run: dict[str, dict[str, float]] = {}  # scores keep the retriever's order
        for q, d, rank in zip(res["qid"].astype(str).tolist(),
                              res["chunk_id"].astype(str).tolist(),
                              res["rank"].astype(float).tolist(), strict=True):
            run.setdefault(q, {})[d] = -rank
        if per_query:
            out += [{"retriever": name, "qid": m.query_id, "measure": str(m.measure),
                     "value": m.value} for m in (evaluator.iter_calc(run) if evaluator and run
                                                 else ())]
            continue
        agg = ({str(m): float(v) for m, v in evaluator.calc_aggregate(run).items()}
               if evaluator and run else {})
        out.append({"retriever": name, **{str(m): agg.get(str(m), 0.0) for m in measures},
                    "questions_with_relevant": len(qrels)})
    return pd.DataFrame(out)
