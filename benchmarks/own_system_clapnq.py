"""A RAG system of "your own" on the shared ClapNQ questions, exported the three ways ragdash
imports (docs/own-data.md "Your own RAG system"), to run beside the built-in retrievers.

The system: BM25 (bm25s) over windows of two sentences of the 597 ClapNQ passages, its top 5
windows the contexts, and an extractive answer (the top window's first sentence). It is written
as RAGAS records (`user_input`, `retrieved_contexts`, `response`), as a Phoenix spans dataframe
(a CHAIN root, a RETRIEVER span, an LLM span per question) and as a TREC run over the corpus's
doc ids (passages ranked by BM25 alone). The dataset: the 150 questions, their long-form answers,
the annotators' selected sentences as relevant parts.

    python benchmarks/own_system_clapnq.py OUT_DIR
    ragdash run --dataset OUT_DIR/clapnq.jsonl --corpus OUT_DIR/passages.jsonl \\
        --retrievers bm25,sim --chunker recursive --system windows=OUT_DIR/ragas.jsonl \\
        --system traced=OUT_DIR/spans.parquet --system passages=OUT_DIR/run.trec \\
        --run-dir runs/clapnq-own
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import bm25s
import pandas as pd

DATA = Path("/work/shared/data/clapnq")
TOP = 5


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATA / "clapnq_dev_answerable_first150.jsonl.gz", "rt",
                   encoding="utf-8") as f:
        records = [json.loads(x) for x in f]
    with gzip.open(DATA / "clapnq_dev_passages.jsonl.gz", "rt", encoding="utf-8") as f:
        passages = [json.loads(x) for x in f]
    with open(out / "clapnq.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({"id": r["id"], "question": r["input"],
                                "answer": r["output"][0]["answer"],
                                "relevant_parts": r["output"][0]["selected_sentences"]}) + "\n")
    with open(out / "passages.jsonl", "w", encoding="utf-8") as f:
        for p in passages:
            f.write(json.dumps(p) + "\n")
    # the system's own index: windows of two sentences (split at " . ", ClapNQ's tokenised text)
    windows, owner = [], []
    for p in passages:
        sents = [s.strip() + " ." for s in p["text"].split(" . ") if s.strip(" .")]
        for i in range(0, len(sents), 2):
            windows.append(" ".join(sents[i:i + 2]))
            owner.append(p["doc_id"])
    questions = [r["input"] for r in records]
    win = bm25s.BM25()
    win.index(bm25s.tokenize(windows, stopwords="en"))
    hits, scores = win.retrieve(bm25s.tokenize(questions, stopwords="en"), k=TOP)
    whole = bm25s.BM25()
    whole.index(bm25s.tokenize([p["text"] for p in passages], stopwords="en"))
    p_hits, p_scores = whole.retrieve(bm25s.tokenize(questions, stopwords="en"), k=10)

    rows, spans, trec = [], [], []
    t0 = pd.Timestamp("2024-06-01T09:00:00Z")
    for i, r in enumerate(records):
        contexts = [windows[j] for j in hits[i]]
        answer = contexts[0].split(" . ")[0] + " ."
        rows.append({"user_input": r["input"], "retrieved_contexts": contexts,
                     "response": answer})
        trace, root = f"{i + 1:032x}", f"{i:015x}a"
        common = {"context.trace_id": trace, "start_time": t0 + pd.Timedelta(seconds=i),
                  "attributes.input.value": None, "attributes.output.value": None,
                  "attributes.retrieval.documents": None, "parent_id": root}
        spans += [
            {**common, "context.span_id": root, "name": "query", "span_kind": "CHAIN",
             "parent_id": None, "attributes.input.value": r["input"],
             "attributes.output.value": answer},
            {**common, "context.span_id": f"{i:015x}b", "name": "retrieve",
             "span_kind": "RETRIEVER", "attributes.input.value": r["input"],
             "attributes.retrieval.documents": [
                 {"document.content": c, "document.id": owner[j],
                  "document.score": float(s)}
                 for c, j, s in zip(contexts, hits[i], scores[i], strict=True)]},
            {**common, "context.span_id": f"{i:015x}c", "name": "llm", "span_kind": "LLM",
             "start_time": t0 + pd.Timedelta(seconds=i, milliseconds=400),
             "attributes.output.value": answer}]
        trec += [f"{r['id']} Q0 {passages[j]['doc_id']} {rank + 1} {float(s):.4f} bm25s"
                 for rank, (j, s) in enumerate(zip(p_hits[i], p_scores[i], strict=True))]
    with open(out / "ragas.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in rows)
    frame = pd.DataFrame(spans).set_index("context.span_id")
    frame["attributes.openinference.span.kind"] = frame["span_kind"]
    frame.to_parquet(out / "spans.parquet")
    (out / "run.trec").write_text("\n".join(trec) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(records)} questions, {len(passages)} passages, "
          f"{len(windows)} windows")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/clapnq-own-input"))
