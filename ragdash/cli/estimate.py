"""`ragdash estimate`: saved thresholds h and k applied to a run that has only retrieval
scores, giving the expected shares of answer quality without an LLM call (the paper's
estimate of answer quality from Score_IR)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `estimate` on the `ragdash` subparsers."""
    est = sub.add_parser("estimate", help="estimate answer quality of a run from retrieval alone",
                         description="Apply saved thresholds (a calibration.json) to a run that "
                                     "has only retrieval scores; no LLM call is made.")
    est.add_argument("--run-dir", required=True, help="run with ir_scores.parquet")
    est.add_argument("--thresholds", help="calibration.json giving h and k")
    est.add_argument("--h", type=float, help="threshold h (instead of --thresholds)")
    est.add_argument("--k", type=float, help="threshold k (instead of --thresholds)")
    est.add_argument("--budget", type=int, help="token budget N (default: the calibration's)")
    est.add_argument("--judge-model", default="gpt-4o", help="judge priced for calls avoided")
    return est


def thresholds_file(path: Path) -> dict:
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


def run(args: argparse.Namespace) -> int:
    """Print the estimated shares per retriever and the LLM calls the estimate avoids."""
    from ragdash.planning import estimate_run
    from ragdash.rundir import Run

    if args.thresholds:
        calibration = thresholds_file(Path(args.thresholds))
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
