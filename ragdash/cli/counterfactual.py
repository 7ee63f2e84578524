"""`ragdash counterfactual --file en_fact.json.gz --out DIR`: RGB's counterfactual robustness
test (Chen et al., AAAI 2024) of a generator: error detection and error correction rates with
Wilson 95 % intervals, the per-question table and summary.json under DIR."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ragdash.cli.options import add_declared, add_llm_options, declared_overrides, llm_options
from ragdash.section import checked
from ragdash.stress.settings import CounterfactualSettings
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
    add_declared(p, SETTINGS, model=CounterfactualSettings)
    p.add_argument("--config", help="YAML config (its llm section and runs_root: the reply "
                                    "cache)")
    add_llm_options(p, "the generator tested")
    add_llm_options(p, "the judge's (--checker judge; default: the generator's)", "judge",
                    "judge.llm")
    p.add_argument("--dry-run", action="store_true",
                   help="only estimate the calls, tokens, cost and time (no LLM call)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return p


SETTINGS = {name: name for name in CounterfactualSettings.model_fields}
"""Each option of the test (--limit, --passages, --checker) and the `CounterfactualSettings`
field it sets."""
OPTIONS: dict[str, str] = {**llm_options(), **llm_options("judge", "judge.llm")}
"""Each LLM option and the dotted config key it sets."""


STAND_IN_REPLY = "There are factual errors in the provided documents. The correct answer is 2023."
"""Stands in for a reply not made yet when a dry run prices its check (`--checker judge`)."""
CHECK_TOKENS = 12
"""Tokens assumed per check reply ("Yes, the model has identified the factual errors.")."""


def dry_run(records: list[FactRecord], llm: LLMSettings, root: RunsRoot, passages: int,
            judge: LLMSettings | None = None) -> list[str]:
    """The estimate of the calls a run would send, those the reply cache answers left out;
    with `judge`, also of the checks (one per reply: a reply not made yet is a stand-in)."""
    from ragdash.llm.plan import answered_note, cache_answers, cache_only, price
    from ragdash.stress.counterfactual import calls
    from ragdash.stress.counterfactual_check import check_calls

    plan = calls(records, passages)
    with cache_only(llm, root) as replies:
        got = [c(replies) if replies is not None else None for c in plan]
    done = [o is not None and o.error is None for o in got]
    est = price([c for c, d in zip(plan, done, strict=True) if not d], llm, root, REPLY_TOKENS)
    lines = [f"Dry run, no LLM call made. The test would cost:\n  counterfactual: {est}"]
    notes = [answered_note("counterfactual", sum(done))] if any(done) else []
    if judge is not None:
        checks = check_calls([o.result.text.strip() if d else STAND_IN_REPLY
                              for o, d in zip(got, done, strict=True)])
        checked = cache_answers(checks, judge, root)
        est = price([c for c, d in zip(checks, checked, strict=True) if not d], judge, root,
                    CHECK_TOKENS)
        lines.append(f"  check: {est} (one per reply received)")
        notes += [answered_note("check", sum(checked))] if any(checked) else []
    return lines + notes


def _endpoint(what: str, llm: LLMSettings) -> None:
    print(f"[llm] {what}: {llm.backend} model {llm.model or '(default)'}"
          + (f" at {llm.base_url}" if llm.base_url else ""), file=sys.stderr)


def _bar(progress: Any, name: str) -> Any:
    """The (done, total) callback of the calls, on the command's bars."""
    return (lambda d, t: progress(name, d, t)) if progress else None


def run(args: argparse.Namespace, progress: Any = None) -> int:
    from ragdash.config import load_spec
    from ragdash.data.rgb import LICENCE, load_fact
    from ragdash.llm.types import LLMError
    from ragdash.rundir.root import RunsRoot
    from ragdash.stages.generate import generator_settings
    from ragdash.stages.judge import judge_settings
    from ragdash.stress.counterfactual import run_counterfactual
    from ragdash.stress.counterfactual_check import run_checks
    from ragdash.stress.counterfactual_summary import summarise, write

    test = checked(CounterfactualSettings, declared_overrides(args, SETTINGS), "counterfactual")
    spec = load_spec(args.config, {k: getattr(args, o) for o, k in OPTIONS.items()
                                   if getattr(args, o)})
    llm, root = generator_settings(spec), RunsRoot(spec.runs_root)
    judge = judge_settings(spec) if test.checker == "judge" else None
    records, issues = load_fact(args.file, test.limit)
    for issue in issues[:5]:
        print(f"warning: {safe(issue)}", file=sys.stderr)
    if not records:
        raise ValueError(f"{args.file}: no usable RGB record")
    print(f"{len(records)} questions of {args.file}, {test.passages} passages each. {LICENCE}")
    if args.dry_run:
        print("\n".join(dry_run(records, llm, root, test.passages, judge)))
        return 0
    _endpoint("counterfactual", llm)
    try:
        table = run_counterfactual(records, llm, cache=root.llm_cache, passages=test.passages,
                                   progress=_bar(progress, "counterfactual"))
        if judge is not None:
            _endpoint("check", judge)
            table = run_checks(table, judge, cache=root.llm_cache, progress=_bar(progress, "check"))
    except LLMError as exc:
        raise RuntimeError(f"{exc}. Finished calls are kept in the LLM reply cache: run the "
                           "same command again to resume.") from exc
    summary = summarise(table, test.checker)
    paths = write(table, summary, args.out, {
        "file": str(args.file), "passages": test.passages, "checker": test.checker,
        "llm": llm.to_manifest(), "judge": judge.to_manifest() if judge else None})
    print("\n".join(summary.lines()))
    print(f"Wrote {paths[0]} and {paths[1]}.")
    if summary.failed:
        print(f"warning: {summary.failed} calls failed (see the error column); run again to "
              "retry them (finished calls come from the cache)", file=sys.stderr)
    return 0 if summary.n else 2
