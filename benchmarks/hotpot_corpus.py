"""Write HotpotQA paragraph corpora of growing size (JSONL: doc_id, title, text) for the
corpus-size sweep of docs/reproducing-the-paper.md.

The paper retrieves from 100,000 Wikipedia intro paragraphs; offline, the largest set of such
paragraphs is the one in the HotpotQA files of the shared data folder. Corpora written, each
holding the one before it:

- `q100.jsonl`: the context paragraphs of the first 100 questions of the bundled sample (what
  `--limit 100` retrieves from);
- `q300.jsonl`, `q600.jsonl`: those of the first 300 and 600 questions;
- `all.jsonl`: all 11,606 paragraphs of the sample (1,186 questions);
- `wide.jsonl`: `all` plus the paragraphs of the IRCoT dev subsample (500 questions) and of the
  HotpotQA train sample (100 questions) whose titles are not in it;
- `all-no-distractors.jsonl`: `all` without the distractor paragraphs of the first 100
  questions (HotpotQA picked them by bigram TF-IDF similarity to the question, so they are hard
  negatives for a lexical retriever); their gold paragraphs stay;
- `q100-join2.jsonl`, `q100-join4.jsonl`: the paragraphs of `q100`, every 2 or 4 consecutive
  ones of a question's context joined with a space into one longer document (as the sections
  of an article), so that 5 chunks reach N = 1000 tokens and many chunks pass MiniLM's 256
  word-pieces.

A paragraph is identified by its title (the first text seen wins, the sample's first), its text
is its sentences joined with "" as the dataset loader does (`ragdash.data.hotpotqa`), so the
relevant parts are found verbatim. IRCoT joins sentences with two spaces: they are made one.

    .venv/bin/python benchmarks/hotpot_corpus.py ../shared/data/hotpotqa runs/repro/corpora

(`data/` holds the sample alone: every corpus but `wide` can be made from it.)
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections.abc import Iterable
from pathlib import Path

SAMPLE = "hotpot_dev_distractor_v1_subset1186.json.gz"
IRCOT = "hotpotqa_dev_ircot_subsampled500.jsonl.gz"
TRAIN = "hotpot_train_v1.1_sample100.json.gz"
SIZES = {"q100": 100, "q300": 300, "q600": 600, "all": None}


def _paragraphs(records: Iterable[dict]) -> Iterable[tuple[str, str]]:
    for rec in records:
        for title, sentences in rec["context"]:
            yield title, "".join(sentences)


def _ircot(path: Path) -> Iterable[tuple[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            for c in json.loads(line)["contexts"]:
                yield c["title"], re.sub(r"(?<=\S)  (?=\S)", " ", c["paragraph_text"])


def add(corpus: dict[str, str], paragraphs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """`corpus` ({title: text}) with the paragraphs whose title it lacks added, in order."""
    for title, text in paragraphs:
        if title not in corpus and text.strip():
            corpus[title] = text
    return corpus


def build(data_dir: Path) -> dict[str, dict[str, str]]:
    """{corpus name: {title: text}} for the names of the module docstring, nested."""
    with gzip.open(data_dir / SAMPLE, "rt", encoding="utf-8") as fh:
        sample = json.load(fh)
    out: dict[str, dict[str, str]] = {}
    corpus: dict[str, str] = {}
    for name, n in SIZES.items():
        corpus = add(dict(corpus), _paragraphs(sample[:n]))
        out[name] = corpus
    if (data_dir / TRAIN).is_file() and (data_dir / IRCOT).is_file():
        with gzip.open(data_dir / TRAIN, "rt", encoding="utf-8") as fh:
            train = json.load(fh)
        out["wide"] = add(add(dict(corpus), _ircot(data_dir / IRCOT)), _paragraphs(train))
    else:
        print(f"wide.jsonl left out: {IRCOT} and {TRAIN} are not both in {data_dir}")
    gold = {title for rec in sample[:100] for title, _ in rec["supporting_facts"]}
    distractors = {t for rec in sample[:100] for t, _ in rec["context"]} - gold
    out["all-no-distractors"] = {t: x for t, x in out["all"].items() if t not in distractors}
    for n in (2, 4):
        out[f"q100-join{n}"] = joined(sample[:100], n)
    return out


def joined(records: list[dict], n: int) -> dict[str, str]:
    """Every `n` consecutive paragraphs of each record's context (each title once, the first
    time it is seen) joined with a space; keyed by their titles joined with ' | '."""
    seen: set[str] = set()
    out: dict[str, str] = {}
    for rec in records:
        paras = [(t, "".join(s)) for t, s in rec["context"] if t not in seen]
        seen.update(t for t, _ in paras)
        for i in range(0, len(paras), n):
            group = paras[i:i + n]
            out[" | ".join(t for t, _ in group)] = " ".join(x for _, x in group)
    return out


def write(corpus: dict[str, str], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for title, text in corpus.items():
            fh.write(json.dumps({"doc_id": title, "title": title, "text": text},
                                ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir", type=Path, help="the folder of the HotpotQA files")
    ap.add_argument("out_dir", type=Path)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, corpus in build(args.data_dir).items():
        write(corpus, args.out_dir / f"{name}.jsonl")
        print(f"{name}.jsonl: {len(corpus):,} documents")


if __name__ == "__main__":
    main()
