"""Benchmark: are found parts whole sentences, never a title alone, each kept once, at most
`--max-parts`? On ClapNQ questions whose answers are written in people's own words.

The questions are those of `bench_evidence.py --clapnq` (every k-th of the answerable file, the
first N) with id, question and answer only. The corpus is the passages file, either as given
(`--as jsonl`: title apart from the text, the procedure of the docs' ClapNQ line) or, as a
person would upload it (`--as files`, the default), as a zip of one file per passage: .txt
(the title on the first line, a blank line, the text), .md (`# title`, a blank line, the text)
and .html (`<h1>` title, `<p>` text) in turn, and every sixth passage also as an .html copy of
its .txt file. Reported (`ragdash evidence` with its defaults, no LLM):

- sentences: precision and recall of the found parts against the annotators'
  `selected_sentences` (`bench_evidence.sentence_scores`: whitespace collapsed, precision over
  the questions with evidence, recall over all, micro-averaged over sentences);
- characters: precision and recall over characters of the gold passage (`character_scores`),
  blind to where sentences are cut: ClapNQ's own sentences are cut at some abbreviations
  ("( lit.", "Trio No."), which a whole sentence found can never equal;
- parts per question and the questions with more than `--max-parts`;
- parts under 25 characters, parts that are a title or heading alone (one line that starts
  with '#', equals a passage's title, or has no sentence punctuation at its end), and parts
  kept twice in one question (same text, whitespace and case aside);
- `--dump FILE`: question, answer, parts and selected sentences of every question, to read.

    nice .venv/bin/python benchmarks/bench_evidence_sentences.py --out /tmp/ev-s \
        --dataset ../shared/data/clapnq/clapnq_dev_answerable_first150.jsonl.gz \
        --corpus ../shared/data/clapnq/clapnq_dev_passages.jsonl.gz --questions 40
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import re
import time
import zipfile
from pathlib import Path

from bench_evidence import build_clapnq, sentence_scores

from ragdash.cli import main as ragdash

MIN_CHARS = 25
_SENTENCE_END = re.compile(r"(?:[.!?]|'')[\s\"'”’)\]]*$")


def write_files(corpus: str, path: Path) -> dict[str, str]:
    """The passages as a zip of .txt/.md/.html files (module docstring); {doc_id: title}."""
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        passages = [json.loads(line) for line in f]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i, p in enumerate(passages):
            title, text = p["title"], p["text"]
            page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                    f"{html.escape(title)}</title></head>\n<body>\n<h1>{html.escape(title)}"
                    f"</h1>\n<p>{html.escape(text)}</p>\n</body></html>\n")
            kind = ("txt", "md", "html")[i % 3]
            if kind == "txt":
                z.writestr(f"docs/{p['doc_id']}.txt", f"{title}\n\n{text}\n")
                if i % 6 == 0:
                    z.writestr(f"copies/{p['doc_id']}.html", page)
            elif kind == "md":
                z.writestr(f"docs/{p['doc_id']}.md", f"# {title}\n\n{text}\n")
            else:
                z.writestr(f"docs/{p['doc_id']}.html", page)
    return {p["doc_id"]: p["title"] for p in passages}


def titles_of(corpus: str) -> set[str]:
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        return {_norm(json.loads(line)["title"]) for line in f}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def heading_alone(part: str, titles: set[str]) -> bool:
    """A part that is a title or heading on its own (module docstring)."""
    text = part.strip()
    if "\n" in text:
        return False
    return text.startswith("#") or _norm(text) in titles or not _SENTENCE_END.search(text)


def gold_passages(dataset: str, n: int) -> dict[str, str]:
    """{id: the gold passage's text} of the questions `build_clapnq` takes."""
    with gzip.open(dataset, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return {r["id"]: r["passages"][0]["text"] for r in rows[::max(len(rows) // n, 1)][:n]}


def _covered(text: str, pieces: list[str]) -> set[int]:
    """The character positions of `text` (normalised) that the pieces found in it cover."""
    out: set[int] = set()
    for piece in map(_norm, pieces):
        pos = text.find(piece)
        while piece and pos != -1:
            out.update(range(pos, pos + len(piece)))
            pos = text.find(piece, pos + 1)
    return out


def character_scores(found: dict[str, list[str]], gold: dict[str, list[str]],
                     passages: dict[str, str]) -> dict:
    """Precision and recall over characters, blind to where sentences are cut: the share of the
    found parts' characters (each distinct part once) that lie in selected sentences of the
    gold passage, and the share of the selected characters that found parts cover."""
    right = found_chars = selected_chars = 0
    for q, gs in gold.items():
        text = _norm(passages[q])
        chosen = _covered(text, gs)
        selected_chars += len(chosen)
        parts = {_norm(p) for p in found.get(q, [])}
        hit = _covered(text, list(parts))
        found_chars += sum(map(len, parts))
        right += len(hit & chosen)
    return {"found_chars": found_chars, "selected_chars": selected_chars,
            "precision": round(right / found_chars, 4) if found_chars else None,
            "recall": round(right / selected_chars, 4) if selected_chars else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="ClapNQ answerable JSONL.gz")
    ap.add_argument("--corpus", required=True, help="ClapNQ passages JSONL.gz")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--as", dest="form", choices=("files", "jsonl"), default="files")
    ap.add_argument("--max-parts", type=int, default=3)
    ap.add_argument("--out", required=True, help="folder for qa.csv, the corpus, found.jsonl")
    ap.add_argument("--dump", help="write every question's parts here, to read")
    ap.add_argument("--rescore", action="store_true", help="score the found.jsonl in --out")
    args = ap.parse_args()
    out = Path(args.out)
    gold = build_clapnq(args.dataset, args.corpus, args.questions, out)
    corpus = out / "corpus.jsonl"
    if args.form == "files" and not args.rescore:
        corpus = out / "corpus.zip"
        write_files(args.corpus, corpus)
    titles = titles_of(args.corpus)
    t0 = time.perf_counter()
    if not args.rescore:
        code = ragdash(["evidence", "--dataset", str(out / "qa.csv"), "--corpus", str(corpus),
                        "-o", str(out / "found.jsonl"), "--max-parts", str(args.max_parts),
                        "-q"])
        assert code == 0, f"ragdash evidence exited {code}"
    seconds = time.perf_counter() - t0
    rows = [json.loads(line) for line in (out / "found.jsonl").read_text().splitlines()]
    found = {r["id"]: r["relevant_parts"] for r in rows if r["relevant_parts"]}
    parts = [(q, p) for q, ps in found.items() for p in ps]
    short = [p for _, p in parts if len(p.strip()) < MIN_CHARS]
    headings = [p for _, p in parts if heading_alone(p, titles)]
    twice = {q: len(ps) - len({_norm(p) for p in ps}) for q, ps in found.items()}
    print(json.dumps({
        "corpus": args.form, "questions": len(rows), "seconds": round(seconds, 1),
        "got_evidence": len(found), "parts": len(parts),
        "parts_per_question": round(len(parts) / max(len(found), 1), 2),
        "most_parts": max(map(len, found.values()), default=0),
        "over_max_parts": sum(len(ps) > args.max_parts for ps in found.values()),
        "under_25_chars": len(short), "heading_alone": len(headings),
        "kept_twice": sum(twice.values()),
        "sentences": sentence_scores(found, gold),
        "characters": character_scores(found, gold,
                                       gold_passages(args.dataset, args.questions)),
        "examples": {"short": short[:5], "heading": headings[:5]},
    }, indent=1, ensure_ascii=False))
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            for r in rows:
                sel = {_norm(s) for s in gold[r["id"]]}
                f.write(f"## {r['id']}\nQ: {r['question']}\nA: {r['answer']}\n")
                for p in r["relevant_parts"]:
                    f.write(f"  {'*' if _norm(p) in sel else '-'} {' '.join(p.split())}\n")
                f.write("  selected:\n" + "".join(f"    | {s}\n" for s in gold[r["id"]])
                        + "\n")


if __name__ == "__main__":
    main()
