"""The dry run's totals on the bundled sample, to compare two versions of the code (issue 48 §2:
the registry loop prices what the switch with a branch per stage priced). Three estimates, no
LLM call: `before_run` of 12 HotpotQA questions with bm25, sim and mlq (generation and a
stepwise judge on), and `dry_run` of the bundled demo run (data/demo_run) with the metrics,
eRAG and the controlled contexts switched on, after and before retrieval; each part's calls,
tokens in and out, model and price, as JSON. The runs root is a fresh folder (no reply cache).

    git archive REV ragdash data configs | tar -x -C /tmp/rev
    PYTHONPATH=/tmp/rev .venv/bin/python benchmarks/dry_run_totals.py rev.json

and compare two such files (identical before and after 3d496a7).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from ragdash.config import SAMPLE_DATASET, RunSpec, deep_merge, load_spec, saved_spec
from ragdash.constants import PROJECT_ROOT
from ragdash.planning import before_run, dry_run
from ragdash.rundir import Run


def _dump(est: dict) -> dict:
    return {k: v if isinstance(v, str) else
            {"calls": v.calls, "tokens_in": v.tokens_in, "tokens_out": v.tokens_out,
             "usd": v.usd, "model": v.model} for k, v in est.items()}


def totals() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        out["before_run"] = _dump(before_run(load_spec(None, {
            "llm.backend": "local", "generation.enabled": True, "generation.prompt": "abstain",
            "judge.enabled": True, "judge.mode": "stepwise", "calibration.enabled": True,
            "dataset.path": str(SAMPLE_DATASET), "dataset.limit": 12,
            "retrievers.use": ["bm25", "sim", "mlq"], "runs_root": tmp})))
        shutil.copytree(PROJECT_ROOT / "data" / "demo_run", Path(tmp) / "demo_run")
        run = Run(Path(tmp) / "demo_run")
        spec = RunSpec.from_config(deep_merge(saved_spec(run.manifest).to_config(), {
            "runs_root": tmp, "metrics": {"enabled": True, "limit": 5},
            "erag": {"enabled": True, "limit": 5}, "stress": {"enabled": True, "limit": 3}}))
        out["dry_run_demo"] = _dump(dry_run(run, spec))
        out["dry_run_demo_before_retrieval"] = _dump(dry_run(run, spec, retrieved=False))
    return out


if __name__ == "__main__":
    text = json.dumps(totals(), indent=1, sort_keys=True)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text)
    print(text)
