"""Agreement of ragdash's RAGAS metrics with the real `ragas` library on the same answers.

Three steps, the first two resumable (one JSON line per answer, appended as it finishes;
answers already in the file are skipped on a restart):

1. `inputs`: the first `--n` questions' answers of one retriever system of a run, each with
   its question, gold answer and the chunks of the C_N it was generated from, rebuilt by
   `ragdash.metrics.evaluate.items_from_run` (what `ragdash metrics` scores) -> inputs.jsonl;
2. `ragdash`: ragdash's `faithfulness`, `answer_relevancy`, `context_precision`,
   `context_recall` of each input through an OpenAI-compatible server -> ragdash.jsonl;
   the ragas side is `benchmarks/ragas_runner.py`, run by the ragas virtualenv on the same
   inputs and server -> ragas.jsonl;
3. `compare`: per metric, n (answers both sides scored), each side's mean, the mean absolute
   difference (MAD), Spearman's rho with its p-value, and the NaN/errors of each side ->
   a Markdown table (and agreement.json), then both sides' values per answer.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/ragas_agreement.py inputs --out R
    PYTHONPATH=$PWD .venv/bin/python benchmarks/ragas_agreement.py ragdash --out R \
        --base-url http://127.0.0.1:8765/v1
    /tmp/ragas-venv/bin/python benchmarks/ragas_runner.py --out R \
        --base-url http://127.0.0.1:8765/v1
    PYTHONPATH=$PWD .venv/bin/python benchmarks/ragas_agreement.py compare --out R
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

METRIC_NAMES = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
"""The RAGAS metrics both sides compute (ragdash.metrics' `ragas` group)."""
INPUTS, RAGDASH, RAGAS = "inputs.jsonl", "ragdash.jsonl", "ragas.jsonl"


# --- JSON lines -------------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file ([] when absent); a torn last line (a run killed while
    writing) is skipped."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one line, flushed (NaN written as null)."""
    clean = {k: (None if isinstance(v, float) and math.isnan(v) else v)
             for k, v in record.items()}
    with path.open("a") as f:
        f.write(json.dumps(clean) + "\n")
        f.flush()


def done_ids(path: Path) -> set[str]:
    return {str(r["id"]) for r in read_jsonl(path)}


# --- the comparison ---------------------------------------------------------------------------


def _value(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def agreement(ours: Sequence[Any], theirs: Sequence[Any]) -> dict[str, Any]:
    """Agreement of two score lists aligned by answer: n (pairs where both are numbers), each
    side's mean over those pairs, the mean absolute difference, Spearman's rho and its
    two-sided p-value (NaN when fewer than 3 pairs or a side is constant), and the count of
    missing values (NaN/None/errors) on each side."""
    from scipy.stats import spearmanr

    if len(ours) != len(theirs):
        raise ValueError(f"the two sides have {len(ours)} and {len(theirs)} values")
    a = [_value(v) for v in ours]
    b = [_value(v) for v in theirs]
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (math.isnan(x) or math.isnan(y))]
    n = len(pairs)
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    rho = p = math.nan
    if n >= 3 and len(set(xs)) > 1 and len(set(ys)) > 1:
        res = spearmanr(xs, ys)
        rho, p = float(res.statistic), float(res.pvalue)
    return {"n": n,
            "mean_ragdash": sum(xs) / n if n else math.nan,
            "mean_ragas": sum(ys) / n if n else math.nan,
            "mad": sum(abs(x - y) for x, y in pairs) / n if n else math.nan,
            "spearman": rho, "p_value": p,
            "missing_ragdash": sum(math.isnan(x) for x in a),
            "missing_ragas": sum(math.isnan(y) for y in b)}


def compare(inputs: Iterable[dict], ours: Iterable[dict], theirs: Iterable[dict],
            metrics: Sequence[str] = METRIC_NAMES) -> list[dict[str, Any]]:
    """One `agreement` row per metric over the inputs both sides have a record of."""
    mine = {str(r["id"]): r for r in ours}
    other = {str(r["id"]): r for r in theirs}
    ids = [str(r["id"]) for r in inputs if str(r["id"]) in mine and str(r["id"]) in other]
    return [{"metric": m, "answers": len(ids),
             **agreement([mine[i].get(m) for i in ids], [other[i].get(m) for i in ids])}
            for m in metrics]


def per_answer(inputs: Iterable[dict], ours: Iterable[dict], theirs: Iterable[dict],
               metrics: Sequence[str] = METRIC_NAMES) -> str:
    """Both sides' values per answer both have scored, "ragdash/ragas" per metric (Markdown)."""
    mine = {str(r["id"]): r for r in ours}
    other = {str(r["id"]): r for r in theirs}

    def f(v: Any) -> str:
        x = _value(v)
        return "NaN" if math.isnan(x) else f"{x:.2f}"

    lines = ["| question | answer | " + " | ".join(metrics) + " |",
             "|---|---|" + "---|" * len(metrics)]
    for r in inputs:
        i = str(r["id"])
        if i in mine and i in other:
            cells = [f"{f(mine[i].get(m))}/{f(other[i].get(m))}" for m in metrics]
            lines.append(f"| {r['question'][:50]} | {r['answer'][:60]} | " + " | ".join(cells)
                         + " |")
    return "\n".join(lines)


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The comparison as a Markdown table."""
    def f(x: float, d: int = 3) -> str:
        return "–" if isinstance(x, float) and math.isnan(x) else f"{x:.{d}f}"

    head = ("| metric | n | mean ragdash | mean ragas | MAD | Spearman (p) | NaN/error "
            "ragdash · ragas |\n|---|---|---|---|---|---|---|")
    body = [f"| {r['metric']} | {r['n']} | {f(r['mean_ragdash'])} | {f(r['mean_ragas'])} | "
            f"{f(r['mad'])} | {f(r['spearman'], 2)} ({f(r['p_value'], 3)}) | "
            f"{r['missing_ragdash']} · {r['missing_ragas']} |" for r in rows]
    return "\n".join([head, *body])


# --- the steps --------------------------------------------------------------------------------


def export_inputs(run_dir: Path, system: str, n: int, out: Path) -> list[dict[str, Any]]:
    """The answers of `system` to the run's first `n` questions, as ragdash's metrics see
    them (question, gold, answer, the chunks of its C_N), written to out/inputs.jsonl.
    data/demo_squad was answered again after the committed n=30 run: a rebuild now gives the
    same chunks but 23 of the 30 answers differ (results/ragas-agreement-n30/inputs.jsonl keeps
    the answers scored)."""
    from ragdash.config import saved_spec
    from ragdash.metrics.evaluate import items_from_run
    from ragdash.rundir import Run
    from ragdash.stages.metrics import context_cut

    run = Run(run_dir)
    answers = run.read("answers")
    answers = answers[answers["system"] == system]
    items = [it for it in items_from_run(run, context_cut(saved_spec(run.manifest)), answers,
                                         limit=n)
             if it.chunks and it.answer and it.error is None]
    records = [{"id": f"{it.qid}|{it.system}|{it.budget}", "qid": it.qid, "system": it.system,
                "budget": it.budget, "question": it.question, "gold": it.gold,
                "answer": it.answer, "contexts": list(it.chunks)} for it in items]
    out.mkdir(parents=True, exist_ok=True)
    (out / INPUTS).write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def run_ragdash(out: Path, base_url: str, model: str, max_tokens: int) -> None:
    """ragdash's four RAGAS metrics per input, one evaluate() per answer, appended to
    out/ragdash.jsonl (replies also kept in out/ragdash_cache.sqlite)."""
    from ragdash.llm.settings import LLMSettings
    from ragdash.metrics.calls import MetricItem
    from ragdash.metrics.evaluate import evaluate
    from ragdash.metrics.ragas import minilm

    settings = LLMSettings(backend="openai", model=model, base_url=base_url, temperature=0.0,
                           max_tokens=max_tokens, structured="json_object", concurrency=1,
                           timeout_s=900.0)
    embed = minilm()
    path, skip = out / RAGDASH, done_ids(out / RAGDASH)
    for r in read_jsonl(out / INPUTS):
        if r["id"] in skip:
            continue
        item = MetricItem(r["qid"], r["system"], r["budget"], r["question"], r["gold"],
                          r["answer"], tuple(r["contexts"]))
        t0 = time.monotonic()
        row = evaluate([item], settings, use=list(METRIC_NAMES), cache=out / "ragdash_cache.sqlite",
                       embed=embed).iloc[0]
        append_jsonl(path, {"id": r["id"], **{m: float(row[m]) for m in METRIC_NAMES},
                            "error": row["error"], "notes": row["notes"],
                            "calls": int(row["calls"]), "seconds": time.monotonic() - t0,
                            "detail": row["detail"]})
        print(f"ragdash {r['id']}: " + ", ".join(f"{m}={row[m]:.3f}" for m in METRIC_NAMES),
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("inputs", "ragdash", "compare"))
    ap.add_argument("--out", type=Path, required=True, help="results folder (outside git)")
    ap.add_argument("--run-dir", type=Path, default=Path("data/demo_squad"))
    ap.add_argument("--system", default="bm25")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    ap.add_argument("--model", default="qwen")
    ap.add_argument("--max-tokens", type=int, default=384)
    args = ap.parse_args()
    if args.step == "inputs":
        records = export_inputs(args.run_dir, args.system, args.n, args.out)
        print(f"{len(records)} answers -> {args.out / INPUTS}")
    elif args.step == "ragdash":
        run_ragdash(args.out, args.base_url, args.model, args.max_tokens)
    else:
        rows = compare(read_jsonl(args.out / INPUTS), read_jsonl(args.out / RAGDASH),
                       read_jsonl(args.out / RAGAS))
        (args.out / "agreement.json").write_text(json.dumps(rows, indent=1))
        print(markdown(rows))
        print()
        print(per_answer(read_jsonl(args.out / INPUTS), read_jsonl(args.out / RAGDASH),
                         read_jsonl(args.out / RAGAS)))


if __name__ == "__main__":
    main()
