"""`ragdash counterfactual --file en_fact.json.gz --out DIR`: RGB's counterfactual robustness
test (Chen et al., AAAI 2024) of a generator: error detection and error correction rates with
Wilson 95 % intervals, the per-question table and summary.json under DIR."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ragdash.robustness.counterfactual import PASSAGES
from ragdash.terminal import safe

if TYPE_CHECKING:
    from ragdash.data.rgb import FactRecord
    from ragdash.llm.settings import LLMSettings
    from ragdash.rundir.root import RunsRoot

HELP = "RGB's counterfactual robustness of a generator: does it spot false documents?"
REPLY_TOKENS = 60
"""Tokens assumed per reply for the estimate (the factual-errors sentence and an answer)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `counterfactual` on the `ragdash` subparsers."""
    p = sub.add_parser(
        "counterfactual", help=HELP,
        description=HELP + " Each question of RGB's en_fact split is asked over passages "
        "that state a false answer, with RGB's instruction; a reply saying 'factual errors' "
        "detects the error, and one that also holds the true answer corrects it (RGB's "
        "rules, docs/metrics.md). Replies are cached: a re-run asks only what is missing. "
        "RGB data is CC BY-NC-SA 4.0.")
    p.add_argument("--file", required=True, help="RGB's en_fact.json(.gz) (JSON lines)")
    p.add_argument("--out", required=True, help="folder for counterfactual.parquet and "
                                                "summary.json")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--passages", type=int, default=PASSAGES,
                   help=f"counterfactual passages per question (RGB: {PASSAGES})")
    p.add_argument("--config", help="YAML config (its llm section and runs_root: the reply "
                                    "cache)")
    p.add_argument("--llm-backend", help="LLM backend: local, ollama or openai")
    p.add_argument("--llm-model", help="LLM model (local default: qwen-1.5b)")
    p.add_argument("--llm-url", help="base URL of the LLM server")
    p.add_argument("--dry-run", action="store_true",
                   help="only estimate the calls, tokens, cost and time (no LLM call)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return p


OPTIONS: dict[str, str] = {"llm_backend": "llm.backend", "llm_model": "llm.model",
                           "llm_url": "llm.base_url"}
"""Each LLM option and the dotted config key it sets."""


def dry_run(records: list[FactRecord], llm: LLMSettings, root: RunsRoot,
            passages: int) -> list[str]:
    """The estimate of the calls a run would send (those the reply cache answers left out)."""
    from ragdash.llm.cost import estimate_prompts
    from ragdash.llm.speed import call_speed, model_name
    from ragdash.planning import answered_note, cache_answers
    from ragdash.robustness.counterfactual import calls

    plan = calls(records, passages)
    done = cache_answers(plan, llm, root)
    model = model_name(llm)
    est = estimate_prompts([c.messages for c, d in zip(plan, done, strict=True) if not d],
                           model, tokens_out=REPLY_TOKENS, speed=call_speed(root, model,
                                                                            llm.backend),
                           backend=llm.backend)
    lines = [f"Dry run, no LLM call made. The test would cost:\n  counterfactual: {est}"]
    if any(done):
        lines.append(answered_note("counterfactual", sum(done)))
    return lines


def run(args: argparse.Namespace, progress: Any = None) -> int:
    from ragdash.config import load_spec
    from ragdash.data.rgb import LICENCE, load_fact
    from ragdash.llm.types import LLMError
    from ragdash.robustness.counterfactual import run_counterfactual
    from ragdash.robustness.summary import summarise, write
    from ragdash.rundir.root import RunsRoot
    from ragdash.stages.generate import generator_settings

    if args.passages < 1:
        raise ValueError("--passages must be at least 1")
    spec = load_spec(args.config, {k: getattr(args, o) for o, k in OPTIONS.items()
                                   if getattr(args, o)})
    llm, root = generator_settings(spec), RunsRoot(spec.runs_root)
    records, issues = load_fact(args.file, args.limit)
    for issue in issues[:5]:
        print(f"warning: {safe(issue)}", file=sys.stderr)
    if not records:
        raise ValueError(f"{args.file}: no usable RGB record")
    print(f"{len(records)} questions of {args.file}, {args.passages} passages each. {LICENCE}")
    if args.dry_run:
        print("\n".join(dry_run(records, llm, root, args.passages)))
        return 0
    print(f"[llm] counterfactual: {llm.backend} model {llm.model or '(default)'}"
          + (f" at {llm.base_url}" if llm.base_url else ""), file=sys.stderr)
    try:
        table = run_counterfactual(records, llm, cache=root.llm_cache, passages=args.passages,
                                   progress=(lambda d, t: progress("counterfactual", d, t))
                                   if progress else None)
    except LLMError as exc:
        raise RuntimeError(f"{exc}. Finished calls are kept in the LLM reply cache: run the "
                           "same command again to resume.") from exc
    summary = summarise(table)
    paths = write(table, summary, args.out, {"file": str(args.file), "passages": args.passages,
                                             "llm": llm.to_manifest()})
    print("\n".join(summary.lines()))
    print(f"Wrote {paths[0]} and {paths[1]}.")
    if summary.failed:
        print(f"warning: {summary.failed} calls failed (see the error column); run again to "
              "retry them (finished calls come from the cache)", file=sys.stderr)
    return 0 if summary.n else 2
