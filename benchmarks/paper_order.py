"""The tables of docs/reproducing-the-paper.md: BM25 against SIM in every run of a sweep.

For each run under a sweep's runs root (`ragdash sweep --runs-root ROOT`), in the order the
sweep made them: mean Score_IR of each retriever at every budget with its 95%
interval over the questions (`ragdash.analysis.compare.mean_ci`), and SIM − BM25 at every
budget, paired over the same questions, with its interval. A run in reference mode averages
only the questions whose context reaches N, as the paper's Table 3.1 does (their number is then
shown). `--chunks` adds the chunk count, their mean length in characters and the share longer
than MiniLM's 256 word-pieces.

    .venv/bin/python benchmarks/paper_order.py /tmp/paper-repro/runs/bm25-k1 [--chunks]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.analysis import compare
from ragdash.run_spec import run_spec
from ragdash.rundir import Run

A, B = "sim", "bm25"


def _runs(root: Path) -> list[Run]:
    runs = [Run(p.parent) for p in root.glob("*/run.json")]
    runs = [r for r in runs if r.has("ir_scores")]
    return sorted(runs, key=lambda r: (r.path / "run.json").stat().st_mtime)


def _over_long(texts: pd.Series) -> float:
    from ragdash.retrieval.long_chunks import _tokenizer, max_tokens

    tok, size = _tokenizer("all-MiniLM-L6-v2"), max_tokens("all-MiniLM-L6-v2")
    n = [len(ids) for ids in tok(texts.tolist(), add_special_tokens=False)["input_ids"]]
    return float(np.mean(np.asarray(n) > size)) if n else 0.0


def _cell(values: np.ndarray, n_all: int, fmt: str,
          bounds: tuple[float, float] = (0.0, 1.0)) -> str:
    """`mean [lo, hi]` of `values` (within `bounds`) over questions, with their number when
    some are missing."""
    if len(values) == 0:
        return "–"
    lo, hi = compare.mean_ci(values, bounds=bounds)
    text = f"{fmt.format(values.mean())} [{fmt.format(lo)[:-1]}, {fmt.format(hi)[:-1]}]"
    return text if len(values) == n_all else f"{text} (n={len(values)})"


def row(run: Run, chunks: bool) -> dict:
    """One line of the table: the run's name, each retriever's mean [lo, hi] per budget and
    SIM − BM25 per budget."""
    ir = run.read("ir_scores").assign(qid=lambda d: d["qid"].astype(str))
    if run_spec(run).scoring.mode == "reference":
        ir = ir[ir["reached"]]
    out: dict = {"run": run.path.name, "questions": ir["qid"].nunique()}
    if chunks:
        c = run.read("chunks")
        out.update(chunks=len(c), chars=round(float(c["text"].str.len().mean())),
                   over_256=f"{_over_long(c['text']):.1%}")
    budgets = sorted(ir["budget"].unique())
    n_all = out["questions"]
    for ret in (B, A):
        for b in budgets:
            v = ir[(ir["retriever"] == ret) & (ir["budget"] == b)]["score"].to_numpy(float)
            out[f"{ret.upper()}@{b}"] = _cell(v, n_all, "{:.3f}")
    for b in budgets:
        m = ir[ir["budget"] == b].pivot(index="qid", columns="retriever", values="score")
        if A in m and B in m:
            out[f"SIM−BM25@{b}"] = _cell(compare.differences(m[A], m[B]), n_all, "{:+.3f}",
                                            compare.DIFFERENCES)
    return out


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown table of `frame` (its columns as the header)."""
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a sweep's runs root")
    ap.add_argument("--chunks", action="store_true", help="add chunk counts and lengths")
    args = ap.parse_args()
    rows = [row(r, args.chunks) for r in _runs(args.root)]
    if not rows:
        raise SystemExit(f"no scored run under {args.root}")
    print(markdown(pd.DataFrame(rows).fillna("")))


if __name__ == "__main__":
    main()
