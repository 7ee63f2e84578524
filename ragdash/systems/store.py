"""An imported system inside a run: its matched records become the system's retrieved
"chunks" in rank order (rows of `retrieved.parquet` like a built-in retriever's) and its answers
the system's answers; what the file held is kept in `imported.parquet`.

A context the file gives as text gets a chunk id of its own (`@NAME/QID#RANK`), looked up by
`chunk_table`, which every reader of retrieved chunk texts uses: chunks.parquet plus those
contexts. A TREC file's ids name the run's documents (their whole text) or chunks (then the
retrieved row is that chunk's)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from ragdash.data.schema import DataError, Issue
from ragdash.rundir import Run
from ragdash.systems.match import Matched
from ragdash.terminal import name as shown

IMPORTED_COLUMNS = ["system", "qid", "record", "contexts", "context_ids", "doc_ids", "scores",
                    "answer"]
MIN_DEPTH = 10
"""A TREC run's documents kept per question at least (the chunk metrics' deepest cut-off)."""
CHARS_PER_TOKEN = 50
"""A TREC run's documents past the first MIN_DEPTH are kept while their text so far is shorter
than this many characters per token of the largest budget: C_N never reaches further (a token
is a few characters), so Score_IR is the same, and a run of depth 1,000 over whole documents
does not fill memory."""


def context_id(name: str, qid: str, rank: int) -> str:
    """The chunk id of an imported context given as text."""
    return f"@{name}/{qid}#{rank}"


def imported_rows(matched: Matched, documents: pd.DataFrame, chunks: pd.DataFrame,
                  budgets: Sequence[int]) -> pd.DataFrame:
    """The rows of `imported.parquet` for one matched system: each question's contexts (texts,
    in rank order), the chunk id each has in `retrieved.parquet`, its document id and score
    where given, and the system's answer. A TREC file's ids are resolved against the run's
    `documents` (doc_id: the whole text) and `chunks` (chunk_id); DataError listing the lines
    of ids that are neither."""
    name = matched.name
    doc_text: dict[str, str] = dict(zip(documents["doc_id"].astype(str), documents["text"],
                                        strict=True))
    chunk_text: dict[str, str] = dict(zip(chunks["chunk_id"].astype(str), chunks["text"],
                                          strict=True))
    most = CHARS_PER_TOKEN * max(budgets or [1])
    rows, unknown = [], []
    for qid, rec in matched.records.items():
        if rec.refs:
            texts, ids, docs, total = [], [], [], 0
            for rank, (ref, where) in enumerate(zip(rec.refs, rec.ref_records, strict=True)):
                if rank >= MIN_DEPTH and total >= most:
                    break
                if ref in doc_text:
                    texts.append(doc_text[ref])
                    ids.append(context_id(name, qid, rank))
                    docs.append(ref)
                elif ref in chunk_text:
                    texts.append(chunk_text[ref])
                    ids.append(ref)
                    docs.append(ref.rpartition("#")[0] or ref)
                else:
                    unknown.append((where, ref))
                    continue
                total += len(texts[-1])
            scores = list(rec.scores[:len(texts)])
        else:
            texts = list(rec.contexts)
            ids = [context_id(name, qid, i) for i in range(len(texts))]
            docs = [(rec.context_ids[i] if i < len(rec.context_ids) else None)
                    for i in range(len(texts))]
            scores = [(rec.scores[i] if i < len(rec.scores) else None)
                      for i in range(len(texts))]
        rows.append({"system": name, "qid": qid, "record": rec.record, "contexts": texts,
                     "context_ids": ids, "doc_ids": docs,
                     "scores": [math.nan if s is None else float(s) for s in scores],
                     "answer": rec.answer})
    if unknown:
        where, ref = unknown[0]
        more = (f" ({len(unknown) - 1:,} more: "
                + ", ".join(f"{w} {shown(r, 30)}" for w, r in unknown[1:5])
                + (" …" if len(unknown) > 5 else "") + ")") if len(unknown) > 1 else ""
        raise DataError(Issue(matched.file.path, where, "docid", f"document {shown(ref)} is "
                              "neither a document (doc_id) nor a chunk (chunk_id) of the run's "
                              f"corpus{more}: a TREC run names the corpus's doc_id or the "
                              "run's chunk ids"))
    clash = set(chunk_text) & {i for r in rows for i in r["context_ids"] if i.startswith("@")}
    if clash:
        raise DataError(Issue(matched.file.path, "-", "(ids)", f"the corpus has a chunk id "
                              f"{shown(sorted(clash)[0])} that imported contexts use: rename "
                              "the system"))
    return pd.DataFrame(rows, columns=IMPORTED_COLUMNS)


def retrieved_rows(imported: pd.DataFrame) -> pd.DataFrame:
    """The `retrieved.parquet` rows of imported systems: one per context, rank from 0."""
    rows = [(q, s, rank, cid, score)
            for s, q, ids, scores in zip(imported["system"], imported["qid"],
                                         imported["context_ids"], imported["scores"],
                                         strict=True)
            for rank, (cid, score) in enumerate(zip(ids, scores, strict=True))]
    out = pd.DataFrame(rows, columns=["qid", "retriever", "rank", "chunk_id", "score"])
    return out.astype({"qid": str, "retriever": str, "rank": int, "chunk_id": str,
                       "score": float})


def imported(run: Run) -> pd.DataFrame | None:
    """`imported.parquet` of the run, None when it imported no system."""
    return run.read("imported") if run.has("imported") else None


def chunk_table(run: Run, chunks: pd.DataFrame | None = None) -> pd.DataFrame:
    """The run's chunks (`chunks`, default chunks.parquet) plus every imported context given as
    text, as a chunk of its own: what a retrieved chunk id is looked up in."""
    from ragdash.retrieval.passages import with_passages

    chunks = run.read("chunks") if chunks is None else chunks
    chunks = with_passages(run, chunks)  # and the live retrievers' passages (retrievers.custom)
    extra = imported(run)
    if extra is None or extra.empty:
        return chunks
    rows = [(cid, doc if isinstance(doc, str) and doc else cid, doc if isinstance(doc, str)
             else "", text, 0, len(text))
            for ids, texts, docs in zip(extra["context_ids"], extra["contexts"],
                                        extra["doc_ids"], strict=True)
            for cid, text, doc in zip(ids, texts, docs, strict=True) if cid.startswith("@")]
    if not rows:
        return chunks
    own = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "title", "text", "start", "end"])
    own["doc_id"] = own["chunk_id"]  # each context its own unit of relevance
    return pd.concat([chunks, own], ignore_index=True)


def coverage(run: Run) -> dict[str, set[str]]:
    """{imported system: the questions its file has a record for}; built-in retrievers are
    not listed (they are asked every question)."""
    extra = imported(run)
    if extra is None:
        return {}
    out: dict[str, set[str]] = {}
    for s, q in zip(extra["system"], extra["qid"].astype(str), strict=True):
        out.setdefault(str(s), set()).add(q)
    return out


def partial(run: Run) -> dict[str, tuple[int, int]]:
    """{imported system: (questions it has, questions of the run)} for each system whose file
    lacks some of the run's questions: it is scored on those it has."""
    cov = coverage(run)
    if not cov:
        return {}
    total = len(run.read("examples"))
    return {s: (len(q), total) for s, q in cov.items() if len(q) < total}


def coverage_note(counts: Mapping[str, tuple[int, int]], name=str) -> str:
    """One sentence for pages: which systems are scored on part of the questions."""
    if not counts:
        return ""
    each = "; ".join(f"{name(s)}: {n:,} of {m:,} questions" for s, (n, m) in counts.items())
    return (f"Scored on the questions its file has ({each}): a system's means are over its "
            "own questions, and comparisons over the questions both have.")


def answered(imported_: pd.DataFrame) -> set[str]:
    """The imported systems whose file gives at least one answer."""
    has = imported_["answer"].map(lambda a: isinstance(a, str) and bool(a.strip()))
    return set(imported_.loc[has, "system"].astype(str))


def answer_rows(imported_: pd.DataFrame, names: Sequence[str], budget: int | None
                ) -> list[dict]:
    """`answers.parquet` rows of the imported systems in `names` (those whose answers come from
    their file), one per question the file answers: the answer as given, `model` 'imported',
    no cost. A question its file has no answer for gets no row (it is not judged)."""
    rows = []
    for s, q, answer in zip(imported_["system"], imported_["qid"].astype(str),
                            imported_["answer"], strict=True):
        if s in names and isinstance(answer, str) and answer.strip():
            rows.append({"qid": q, "system": str(s), "budget": budget, "model": "imported",
                         "prompt": "imported", "answer": answer, "latency_s": None,
                         "tokens_in": None, "tokens_out": None, "error": None})
    return rows


def chunk_metrics(name: str, retrieved: pd.DataFrame, chunks: pd.DataFrame,
                  parts: Mapping[str, list[str]], share: float = 1.0) -> pd.DataFrame:
    """An imported system's chunk-level metrics (the columns of
    `ragdash.scoring.ir_metrics.chunk_metrics`), on the questions in `parts`: it has no corpus
    of its own, so each question's relevant units are the contexts it returned for that question
    that hold a part (or `share` of one). P@k and MRR mean what they mean for a built-in
    retriever; Recall@k and nDCG@k say how high it ranked the relevant contexts it found."""
    import ir_measures
    from ir_measures import RR, P, R, nDCG

    from ragdash.scoring.ir_metrics import CUTOFFS, relevant_chunks

    mine = retrieved[(retrieved["retriever"] == name)
                     & retrieved["qid"].astype(str).isin(set(parts))]
    own: dict[str, set[str]] = {}
    run: dict[str, dict[str, float]] = {}
    for q, c, rank in zip(mine["qid"].astype(str), mine["chunk_id"].astype(str),
                          mine["rank"].astype(float), strict=True):
        own.setdefault(q, set()).add(c)
        run.setdefault(q, {})[c] = -rank
    ids = set().union(*own.values()) if own else set()
    units = chunks[chunks["chunk_id"].astype(str).isin(ids)]
    found = relevant_chunks(units, dict(parts), share)
    qrels: dict[str, dict[str, int]] = {}
    for q, c in zip(found["query_id"].astype(str), found["doc_id"].astype(str), strict=True):
        if c in own.get(q, ()):  # a context returned for another question is not this one's
            qrels.setdefault(q, {})[c] = 1
    measures = [m @ k for k in CUTOFFS for m in (R, P, nDCG)] + [RR]
    agg = ({str(m): float(v) for m, v in ir_measures.evaluator(measures, qrels)
            .calc_aggregate(run).items()} if qrels and run else {})
    return pd.DataFrame([{"retriever": name, **{str(m): agg.get(str(m), 0.0) for m in measures},
                          "questions_with_relevant": len(qrels)}])
