"""The metrics of a run's answers: items from the run tables (the chunks of each answer's C_N),
the LLM steps through the LLM layer, then one row per answer with a column per metric.

Rows: qid, system, budget, model, one column per metric in use, `error` (the steps that failed,
"step: message; ..."; "no answer" for an answer that failed to generate), `notes` (why a metric
is NaN without an error: no retrieved context for an LLM-only answer), calls, tokens_in,
tokens_out, latency_s and `detail` (JSON: the claims and verdicts the metrics were computed
from, and `cost`: each step's [calls, tokens in, tokens out])."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ragdash.budget import SEPARATOR
from ragdash.constants import LLM_ONLY
from ragdash.llm.cache import LLMCache
from ragdash.llm.factory import calls_session
from ragdash.llm.runner import Progress, dispatch_calls
from ragdash.llm.settings import LLMSettings
from ragdash.llm.types import Backend
from ragdash.metrics import METRICS, resolve, steps_for
from ragdash.metrics import ragas as R
from ragdash.metrics import ragchecker as RC
from ragdash.metrics.calls import MetricItem, TaskOutcome, answer_task

if TYPE_CHECKING:
    from ragdash.executors import Executor
    from ragdash.rundir import Run
    from ragdash.scoring.contexts import ContextCut

NO_ANSWER = "no answer"
NO_CONTEXT = "no retrieved context (LLM only): context metrics not applicable"
BASE_COLUMNS = ["qid", "system", "budget", "model"]
TAIL_COLUMNS = ["error", "notes", "calls", "tokens_in", "tokens_out", "latency_s", "detail"]


def metric_columns(use: Iterable[str] | str | None) -> list[str]:
    """The table's columns for the metrics `use` selects."""
    return [*BASE_COLUMNS, *resolve(use), *TAIL_COLUMNS]


# --- items ------------------------------------------------------------------------------------


def cut_chunks(texts: Sequence[str], length: int) -> tuple[str, ...]:
    """The chunks of a context cut at `length` characters (C_N): those that start before the
    cut, the last one cut there."""
    out, pos = [], 0
    for t in texts:
        if pos >= length:
            break
        out.append(t[: length - pos])
        pos += len(t) + len(SEPARATOR)
    return tuple(out)


def items_from_run(run: Run, cut: ContextCut, answers: pd.DataFrame | None = None,
                   limit: int | None = None) -> list[MetricItem]:
    """One item per answer of the run (of its first `limit` questions): the chunks of the C_N
    the answer was generated from (cut as generation cut them: `cut`), each flagged when it
    holds a gold relevant part (ragdash's relevance, `relevant_chunks` with the run's
    scoring.relevance_share)."""
    from ragdash.scoring.contexts import budget_contexts
    from ragdash.scoring.ir_metrics import relevant_chunks

    answers = run.read("answers") if answers is None else answers
    examples = run.read("examples").assign(qid=lambda d: d["qid"].astype(str))
    qids = list(examples["qid"])[: limit or None]
    answers = answers[answers["qid"].astype(str).isin(set(qids))]
    ex = examples.set_index("qid")
    retrieved = run.read("retrieved").sort_values(["qid", "retriever", "rank"])
    from ragdash.systems.store import chunk_table

    chunks = chunk_table(run)
    text_of = dict(zip(chunks["chunk_id"].astype(str), chunks["text"], strict=True))
    ranked: dict[tuple[str, str], list[str]] = {}
    for q, r, c in zip(retrieved["qid"].astype(str), retrieved["retriever"],
                       retrieved["chunk_id"].astype(str), strict=True):
        ranked.setdefault((q, r), []).append(c)
    parts = {q: [str(p) for p in ex.loc[q, "parts"]] for q in qids}
    qrels = relevant_chunks(chunks, parts, cut.relevance_share)
    relevant = set(zip(qrels["query_id"].astype(str), qrels["doc_id"].astype(str), strict=True))
    budgets = sorted({int(b) for b in answers["budget"].dropna()})
    cut_at = {}
    for b in budgets:
        ctx = budget_contexts(run, cut.tokenizer, cut.mode, b, answers["system"].unique())
        cut_at.update({(q, r, b): len(t) for q, r, t in ctx.itertuples(index=False)})
    items = []
    for a in answers.itertuples(index=False):
        q = str(a.qid)
        budget = None if pd.isna(a.budget) else int(a.budget)
        text = None if a.answer is None or pd.isna(a.answer) else str(a.answer)
        error = None if a.error is None or pd.isna(a.error) else str(a.error)
        chunk_texts = flags = None
        if a.system != LLM_ONLY and budget is not None:
            ids = ranked.get((q, a.system), [])
            chunk_texts = cut_chunks([text_of[c] for c in ids], cut_at.get((q, a.system, budget),
                                                                           0))
            flags = tuple((q, c) in relevant for c in ids[: len(chunk_texts)])
        items.append(MetricItem(q, a.system, budget, str(ex.loc[q, "question"]),
                                str(ex.loc[q, "answer"]), text, chunk_texts, flags, error))
    return items


# --- scores -----------------------------------------------------------------------------------


def _verdicts(item: MetricItem, v: dict[str, Any]) -> RC.Verdicts:
    mine, gold = v.get("answer_claims"), v.get("gold_claims")
    return RC.verdicts(
        v.get("precision_check"), v.get("recall_check"),
        v.get("chunk_answer") if mine is not None else None,
        v.get("chunk_gold") if gold is not None else None,
        item.parts_relevant, answer_claims=len(mine or []), gold_claims=len(gold or []))


def score_outcome(item: MetricItem, o: TaskOutcome, names: Sequence[str],
                  embed: R.Embed | None) -> dict[str, Any]:
    """The metric values of one answer from its steps' outcome: NaN where a step it reads
    failed (its error named in `error`) or where it needs a context the answer had none of."""
    v = o.values
    rc = RC.scores(_verdicts(item, v))
    questions = v.get("questions")
    values = {**rc,
              "faithfulness": R.faithfulness(v.get("nli")),
              "answer_relevancy": (R.answer_relevancy(item.question, questions[0], questions[1],
                                                      embed) if questions and embed else
                                   math.nan),
              "context_precision": R.context_precision(v.get("chunk_useful")),
              "context_recall": R.context_recall(v.get("recall_attribution"))}
    row: dict[str, Any] = {}
    failed: dict[str, str] = {}
    notes: list[str] = []
    for name in names:
        m = METRICS[name]
        if m.context and item.chunks is None:
            row[name] = math.nan
            continue
        broken = [s for s in m.steps if s in o.errors]
        row[name] = math.nan if broken else values[name]
        for s in broken:
            failed[s] = o.errors[s]
        if not broken and math.isnan(row[name]):
            notes.append(f"{name}: undefined (nothing to score: no claims or sentences)")
    row["error"] = "; ".join(f"{s}: {e}" for s, e in failed.items()) or None
    if item.chunks is None and any(METRICS[n].context for n in names):
        notes.insert(0, NO_CONTEXT)
    row["notes"] = "; ".join(notes) or None
    return row


def _detail(item: MetricItem, o: TaskOutcome) -> str:
    return json.dumps({"values": o.values, "parts_relevant": item.parts_relevant,
                       "chunks": len(item.chunks) if item.chunks is not None else None,
                       "cost": o.cost},
                      default=str)


def evaluate(items: Iterable[MetricItem], settings: LLMSettings, *,
             use: Iterable[str] | str | None = None, cache: LLMCache | str | Path | None = None,
             progress: Progress | None = None, backend: Backend | None = None,
             executor: Executor | None = None, embed: R.Embed | None = None,
             max_corrections: int | None = None) -> pd.DataFrame:
    """The metrics `use` selects (default: all) of every item, one row per item
    (`metric_columns`). `embed`: texts -> vectors for answer relevancy (default MiniLM, loaded
    only when that metric is used). `max_corrections`: correction rounds after an unreadable
    reply (default `settings.retries`)."""
    names = resolve(use)
    steps = steps_for(names)
    items = list(items)
    todo = [i for i, it in enumerate(items) if it.error is None and it.answer
            and it.answer.strip()]
    tasks = [answer_task(items[i], steps, settings, max_corrections) for i in todo]
    with calls_session(settings, cache, backend) as (be, store):
        outcomes = dispatch_calls(be, tasks, settings, progress, cache=store,
                                  executor=None if backend is not None else executor) \
            if tasks else []
        model = be.model
    if "answer_relevancy" in names and embed is None and any(
            o.values.get("questions") for o in outcomes):
        embed = R.minilm()
    by_index = dict(zip(todo, outcomes, strict=True))
    rows = []
    for i, it in enumerate(items):
        base = {"qid": it.qid, "system": it.system, "budget": it.budget, "model": model}
        o = by_index.get(i)
        if o is None:
            rows.append({**base, **dict.fromkeys(names, math.nan), "error": NO_ANSWER,
                         "notes": None, "calls": 0, "tokens_in": 0, "tokens_out": 0,
                         "latency_s": 0.0, "detail": None})
            continue
        rows.append({**base, **score_outcome(it, o, names, embed), "model": o.model or model,
                     "calls": o.calls, "tokens_in": o.tokens_in, "tokens_out": o.tokens_out,
                     "latency_s": o.latency_s, "detail": _detail(it, o)})
    return metrics_frame(rows, names)


def metrics_frame(rows: list[dict[str, Any]], names: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=metric_columns(list(names)))
    df["budget"] = df["budget"].astype("Int64")
    for col in ("calls", "tokens_in", "tokens_out"):
        df[col] = df[col].astype("Int64")
    for col in (*names, "latency_s"):
        df[col] = df[col].astype("float64")
    for col in ("qid", "system", "model", "error", "notes", "detail"):
        df[col] = df[col].astype("object").where(df[col].notna(), None)
    return df
