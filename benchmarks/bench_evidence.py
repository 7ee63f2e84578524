"""Benchmark: evidence found for questions that have only id, question and answer, on real data.

Takes N questions of a HotpotQA or SQuAD file by a fixed rule (every k-th, k = total // N, the
first N of those), writes them as `qa.csv` with id, question, answer only (their relevant parts
dropped) and the file's whole corpus as `corpus.jsonl`, runs `ragdash evidence` on them, and
compares what it found with the dataset's own relevant parts:

- got evidence: questions with at least one part;
- verbatim: questions whose normalised answer occurs in some corpus document (checked here by
  scanning every document), and among them the share whose every found part holds the answer;
- equal / overlap: a found part equals a gold part / a found part and a gold part hold one
  another or share a sentence (`ragdash.evidence.output.agreement`).

    .venv/bin/python benchmarks/bench_evidence.py --dataset data/squad/... --out /tmp/ev-squad
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

from ragdash.cli import main as ragdash
from ragdash.data import load_dataset
from ragdash.evidence.normalize import answer_forms, contains_answer, is_yes_no
from ragdash.evidence.output import agreement


def build(dataset: str, n: int, out: Path) -> tuple[dict[str, list[str]], list]:
    """Write qa.csv (id, question, answer) and corpus.jsonl; return the gold parts and docs."""
    total = len(load_dataset(dataset).examples)
    data = load_dataset(dataset, sample={"every": max(total // n, 1), "n": n})
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "qa.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        for e in data.examples:
            w.writerow([e.qid, e.question, e.answer])
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d in data.documents:
            f.write(json.dumps({"doc_id": d.doc_id, "title": d.title, "text": d.text}) + "\n")
    return {e.qid: e.parts for e in data.examples}, data.documents


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="HotpotQA or SQuAD JSON file")
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--out", required=True, help="folder for qa.csv, corpus.jsonl, found.jsonl")
    args = ap.parse_args()
    out = Path(args.out)
    gold, docs = build(args.dataset, args.questions, out)
    t0 = time.perf_counter()
    code = ragdash(["evidence", "--dataset", str(out / "qa.csv"), "--corpus",
                    str(out / "corpus.jsonl"), "-o", str(out / "found.jsonl"), "-q"])
    seconds = time.perf_counter() - t0
    assert code == 0, f"ragdash evidence exited {code}"
    rows = [json.loads(line) for line in (out / "found.jsonl").read_text().splitlines()]
    folded = [" ".join(d.text.casefold().split()) for d in docs]
    verbatim = [r for r in rows if not is_yes_no(r["answer"])
                and any(form in text for form in answer_forms(r["answer"]) for text in folded)]
    found = [r for r in rows if r["relevant_parts"]]
    holds = [r for r in verbatim if r["relevant_parts"]
             and all(contains_answer(p, r["answer"]) for p in r["relevant_parts"])]

    agree = agreement({r["id"]: r["relevant_parts"] for r in found}, gold)
    yes_no = sum(is_yes_no(r["answer"]) for r in rows)
    print(json.dumps({
        "dataset": args.dataset, "questions": len(rows), "documents": len(docs),
        "seconds": round(seconds, 1), "got_evidence": len(found),
        "yes_no_answers": yes_no, "answer_verbatim_in_corpus": len(verbatim),
        "verbatim_with_part_holding_answer": len(holds),
        "share_holding_answer": round(len(holds) / len(verbatim), 4) if verbatim else None,
        "parts_per_question": round(sum(len(r["relevant_parts"]) for r in found)
                                    / max(len(found), 1), 2),
        "gold_comparison": agree,
    }, indent=1))


if __name__ == "__main__":
    main()
