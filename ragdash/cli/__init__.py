"""`ragdash` command line: parses arguments and calls the pipeline."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from ragdash.budget import TOKENIZERS


def stage_commands() -> dict[str, tuple[tuple[str, ...] | None, str]]:
    """{subcommand: (the stages it runs, help)}: one per stage of the registry (with what it
    needs; a stage that works on an existing run has its own sub-command), and `run` for every
    configured stage."""
    from ragdash.stages import REGISTRY
    from ragdash.stages.runner import chain

    out: dict[str, tuple[tuple[str, ...] | None, str]] = {
        s.cli: (chain(s.name), s.about) for s in REGISTRY if not s.on_run_dir}
    out["run"] = (None, "run every stage the config asks for (LLM stages when enabled)")
    return out


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (e.g. configs/paper.yaml)")
    p.add_argument("--run-dir", help="run directory (default: <runs_root>/<config name>)")
    p.add_argument("--dataset", help="dataset file (HotpotQA/SQuAD JSON, JSONL, CSV, Parquet)")
    p.add_argument("--corpus", help="corpus file, folder or .zip (for generic datasets)")
    p.add_argument("--format", help="dataset format: auto, hotpotqa, squad, jsonl, csv, parquet")
    p.add_argument("--limit", type=int, help="keep only the first N questions")
    p.add_argument("--sheet", help="the sheet of an .xlsx dataset (default: its only sheet with "
                                   "data)")
    p.add_argument("--columns", help="which column holds what, when not named id/question/"
                                     "answer: question=Q,answer=A[,id=I] (id made from the row "
                                     "when none)")
    p.add_argument("--chunker", help="chunking method: semantic, recursive, tokens, none")
    p.add_argument("--retrievers", help="comma-separated: bm25,sim,mmr,reo,mlq")
    p.add_argument("--preset", help="retriever preset: paper or equal-k")
    p.add_argument("--tokenizer", help=f"{', '.join(TOKENIZERS)} or a tokenizer.json path")
    p.add_argument("--budgets", help="token budgets, e.g. 100:1000:100 or 100,500,1000")
    p.add_argument("--scoring", help="Score_IR matching method: substring (default), "
                   "subsequence, normalized, token, contains or semantic")
    p.add_argument("--also", help="more matching methods scored beside --scoring, comma-"
                   "separated (e.g. semantic): curves and calibration can use either")
    p.add_argument("--calibrate-on", help="the matching method h and k are fit on "
                   "(default: --scoring)")
    p.add_argument("--mode", choices=["corrected", "reference"], help="scoring mode")
    p.add_argument("--llm-backend", help="generator (and mlq) LLM: local, ollama or openai")
    p.add_argument("--llm-model", help="generator model name (or GGUF path / smollm2 for local)")
    p.add_argument("--llm-url", help="base URL of an OpenAI-compatible server or Ollama host")
    p.add_argument("--judge-backend", help="judge LLM backend (default: the generator's)")
    p.add_argument("--judge-model", help="judge model name")
    p.add_argument("--judge-url", help="judge server URL (default: --llm-url when the judge "
                                       "uses the generator's backend)")
    p.add_argument("--gen-budget", type=int, help="token budget N of the generation contexts")
    p.add_argument("--executor", choices=["local", "ray"],
                   help="where stages run their batches: local (default) or ray (the optional "
                        "ray extra; same results)")
    p.add_argument("--ray-address", help="Ray cluster: auto, ray://host:10001 (default: start "
                                         "Ray on this machine); implies --executor ray")
    p.add_argument("--workers", type=int, help="Ray: batches run at once (default: the "
                                               "cluster's CPUs); implies --executor ray")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="any config key, dotted, its value read as YAML (repeatable), e.g. "
                        "--set retrievers.params.bm25.k=10 (docs/config.md lists them)")
    p.add_argument("--force", action="store_true", help="redo stages even if up to date")
    p.add_argument("--dry-run", action="store_true",
                   help="run the stages that call no LLM (retrieval, unless mlq would ask "
                        "for sub-questions), then only estimate the LLM calls, tokens, cost "
                        "and time (no LLM call)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def _glossary() -> str:
    """Retrievers and chunkers with their declared parameters, one line each (set them with
    --set retrievers.params.<retriever>.<name>=V or --set chunker.params.<name>=V)."""
    from ragdash import chunking, retrieval

    lines = ["retrievers and their parameters (--set retrievers.params.<retriever>.<name>=V; "
             "presets: " + ", ".join(retrieval.PRESETS) + "):"]
    for name, about in retrieval.DESCRIPTIONS.items():
        lines += [f"  {name:<5} {about}",
                  *(f"        {p.summary()}" for p in retrieval.params_of(name))]
    lines.append("chunkers and their parameters (--chunker M, --set chunker.params.<name>=V):")
    for method in chunking.CHUNKERS:
        lines += [f"  {method:<9} {chunking.describe(method)}",
                  *(f"        {p.summary()}" for p in chunking.params_of(method))]
    lines.append("every config key: docs/config.md")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragdash",
        description="Evaluate RAG retrieval by how much of each relevant part lands in the first "
                    "N tokens of the retrieved context.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in stage_commands().items():
        _common(sub.add_parser(name, help=help_text, description=help_text, epilog=_glossary(),
                               formatter_class=argparse.RawDescriptionHelpFormatter))
    llm = sub.add_parser("llm", help="local LLM server utilities")
    llm_sub = llm.add_subparsers(dest="llm_command", required=True)
    est = sub.add_parser("estimate", help="estimate answer quality of a run from retrieval alone",
                         description="Apply saved thresholds (a calibration.json) to a run that "
                                     "has only retrieval scores; no LLM call is made.")
    est.add_argument("--run-dir", required=True, help="run with ir_scores.parquet")
    est.add_argument("--thresholds", help="calibration.json giving h and k")
    est.add_argument("--h", type=float, help="threshold h (instead of --thresholds)")
    est.add_argument("--k", type=float, help="threshold k (instead of --thresholds)")
    est.add_argument("--budget", type=int, help="token budget N (default: the calibration's)")
    est.add_argument("--judge-model", default="gpt-4o", help="judge priced for calls avoided")
    ref = sub.add_parser("reference", help="score a run's answers against the gold answers "
                         "(exact match, token F1, contains); no LLM",
                         description="Score every answer of an existing run against the "
                                     "dataset's gold answers (SQuAD exact match and token F1, "
                                     "the maximum over the gold answers, and whether it contains "
                                     "one) into reference.parquet. No LLM call; `ragdash run` "
                                     "does it too whenever it generates answers.")
    ref.add_argument("--run-dir", required=True, help="run with answers.parquet")
    job = sub.add_parser("job", help="run the job the dashboard queued in a run directory "
                         "(started by the dashboard; progress in its run.json)",
                         description="Run the stages (or the sweep) that the job record of "
                                     "--run-dir asks for, reporting progress there. The "
                                     "dashboard starts it; an LLM API key comes only in the "
                                     "RAGDASH_JOB_API_KEY environment variable.")
    job.add_argument("--run-dir", required=True, help="run directory (or sweep root)")
    job.add_argument("--lock-fd", type=int, help="the run's lock, handed over by the dashboard")
    serve = llm_sub.add_parser("serve", help="serve the local GGUF model (OpenAI-compatible)")
    serve.add_argument("--model", help="GGUF path or 'smollm2' (default: bundled Qwen2.5 0.5B)")
    serve.add_argument("--port", type=int, default=8011)
    from ragdash.cli.cache import add_parser as add_cache
    from ragdash.cli.evidence import add_parser as add_evidence
    from ragdash.cli.synth import add_parser as add_synth

    add_evidence(sub)
    add_synth(sub)
    add_cache(sub)
    from ragdash.cli.labels import add_parser as add_label

    add_label(sub)
    sweep = sub.add_parser(
        "sweep", help="one run per combination of varied config values, then a leaderboard",
        description="Make one run per combination of the --vary values (cartesian product), "
                    "each in its own directory under --runs-root, sharing indexes and caches; "
                    "finished runs are skipped. Every option of `ragdash run` applies to all.",
        epilog="example: ragdash sweep --config configs/paper.yaml --limit 50 --retrievers bm25 "
               "--vary chunker.method=semantic,recursive --vary retrievers.params.bm25.k=5,10 "
               "--runs-root runs/sweep1", formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(sweep)
    sweep.add_argument("--vary", action="append", required=True, metavar="KEY=V1,V2,...",
                       help="a dotted config key and its values, read as YAML (repeatable)")
    sweep.add_argument("--runs-root", help="where the runs go (default: <runs_root>/<config "
                                           "name>-sweep); indexes and caches are shared there")
    sweep.add_argument("--leaderboard-budget", type=int, metavar="N",
                       help="rank the runs at this token budget (default: 1000 or the largest)")
    return parser


OPTIONS: dict[str, str] = {
    "dataset": "dataset.path", "corpus": "dataset.corpus", "format": "dataset.format",
    "limit": "dataset.limit", "sheet": "dataset.sheet", "columns": "dataset.columns",
    "chunker": "chunker.method", "retrievers": "retrievers.use",
    "preset": "retrievers.preset", "tokenizer": "tokenizer", "budgets": "budgets",
    "scoring": "scoring.method", "mode": "scoring.mode", "also": "scoring.also",
    "calibrate_on": "calibration.scores", "llm_backend": "llm.backend", "llm_model": "llm.model",
    "llm_url": "llm.base_url", "judge_backend": "judge.llm.backend",
    "judge_model": "judge.llm.model", "judge_url": "judge.llm.base_url",
    "gen_budget": "generation.budget", "executor": "executor.kind",
    "ray_address": "executor.address", "workers": "executor.workers",
}
"""Each option of the stage commands and the dotted config key it sets."""


def overrides_from(args: argparse.Namespace) -> dict[str, object]:
    """The options given, as dotted config overrides (then every `--set KEY=VALUE`), for
    `ragdash.config.load_spec`."""
    from ragdash.config import parse_set
    from ragdash.stages import STAGES

    o: dict[str, object] = {key: getattr(args, opt) for opt, key in OPTIONS.items()
                            if getattr(args, opt, None) not in (None, "")}
    if args.dataset and not args.format:  # a new file: detect its format, not the config's
        o["dataset.format"] = "auto"
    if (args.ray_address or args.workers is not None) and not args.executor:
        o["executor.kind"] = "ray"  # a Ray option implies the Ray executor
    # a stage asked for is switched on (`sweep` runs what the config asks, as `run` does)
    for name in stage_commands().get(args.command, ((), ""))[0] or ():
        if switch := STAGES[name].switch:
            o[f"{switch}.enabled"] = True
    o.update(parse_set(text) for text in getattr(args, "set", None) or ())
    return o


class _Bars:
    """tqdm progress bars keyed by stage message prefix."""

    def __init__(self, quiet: bool):
        self.quiet, self.bars = quiet, {}

    def __call__(self, msg: str, done: int, total: int) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        key = msg.split(":")[0]
        bar = self.bars.get(key)
        if bar is None or bar.total != total:
            if bar is not None:
                bar.close()
            bar = self.bars[key] = tqdm(total=total, desc=msg, unit="step", leave=False)
        bar.set_description(msg)
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def _print_summary(run) -> None:
    summary = run.table("ir_summary")
    if summary is not None:
        print("\nMean Score_IR per token budget N (rows) and retriever (columns):")
        print(summary.set_index("budget").to_string(float_format=lambda v: f"{v:.3f}"))
    metrics = run.table("ir_metrics")
    if metrics is not None:
        print("\nChunk-level IR metrics (a chunk is relevant when it holds a relevant part):")
        print(metrics.set_index("retriever").to_string(float_format=lambda v: f"{v:.3f}"))
    j = run.table("judgments")
    if j is not None:
        import pandas as pd

        dist = pd.crosstab(j["system"], j["score"].astype("Int64"), normalize="index")
        errors = j.groupby("system")["score"].apply(lambda s: int(s.isna().sum()))
        print("\nJudge scores per system (share of judged answers; errors kept apart):")
        print(dist.assign(errors=errors).to_string(float_format=lambda v: f"{v:.2f}"))
        audit = run.manifest.get("judge_audit", {})
        for check in audit.get("checks", []):
            if check["status"] == "warn":
                print(f"warning: judge audit, {check['title'].lower()}: {check['finding']}")
        if audit and not audit.get("warnings"):
            print("Judge audit: no warning (spread, consistency, position, true-answer match)")
    _print_reference(run)
    c = run.calibration()
    if c is not None:
        print(f"\nThresholds at N = {c.budget}: h = {c.h:.3f}, k = {c.k:.3f}"
              + (f"  ({c.message})" if c.h_ge_k else ""))
        for name, cls in (("k", "judged 5"), ("h", "judged 1")):
            f = c.fits["pooled"][name]
            majority = max(f.n_positive, f.n - f.n_positive) / f.n
            print(f"{name} agrees with the judge ({cls} or not) on {f.accuracy:.1%} of "
                  f"{f.n} answers, vs {majority:.1%} for always predicting the majority "
                  f"({(f.accuracy - majority) * 100:+.1f} pp)")
        ev = c.evidence or {}
        if ev:
            print(f"Does retrieval predict answer quality here? {ev['verdict']}")
            print(ev.get("refusal_verdict", ""))
        shares = c.shares or {}
        if shares:
            def pct(d: dict) -> str:
                ci = d.get("ci")
                return f"{d['pct']:.1f} %" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")

            print(f"Share judged correct: actual {pct(shares['actual'])}; estimated "
                  + "; ".join(f"{name} {pct(v)}" for name, v in shares["estimates"].items()))
        print(c.estimator_verdict)
    from ragdash.cli.labels import print_trust

    print_trust(run)  # labels, the judge's agreement, the share correct with PPI intervals
    issues = run.manifest.get("issues", {})
    if issues.get("skipped") or issues.get("warnings"):
        print(f"\nInput issues: {issues.get('skipped', 0)} record(s) skipped, "
              f"{issues.get('warnings', 0)} warning(s); all listed in {run.file('issues')}")
    print(f"\nRun directory: {run.path}")


def _endpoint(settings) -> str:
    if settings.base_url:
        return settings.base_url
    return {"local": "a local llama.cpp server started by ragdash",
            "ollama": os.environ.get("OLLAMA_HOST") or "Ollama's default http://127.0.0.1:11434",
            "openai": os.environ.get("OPENAI_BASE_URL") or "OpenAI's default "
                      "https://api.openai.com/v1"}[settings.backend]


def _print_endpoints(cfg: dict, stages) -> None:
    """Where LLM calls (and an API key) will go, said before the first call."""
    from ragdash.llm import LLMSettings
    from ragdash.stages.generate import generator_settings
    from ragdash.stages.judge import judge_settings

    uses = []
    if "retrieve" in stages and "mlq" in cfg["retrievers"]["use"]:
        uses.append(("MLQ sub-questions", LLMSettings.from_config(cfg["llm"])))
    if "generate" in stages:
        uses.append(("generation", generator_settings(cfg)))
    if "judge" in stages:
        uses.append(("judging", judge_settings(cfg)))
    for what, settings in uses:
        print(f"[llm] {what}: {settings.backend} model {settings.model or '(default)'} at "
              f"{_endpoint(settings)}", file=sys.stderr)


def _on_saved(args: argparse.Namespace, overrides: dict) -> dict:
    """The overrides on top of the config saved in `--run-dir`'s run.json when no `--config`
    is given: `ragdash calibrate --run-dir R` goes on with R's own settings instead of the
    defaults (which would redo its stages and overwrite its run.json)."""
    from ragdash.config import deep_merge, expand
    from ragdash.rundir import Run

    if args.config or not args.run_dir:
        return overrides
    saved = Run(args.run_dir).manifest.get("config") if Path(args.run_dir).is_dir() else None
    if not isinstance(saved, dict):
        return overrides
    return deep_merge({k: v for k, v in saved.items() if not k.startswith("_")},
                      expand(overrides))


def _run_stages(args: argparse.Namespace) -> int:
    from ragdash.config import load_spec
    from ragdash.stages.runner import configured_stages, run_stages

    spec = load_spec(args.config, _on_saved(args, overrides_from(args)))
    cfg = spec.to_config()  # the stages read the plain dict
    run_dir = Path(args.run_dir) if args.run_dir else Path(spec.runs_root) / spec.name
    bars = _Bars(args.quiet)
    stages = stage_commands()[args.command][0] or configured_stages(cfg)
    if args.dry_run:
        return _dry_run(cfg, run_dir, stages, args, bars)
    try:
        _print_endpoints(cfg, stages)
        run = run_stages(cfg, run_dir, stages, force=args.force, progress=bars)
    finally:
        bars.close()
    run.update(command=" ".join(["ragdash", *args.argv]))
    if "calibrate" in stages:
        from ragdash.labels import refresh

        refresh(run)  # labels added since calibrate last ran
    for issue in run.manifest.get("issues", {}).get("first", [])[:10]:
        print(f"warning: {issue}", file=sys.stderr)
    for name, stage in run.stages().items():
        for warning in stage.warnings:
            print(f"warning: stage {name}: {warning['message']}", file=sys.stderr)
    _print_summary(run)
    return 0


def _dry_run(cfg: dict, run_dir: Path, stages, args, bars) -> int:
    from ragdash.planning import dry_run
    from ragdash.stages.runner import dry_run_stages, run_stages

    todo = dry_run_stages(cfg, run_dir, stages, args.force)
    try:
        run = run_stages(cfg, run_dir, todo, force=args.force, progress=bars)
    finally:
        bars.close()
    est = dry_run(run, cfg, retrieved="retrieve" in todo or "retrieve" not in stages)
    print("Dry run, no LLM call made. The LLM stages would cost:")
    for stage, e in est.items():
        print(f"  {stage:>10}: {e}")
    print("(time is shown when a rate was measured in the LLM cache; prices: ragdash.llm.cost, "
          "override with RAGDASH_PRICES=prices.yaml)")
    return 0


def _thresholds_file(path: Path) -> dict:
    """h, k (and budget) from a calibration.json; ValueError naming the file otherwise."""
    import json

    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the thresholds file ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON thresholds file ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object with h and k (a calibration.json)")
    for key in ("h", "k"):
        if isinstance(data.get(key), bool) or not isinstance(data.get(key), int | float):
            raise ValueError(f"{path}: field '{key}' is missing or not a number (a "
                             "calibration.json written by `ragdash calibrate` has both)")
    return data


def _print_reference(run) -> None:
    """Mean reference metrics per system, when the run has answers."""
    from ragdash.view import RunView

    t = RunView(run).reference_summary()
    if t is None or t.empty:
        return
    t = t.set_index("system")
    print("\nAnswers against the gold answers (no LLM; mean exact match, token F1, share "
          "containing a gold answer):")
    print(t.to_string(float_format=lambda v: f"{v:.3f}"))


def _reference(args: argparse.Namespace) -> int:
    from ragdash.stages.runner import run_on

    run, counts = run_on(args.run_dir, "reference")
    _print_reference(run)
    print(f"\n{counts['scored']:,} of {counts['answers']:,} answers scored (the others' "
          f"questions have no gold answer); written to {run.file('reference')}")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    from ragdash.planning import estimate_run
    from ragdash.rundir import Run

    if args.thresholds:
        calibration = _thresholds_file(Path(args.thresholds))
    elif args.h is not None and args.k is not None:
        calibration = {"h": args.h, "k": args.k, "budget": args.budget or 1000}
    else:
        raise ValueError("give --thresholds calibration.json, or both --h and --k")
    data = estimate_run(Run(args.run_dir), calibration, args.budget, judge_model=args.judge_model)
    print(f"Estimated answer quality at N = {data['budget']} "
          f"(h = {data['h']:.3f}, k = {data['k']:.3f}), shares in %:")
    for row in data["estimated_shares"]:
        print(f"  {row['retriever']:>6}: correct {row['est_5']:5.1f}  risk of hallucination "
              f"{row['est_2_4']:5.1f}  lacks information {row['est_1']:5.1f}")
    a = data["calls_avoided"]
    print(f"LLM calls avoided: {a['generation_calls']:,} generations + {a['judge_calls']:,} "
          f"judge calls ({data['cost_avoided']['judge']})")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _sigterm_interrupts() -> object:
    """Make SIGTERM stop the command as Ctrl-C does (the running stage is recorded as
    interrupted, finished work kept); returns the handler it replaced (None off the main
    thread, where signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


DEPRECATED = {"index": "chunk"}
"""Old sub-command names still accepted (hidden from the help), each with a note on stderr."""


def _renamed(argv: list[str]) -> list[str]:
    """`argv` with a deprecated sub-command replaced by its new name (and a one-line note)."""
    if argv and argv[0] in DEPRECATED:
        new = DEPRECATED[argv[0]]
        print(f"ragdash: note: `ragdash {argv[0]}` is deprecated; use `ragdash {new}` (the "
              f"stage it runs is called {new})", file=sys.stderr)
        return [new, *argv[1:]]
    return argv


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("ragdash").setLevel(logging.INFO)
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(_renamed(argv))
    args.argv = argv
    from ragdash.config import ConfigError
    from ragdash.data import DataError

    previous = _sigterm_interrupts()
    try:
        if args.command == "estimate":
            return _estimate(args)
        if args.command == "reference":
            return _reference(args)
        if args.command == "job":
            from ragdash.jobs import NICE, run_job

            return run_job(args.run_dir, args.lock_fd, nice=NICE)
        if args.command == "sweep":
            from ragdash.sweep import main as sweep

            bars = _Bars(args.quiet)
            try:
                return sweep(args, overrides_from(args), bars, _print_endpoints)
            finally:
                bars.close()
        if args.command in ("evidence", "synth"):
            from ragdash.cli.evidence import run as find_evidence
            from ragdash.cli.synth import run as synth

            bars = _Bars(args.quiet)
            try:
                return {"evidence": find_evidence, "synth": synth}[args.command](
                    args, progress=bars)
            finally:
                bars.close()
        if args.command == "label":
            from ragdash.cli.labels import run as label

            return label(args)
        if args.command == "cache":
            from ragdash.cli.cache import run as cache

            return cache(args)
        if args.command == "llm":
            from ragdash.llm.local import serve

            serve(model=args.model, port=args.port)
            return 0
        return _run_stages(args)
    except (ConfigError, DataError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"ragdash: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a run directory that is a file, read-only, a full disk
        where = exc.filename or "the run directory"
        print(f"ragdash: error: {where}: {exc.strerror or exc} (check --run-dir and free "
              "space; finished stages are kept)", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM
        stage = getattr(exc, "stage", None)
        print(f"ragdash: interrupted{f' during stage {stage}' if stage else ''}; finished work "
              "is kept, run again to resume", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
