"""The ragas side of `benchmarks/ragas_agreement.py`: the real library's four RAGAS metrics on
the same inputs, through the same OpenAI-compatible server and model.

Runs in its own virtualenv (ragas 0.4.3 pins openai 1.x, ragdash runs on 3.x; docs/metrics.md),
so it imports nothing from ragdash (only the stdlib helpers of ragas_agreement.py beside
it). The metrics are ragas 0.4's own (`ragas.metrics.collections`:
Faithfulness, AnswerRelevancy with strictness 3, ContextPrecisionWithReference, ContextRecall),
its LLM `llm_factory(model, client=AsyncOpenAI(base_url=...))` (instructor, JSON mode) at
temperature 0 with ragas' own reply cache (`DiskCacheBackend`: a killed run resumes, and
answer relevancy's 3 identical prompts, which at temperature 0 get one reply, cost one call),
its embeddings `HuggingFaceEmbeddings` on the MiniLM weights ragdash loads
(`--embeddings`, a sentence-transformers folder). One JSON line per answer is appended to
ragas.jsonl (a metric that raised is null with its error kept); answers already there are
skipped on a restart. Every request and reply goes to ragas_calls.jsonl (the evidence for
the differences).

    /tmp/ragas-venv/bin/python benchmarks/ragas_runner.py --out R \
        --base-url http://127.0.0.1:8765/v1 --embeddings PATH
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

from ragas_agreement import METRIC_NAMES, append_jsonl, done_ids, read_jsonl  # stdlib only


def _logging_client(base_url: str, log: Path, timeout_s: float) -> Any:
    """An AsyncOpenAI client whose every request body and reply is appended to `log`."""
    import httpx
    from openai import AsyncOpenAI

    async def record(response: httpx.Response) -> None:
        await response.aread()
        try:
            request = json.loads(response.request.content or b"{}")
        except json.JSONDecodeError:
            request = {}
        append_jsonl(log, {"status": response.status_code, "messages": request.get("messages"),
                           "params": {k: v for k, v in request.items() if k != "messages"},
                           "reply": response.text})

    http = httpx.AsyncClient(timeout=timeout_s, event_hooks={"response": [record]})
    return AsyncOpenAI(base_url=base_url, api_key="not-needed", http_client=http,
                       max_retries=0)


def _metrics(client: Any, model: str, max_tokens: int, embeddings: str,
             cache_dir: Path) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ragas.cache import DiskCacheBackend
        from ragas.embeddings.huggingface_provider import HuggingFaceEmbeddings
        from ragas.llms import llm_factory
        from ragas.metrics.collections import (
            AnswerRelevancy,
            ContextPrecisionWithReference,
            ContextRecall,
            Faithfulness,
        )

    llm = llm_factory(model, client=client, temperature=0.0, max_tokens=max_tokens,
                      cache=DiskCacheBackend(cache_dir=str(cache_dir)))
    emb = HuggingFaceEmbeddings(model=embeddings, device="cpu")
    return {"faithfulness": Faithfulness(llm=llm),
            "answer_relevancy": AnswerRelevancy(llm=llm, embeddings=emb, strictness=3),
            "context_precision": ContextPrecisionWithReference(llm=llm),
            "context_recall": ContextRecall(llm=llm)}


def _unreachable(exc: BaseException) -> bool:
    """Whether the server could not be reached (anywhere in the exception's chain)."""
    from openai import APIConnectionError

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, APIConnectionError | ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _score(metrics: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    args = {"faithfulness": {"user_input": r["question"], "response": r["answer"],
                             "retrieved_contexts": r["contexts"]},
            "answer_relevancy": {"user_input": r["question"], "response": r["answer"]},
            "context_precision": {"user_input": r["question"], "reference": r["gold"],
                                  "retrieved_contexts": r["contexts"]},
            "context_recall": {"user_input": r["question"], "reference": r["gold"],
                               "retrieved_contexts": r["contexts"]}}
    out: dict[str, Any] = {"id": r["id"], "errors": {}}
    for name in METRIC_NAMES:
        try:
            value = float((await metrics[name].ascore(**args[name])).value)
            out[name] = None if math.isnan(value) else value
        except Exception as exc:  # a failure of the library is a result here
            if _unreachable(exc):
                raise  # not a result: the answer is scored again on the next run
            out[name] = None
            out["errors"][name] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return out


async def run(out: Path, base_url: str, model: str, max_tokens: int, embeddings: str) -> None:
    client = _logging_client(base_url, out / "ragas_calls.jsonl", 900.0)
    metrics = _metrics(client, model, max_tokens, embeddings, out / "ragas_cache")
    path = out / "ragas.jsonl"
    done = done_ids(path)
    for r in read_jsonl(out / "inputs.jsonl"):
        if r["id"] in done:
            continue
        t0 = time.monotonic()
        append_jsonl(out / "ragas_calls.jsonl", {"answer": r["id"]})
        rec = await _score(metrics, r)
        rec["seconds"] = time.monotonic() - t0
        append_jsonl(path, rec)
        print(f"ragas {r['id']}: " + ", ".join(f"{m}={rec[m]}" for m in METRIC_NAMES)
              + (f" errors={rec['errors']}" if rec["errors"] else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    ap.add_argument("--model", default="qwen")
    ap.add_argument("--max-tokens", type=int, default=384)
    ap.add_argument("--embeddings", required=True,
                    help="sentence-transformers folder of MiniLM (ragdash.embeddings.model_path)")
    args = ap.parse_args()
    asyncio.run(run(args.out, args.base_url, args.model, args.max_tokens, args.embeddings))


if __name__ == "__main__":
    main()
