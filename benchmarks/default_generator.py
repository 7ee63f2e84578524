"""Benchmark: does the default generator answer when the evidence is in its context?

For each packaged local model (`qwen` = Qwen2.5 0.5B Instruct, `qwen-1.5b` = Qwen2.5-Coder 1.5B
Instruct) and generation prompt (`paper`, `abstain`, and `abstain-v1`, the abstain prompt before
issue 33, frozen here), answers two sets of questions with the gold passage as the only context:

- `clapnq`: the first 30 questions of `clapnq_dev_answerable_first150.jsonl.gz` (long answers in
  the annotators' words), the gold passage from `clapnq_dev_passages.jsonl.gz`;
- `squad`: the 60 questions of the SQuAD demo (`data/demo_squad`), the SQuAD paragraph holding
  the answer from its documents.parquet;
- `squad-c1000` (context only): the same questions with the demo run's BM25 C_1000 as the
  generate stage builds it (`budget_contexts`), those whose Score_IR@1000 is 1 (the evidence is
  in the context, among ~1,000 tokens of other passages: the setting of issue 33).

Every question is also asked without context (the LLM-only prompt). Calls go through ragdash's
LLM layer as the generate stage makes them (`local` backend, one llama.cpp server per model,
2 threads unless `--threads` says otherwise, the default settings: temperature 0, 256 tokens),
one at a time and with no reply cache, so latencies are measured (on a shared CPU they vary with
its load). Reported per model x prompt x set x mode: n, refusals (ragdash's refusal rule),
correct (not a refusal, and ROUGE-L >= 0.5 or containing a gold answer, as
`ragdash.analysis.reference` computes them), mean ROUGE-L, mean latency, and for LLM-only the
share of answers that mention documents or a context.

Each answer is appended to `answers.jsonl` as it finishes; a restart skips the answers already
there whose prompt text is unchanged (its digest is stored), so it resumes after a stop.

    nohup nice .venv/bin/python benchmarks/default_generator.py > /tmp/dg.log 2>&1 &
    .venv/bin/python benchmarks/default_generator.py --models qwen-1.5b --prompts abstain
    .venv/bin/python benchmarks/default_generator.py --summary-only --markdown  # the table
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from ragdash.analysis.reference import score
from ragdash.constants import PROJECT_ROOT
from ragdash.llm.factory import make_backend
from ragdash.llm.generate import generation_call
from ragdash.llm.local.models import model_alias
from ragdash.llm.local.server import LocalServer
from ragdash.llm.prompts import GENERATION_PROMPTS, generation_messages
from ragdash.llm.refusal import ABSTAIN_SENTENCE, RefusalRule
from ragdash.llm.runner import CallOutcome, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import LLMError

CLAPNQ = PROJECT_ROOT.parent / "shared" / "data" / "clapnq"
SQUAD = PROJECT_ROOT / "data" / "demo_squad"
OUT = PROJECT_ROOT / "benchmarks" / "results" / "default-generator"
MODELS = ("qwen", "qwen-1.5b")
PROMPTS = ("paper", "abstain-v1", "abstain")
SETS = ("clapnq", "squad", "squad-c1000")
CONTEXT_ONLY = {"squad-c1000"}
CONTEXTS = {"clapnq": "gold passage", "squad": "gold passage",
            "squad-c1000": "BM25 C_1000 holding the evidence"}
"""Sets asked with context only (their questions are another set's: LLM only would repeat it)."""
MODES = ("context", "llm_only")
MENTION = re.compile(r"\b(?:documents?|context)\b", re.IGNORECASE)
"""An LLM-only answer that matches this speaks of documents or a context it was never given."""

# The `abstain` prompt before issue 33 (ragdash <= this benchmark), kept to measure it again.
_V1_RAG = ("Given the documents below, your role is to answer the query using only these "
           "documents. Respond with a precise, one-sentence explanation. If the documents do "
           f'not contain the answer, reply exactly: "{ABSTAIN_SENTENCE}"'
           "\n\nQuery:\n{question}\n\nDocuments:\n{context}\n\nAnswer:")
_V1_LLM_ONLY = ("Respond to the query with a precise, one-sentence explanation. If you do not "
                f'know the answer, reply exactly: "{ABSTAIN_SENTENCE}"\nQuery: {{question}}')


def messages(prompt: str, question: str, context: str | None) -> list[dict[str, str]]:
    """The generation messages of a prompt: ragdash's own, or the frozen `abstain-v1`."""
    if prompt in GENERATION_PROMPTS:
        return generation_messages(question, context, prompt=prompt)
    if prompt == "abstain-v1":
        template = _V1_LLM_ONLY if context is None else _V1_RAG
        return [{"role": "user", "content": template.format(question=question, context=context)}]
    raise ValueError(f"unknown prompt {prompt!r}")


def prompt_digest(prompt: str) -> str:
    """A short hash of a prompt's text in both modes (a changed prompt is measured again)."""
    text = "\x00".join(m["content"] for ctx in (None, "{c}")
                       for m in messages(prompt, "{q}", ctx))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_clapnq(folder: Path, n: int) -> list[dict[str, Any]]:
    """The first `n` answerable questions: qid, question, gold answers, gold passage."""
    with gzip.open(folder / "clapnq_dev_passages.jsonl.gz", "rt", encoding="utf-8") as f:
        passages = {p["doc_id"]: p["text"] for p in map(json.loads, f)}
    with gzip.open(folder / "clapnq_dev_answerable_first150.jsonl.gz", "rt",
                   encoding="utf-8") as f:
        records = [json.loads(line) for line in f][:n]
    return [{"qid": str(r["id"]), "question": r["input"],
             "golds": [o["answer"] for o in r["output"] if o.get("answer")],
             "context": passages.get(f"{r['id']}-0", r["passages"][0]["text"])}
            for r in records]


def load_squad(folder: Path) -> list[dict[str, Any]]:
    """The demo's questions with every gold answer and the paragraph that holds the answer."""
    examples = pd.read_parquet(folder / "examples.parquet")
    docs = pd.read_parquet(folder / "documents.parquet").set_index("doc_id")["text"]
    return [{"qid": str(e.qid), "question": e.question, "golds": [str(a) for a in e.answers],
             "context": docs[e.paragraph]} for e in examples.itertuples()]


def load_squad_retrieved(folder: Path, retriever: str = "bm25",
                         budget: int = 1000) -> list[dict[str, Any]]:
    """The demo's questions whose Score_IR@budget is 1 for `retriever`, with its C_budget as the
    context (cut as the run's generate stage cuts it)."""
    from ragdash.rundir import Run
    from ragdash.scoring.contexts import budget_contexts

    run = Run(folder)
    cfg = run.manifest["config"]
    ctx = budget_contexts(run, cfg["tokenizer"], cfg["scoring"]["mode"], budget)
    ctx = dict(zip(ctx.loc[ctx["retriever"] == retriever, "qid"].astype(str),
                   ctx.loc[ctx["retriever"] == retriever, "text"], strict=True))
    ir = pd.read_parquet(folder / "ir_scores.parquet")
    full = set(ir.loc[(ir["retriever"] == retriever) & (ir["budget"] == budget)
                      & (ir["score"] >= 1.0), "qid"].astype(str))
    return [{**q, "context": ctx[q["qid"]]} for q in load_squad(folder)
            if q["qid"] in full and q["qid"] in ctx]


def done_keys(path: Path) -> set[tuple[str, ...]]:
    """(model, prompt, digest, set, mode, qid) of the answers already in the JSONL."""
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line) if line.strip() else None
        if r and not r.get("error"):
            keys.add((r["model"], r["prompt"], r["digest"], r["set"], r["mode"], r["qid"]))
    return keys


def todo(sets: dict[str, list[dict]], prompts: list[str], modes: list[str], model: str,
         done: set[tuple[str, ...]]) -> Iterator[tuple[str, str, str, dict]]:
    """(prompt, set, mode, question) still to answer for one model."""
    for prompt in prompts:
        for mode in modes:
            for name, questions in sets.items():
                if mode == "llm_only" and name in CONTEXT_ONLY:
                    continue
                for q in questions:
                    if (model, prompt, prompt_digest(prompt), name, mode, q["qid"]) not in done:
                        yield prompt, name, mode, q


def run(sets: dict[str, list[dict]], models: list[str], prompts: list[str], modes: list[str],
        out: Path, threads: int = 2) -> None:
    """Answer every (model, prompt, set, mode, question) not yet in `out/answers.jsonl`, on a
    llama.cpp server with `threads` threads."""
    path = out / "answers.jsonl"
    out.mkdir(parents=True, exist_ok=True)
    done = done_keys(path)
    rule = RefusalRule()
    for model in models:
        jobs = list(todo(sets, prompts, modes, model, done))
        if not jobs:
            continue
        settings = LLMSettings(backend="local", model=model)
        print(f"{model}: {len(jobs)} answers to go", flush=True)
        started, restarts = time.monotonic(), 0
        while jobs:
            # one llama.cpp server per model; started again if it goes away
            log = Path(tempfile.gettempdir()) / f"default-generator-{model}.log"
            with LocalServer(model, n_threads=threads, log_path=log) as server:
                backend = make_backend(settings, base_url=server.base_url)
                while jobs:
                    prompt, name, mode, q = jobs[0]
                    context = q["context"] if mode == "context" else None
                    call = generation_call(messages(prompt, q["question"], context))
                    try:
                        outcome = dispatch_calls(backend, [call], settings)[0]
                    except LLMError as exc:  # the server is gone: start it again
                        restarts += 1
                        print(f"  {model}: {exc}; restart {restarts}", flush=True)
                        if restarts > 5:
                            raise
                        break
                    jobs.pop(0)
                    write_row(path, {**answer_row(model, prompt, name, mode, q, outcome, rule),
                                     "threads": threads})
                    total = len(jobs)
                    if total % 20 == 0:
                        print(f"  {model}: {total} to go ({time.monotonic() - started:.0f} s)",
                              flush=True)


def answer_row(model: str, prompt: str, name: str, mode: str, q: dict, outcome: CallOutcome,
               rule: RefusalRule) -> dict[str, Any]:
    """The JSONL record of one answer, scored."""
    r = outcome.result
    answer = r.text.strip() if r else None
    s = score(answer, q["golds"])
    return {"model": model, "alias": model_alias(model), "prompt": prompt,
            "digest": prompt_digest(prompt), "set": name, "mode": mode, "qid": q["qid"],
            "answer": answer, "error": outcome.error,
            "latency_s": round(r.latency_s, 3) if r else None,
            "tokens_in": r.tokens_in if r else None, "tokens_out": r.tokens_out if r else None,
            "refusal": rule.match(answer) is not None, "contains": bool(s.contains),
            "rouge_l": round(s.rouge_l, 4),
            "mentions_documents": bool(answer and MENTION.search(answer))}


def write_row(path: Path, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def summarise(out: Path, prompts: list[str]) -> pd.DataFrame:
    """One row per model x prompt x set x mode, from the answers of the current prompt texts."""
    rows = [json.loads(line) for line in (out / "answers.jsonl").read_text().splitlines()
            if line.strip()]
    df = pd.DataFrame(rows)
    current = {p: prompt_digest(p) for p in prompts}
    df = df[df["prompt"].map(current) == df["digest"]]
    df = df[df["error"].isna()].drop_duplicates(["model", "prompt", "set", "mode", "qid"],
                                                keep="last")
    df["correct"] = ~df["refusal"] & (df["contains"] | (df["rouge_l"] >= 0.5))
    table = df.groupby(["model", "prompt", "set", "mode"], sort=False).agg(
        n=("qid", "size"), refusals=("refusal", "mean"), correct=("correct", "mean"),
        rouge_l=("rouge_l", "mean"), latency_s=("latency_s", "mean"),
        tokens_out=("tokens_out", "mean"), mentions_documents=("mentions_documents", "mean"))
    order = {p: i for i, p in enumerate(prompts)}
    table = table.reset_index().sort_values(
        ["mode", "model", "prompt", "set"], key=lambda s: s.map(order) if s.name == "prompt"
        else s, kind="stable")
    return table.round(3).reset_index(drop=True)


def markdown(table: pd.DataFrame) -> str:
    """The summary as a Markdown table (percentages; the document share for LLM only)."""
    lines = ["| model | prompt | set | context | n | refusals | correct | ROUGE-L | latency (s) "
             "| mentions documents |", "|" + "---|" * 10]
    for r in table.itertuples():
        mentions = f"{r.mentions_documents:.0%}" if r.mode == "llm_only" else ""
        lines.append(f"| {model_alias(r.model)} | {r.prompt} | {r.set} | "
                     f"{CONTEXTS[r.set] if r.mode == 'context' else 'none (LLM only)'} | {r.n} | "
                     f"{r.refusals:.0%} | {r.correct:.0%} | {r.rouge_l:.2f} | {r.latency_s:.1f} "
                     f"| {mentions} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--prompts", nargs="+", default=list(PROMPTS), choices=PROMPTS)
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--clapnq", type=Path, default=CLAPNQ)
    ap.add_argument("--squad", type=Path, default=SQUAD)
    ap.add_argument("--n-clapnq", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2,
                    help="llama.cpp threads (2, as ragdash starts the server)")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    if not args.summary_only:
        loaders = {"clapnq": lambda: load_clapnq(args.clapnq, args.n_clapnq),
                   "squad": lambda: load_squad(args.squad),
                   "squad-c1000": lambda: load_squad_retrieved(args.squad)}
        run({s: loaders[s]() for s in args.sets}, args.models, args.prompts, args.modes,
            args.out, args.threads)
    table = summarise(args.out, list(PROMPTS))
    (args.out / "summary.json").write_text(json.dumps(
        {"prompts": {p: prompt_digest(p) for p in PROMPTS},
         "rows": table.to_dict("records")}, indent=1) + "\n")
    print(markdown(table) if args.markdown else table.to_string(index=False))


if __name__ == "__main__":
    main()
