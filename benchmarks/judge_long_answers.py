"""Benchmark: is a long correct answer in other words judged below a short one?

On N ClapNQ dev questions (every k-th of the file, k = total // N), the judge (the run default:
the bundled local judge in stepwise mode, the gold long answer as reference) scores four answers
to each question:

- `reference`: the annotators' own long answer (the reference itself: a sanity check);
- `other_words`: the sentences the annotators selected from the passage, joined: long, correct
  by construction, and worded as the passage is, not as the reference;
- `short`: the reference's first sentence alone: short, correct, in the reference's words;
- `generated`: the local generator's answer with the gold passage as its context.

It prints, per kind, the mean judge score, the share judged 5, ROUGE-L and the MiniLM cosine
with the reference, and counts the questions where `other_words` is judged below `short`. Every
call goes through the reply cache of the runs root, so a second run costs nothing.

    nice .venv/bin/python benchmarks/judge_long_answers.py --n 30 --out /tmp/judge-long.json
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pandas as pd

from ragdash.analysis.reference import minilm_embed, score_answers
from ragdash.constants import PROJECT_ROOT
from ragdash.llm.generate import generate
from ragdash.llm.judge import Candidate, JudgeItem, judge
from ragdash.llm.settings import LLMSettings
from ragdash.text import split_sentences

CLAPNQ = PROJECT_ROOT.parent / "shared" / "data" / "clapnq" / \
    "clapnq_dev_answerable_first150.jsonl.gz"
KINDS = ("reference", "other_words", "short", "generated")


def load(path: Path, n: int) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    step = max(len(records) // n, 1)
    return records[::step][:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=CLAPNQ)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--cache", type=Path, default=PROJECT_ROOT / "runs" / "_llm_cache.sqlite")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    records = load(args.data, args.n)
    rows = []
    for r in records:
        gold = r["output"][0]["answer"]
        selected = r["output"][0]["selected_sentences"]
        rows.append({"qid": str(r["id"]), "question": r["input"], "gold": gold,
                     "passage": r["passages"][0]["text"],
                     "other_words": " ".join(s.strip() for s in selected),
                     "short": (split_sentences(gold) or [gold])[0]})
    frame = pd.DataFrame(rows)
    generated = generate([(q.qid, "generated", None, q.question, q.passage)
                          for q in frame.itertuples()],
                         LLMSettings(backend="local", max_tokens=200), cache=args.cache,
                         prompt="abstain")
    frame["generated"] = generated["answer"].fillna("").to_list()
    frame["reference"] = frame["gold"]
    items = [JudgeItem(q.qid, q.question, q.gold, [], [
        Candidate(kind, getattr(q, kind), None, None) for kind in KINDS])
        for q in frame.itertuples()]
    judged = judge(items, LLMSettings(backend="local", model="qwen-1.5b", max_tokens=96),
                   cache=args.cache, mode="stepwise", shuffle=False)
    answers = pd.DataFrame([{"qid": q.qid, "system": kind, "budget": None,
                             "answer": getattr(q, kind), "error": None}
                            for q in frame.itertuples() for kind in KINDS])
    examples = frame.assign(answer=frame["gold"], answers=[[g] for g in frame["gold"]])
    ref = score_answers(answers, examples, embed=minilm_embed)
    table = ref.merge(judged[["qid", "system", "score", "error"]], on=["qid", "system"])
    table["words"] = answers["answer"].str.split().str.len().to_numpy()
    summary = table.groupby("system").agg(
        n=("score", "count"), words=("words", "median"), mean_score=("score", "mean"),
        judged_5=("score", lambda s: float((s == 5).mean())), rouge_l=("rouge_l", "mean"),
        similarity=("similarity", "mean")).reindex(list(KINDS))
    wide = table.pivot(index="qid", columns="system", values="score")
    below = int((wide["other_words"] < wide["short"]).sum())
    above = int((wide["other_words"] > wide["short"]).sum())
    print(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\nother_words judged below short on {below} of {len(wide)} questions, above on "
          f"{above}; judge errors: {int(table['error'].notna().sum())}")
    args.out.write_text(json.dumps({
        "n": len(frame), "summary": summary.reset_index().to_dict("records"),
        "other_words_below_short": below, "other_words_above_short": above,
        "rows": table.assign(score=table["score"].astype("Int64").astype(object))
        .to_dict("records")}, indent=1, default=str))


if __name__ == "__main__":
    main()
