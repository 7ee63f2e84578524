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

ClapNQ (answers written by annotators, `--clapnq`): the same N questions of the answerable file
(every k-th) with the passages file as corpus; besides the share with evidence it reports the
sentence-level precision and recall of the found parts against the annotators'
`output[0].selected_sentences` (whitespace collapsed; precision over the questions with
evidence, recall over all questions, each micro-averaged over sentences). `--llm` adds the
model's support check (`--llm-backend local` uses the bundled GGUF model).

    nice .venv/bin/python benchmarks/bench_evidence.py --clapnq \
        --dataset ../shared/data/clapnq/clapnq_dev_answerable_first150.jsonl.gz \
        --corpus ../shared/data/clapnq/clapnq_dev_passages.jsonl.gz --questions 40 --out /tmp/ev-c
"""

from __future__ import annotations

import argparse
import csv
import gzip
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


def build_clapnq(dataset: str, corpus: str, n: int, out: Path) -> dict[str, list[str]]:
    """Write qa.csv and corpus.jsonl from ClapNQ files; return the selected sentences."""
    with gzip.open(dataset, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    rows = rows[::max(len(rows) // n, 1)][:n]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "qa.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        for r in rows:
            w.writerow([r["id"], r["input"], r["output"][0]["answer"]])
    with gzip.open(corpus) as f:
        (out / "corpus.jsonl").write_bytes(f.read())
    return {r["id"]: r["output"][0]["selected_sentences"] for r in rows}


def sentence_scores(found: dict[str, list[str]], gold: dict[str, list[str]]) -> dict:
    """Sentence-level precision (over questions with evidence) and recall (over all), micro."""
    def norm(parts: list[str]) -> set[str]:
        return {" ".join(p.split()) for p in parts}

    hit = sum(len(norm(found.get(q, [])) & norm(g)) for q, g in gold.items())
    n_found = sum(len(norm(found.get(q, []))) for q in gold)
    n_gold = sum(len(norm(g)) for g in gold.values())
    return {"found_sentences": n_found, "selected_sentences": n_gold, "correct": hit,
            "precision": round(hit / n_found, 4) if n_found else None,
            "recall": round(hit / n_gold, 4) if n_gold else None}


def main_clapnq(args: argparse.Namespace) -> None:
    out = Path(args.out)
    gold = build_clapnq(args.dataset, args.corpus, args.questions, out)
    cmd = ["evidence", "--dataset", str(out / "qa.csv"), "--corpus", str(out / "corpus.jsonl"),
           "-o", str(out / "found.jsonl"), "-q"]
    if args.llm:
        cmd += ["--llm", "--llm-backend", args.llm_backend]
    t0 = time.perf_counter()
    code = ragdash(cmd)
    seconds = time.perf_counter() - t0
    assert code == 0, f"ragdash evidence exited {code}"
    rows = [json.loads(line) for line in (out / "found.jsonl").read_text().splitlines()]
    found = {r["id"]: r["relevant_parts"] for r in rows if r["relevant_parts"]}
    methods: dict[str, int] = {}
    for r in rows:
        if r["relevant_parts"]:
            methods[r["parts_method"]] = methods.get(r["parts_method"], 0) + 1
    print(json.dumps({
        "dataset": args.dataset, "questions": len(rows), "llm": args.llm,
        "seconds": round(seconds, 1), "got_evidence": len(found), "by_method": methods,
        "parts_per_question": round(sum(map(len, found.values())) / max(len(found), 1), 2),
        "sentences": sentence_scores(found, gold),
    }, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="HotpotQA or SQuAD JSON file, or "
                    "ClapNQ JSONL.gz with --clapnq")
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--out", required=True, help="folder for qa.csv, corpus.jsonl, found.jsonl")
    ap.add_argument("--clapnq", action="store_true", help="the dataset is ClapNQ (long answers)")
    ap.add_argument("--corpus", help="ClapNQ passages JSONL.gz (with --clapnq)")
    ap.add_argument("--llm", action="store_true", help="with --clapnq: the LLM's support check")
    ap.add_argument("--llm-backend", default="local")
    args = ap.parse_args()
    if args.clapnq:
        main_clapnq(args)
        return
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
