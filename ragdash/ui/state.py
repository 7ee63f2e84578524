"""Streamlit state shared by pages: which runs exist, the selected run, cached tables.

Runs: the bundled demo runs (`RAGDASH_DEMO_RUN`, one path or several joined by `os.pathsep`;
default `data/demo_squad` then `data/demo_run`) first, then every run under the runs root
(`RAGDASH_RUNS_ROOT`, default `runs/`). The selected run lives in the sidebar selectbox `run`,
bound to the URL (`?run=...`). Tables are cached with `st.cache_data`, keyed by file path and
modification time, so a rewritten file is re-read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash import analysis, judge_audit
from ragdash.budget import Tokenizer, get_tokenizer
from ragdash.runs import Run, list_runs

ROOT = Path(__file__).resolve().parents[2]


DEMOS = ("data/demo_squad", "data/demo_run")
"""The bundled demos, the one the dashboard opens on first: its fit is informative."""


def demo_paths() -> list[Path]:
    env = os.environ.get("RAGDASH_DEMO_RUN")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [ROOT / d for d in DEMOS]


def is_demo(run: Run) -> bool:
    return any(run.path.resolve() == p.resolve() for p in demo_paths())


def description(run: Run) -> str:
    """The run's one-line description (config `description`), if any."""
    return str(run.manifest.get("config", {}).get("description") or "")


def runs_root() -> Path:
    return Path(os.environ.get("RAGDASH_RUNS_ROOT") or ROOT / "runs")


def run_key(path: Path) -> str:
    """How a run is named in the URL: its path relative to the project (or absolute)."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def available_runs() -> dict[str, Run]:
    """{url key: Run}, the demo runs first, then runs under the runs root (newest first)."""
    out: dict[str, Run] = {}
    for path in demo_paths():
        demo = Run(path)
        if demo.exists():
            out[run_key(demo.path)] = demo
    for r in list_runs(runs_root()):
        out.setdefault(run_key(r.path), r)
    return out


def select_run(container=None) -> Run | None:
    """The sidebar run picker; returns the selected run (None when there is none)."""
    runs = available_runs()
    box = container or st.sidebar
    if not runs:
        box.info("No run yet: build one on **Build a run**.")
        return None
    from ragdash.ui.widgets import url_select

    asked = st.query_params.get("run")
    if asked and asked not in runs and "run" not in st.session_state:
        box.warning(f"Run '{asked}' (from the link) was not found; showing "
                    f"'{next(iter(runs))}' instead.")

    def fmt(k: str) -> str:
        r = runs[k]
        return f"{r.id} (demo)" if is_demo(r) else r.id

    key = url_select("Run", list(runs), "run", container=box, format_func=fmt,
                     help="The run directory every page shows: the demos first, then the runs "
                          f"under `{run_key(runs_root())}`.")
    if text := description(runs[key]):
        box.caption(text)
    return runs[key]


def current_run() -> Run | None:
    runs = available_runs()
    key = st.session_state.get("run")
    if key in runs:
        return runs[key]
    return next(iter(runs.values()), None)


def require_run() -> Run:
    """The selected run, or an info box and stop."""
    run = current_run()
    if run is None:
        st.info("There is no run to show yet. Build one on the **Build a run** page, or with "
                "`ragdash run --config configs/paper.yaml --limit 100`.")
        st.stop()
    return run


@st.cache_resource(show_spinner="Loading the tokenizer…")
def tokenizer(spec: str) -> Tokenizer:
    """The run's tokenizer (loaded once per server)."""
    return get_tokenizer(spec)


def stamp(path: Path) -> int:
    return path.stat().st_mtime_ns if path.exists() else 0


@st.cache_data(show_spinner=False, max_entries=128)
def _read(path: str, mtime_ns: int) -> pd.DataFrame:
    p = Path(path)
    return pd.read_csv(p) if p.suffix == ".csv" else pd.read_parquet(p)


def table(run: Run, name: str) -> pd.DataFrame | None:
    """A run table (DESIGN §3 name or file name), cached; None when the file is missing."""
    f = run.file(name)
    if not f.exists():
        return None
    return _read(str(f), stamp(f))


def ir_scores_or_stop(run: Run) -> pd.DataFrame:
    """The run's Score_IR table; without one, an informative notice and the page stops."""
    from ragdash.ui import widgets

    ir = table(run, "ir_scores")
    if ir is None:
        widgets.missing("No retrieval scores in this run", "its score stage has not run yet.")
        st.stop()
    return ir


@st.cache_data(show_spinner=False, max_entries=32)
def _json(path: str, mtime_ns: int) -> dict:
    return json.loads(Path(path).read_text())


def calibration(run: Run) -> dict | None:
    f = run.path / "calibration.json"
    return _json(str(f), stamp(f)) if f.exists() else None


def manifest(run: Run) -> dict:
    f = run.path / "run.json"
    return _json(str(f), stamp(f)) if f.exists() else {}


def order(run: Run) -> list[str]:
    """Retrievers in the run's configured order."""
    return list(manifest(run).get("config", {}).get("retrievers", {}).get("use", []))


def retrievers(run: Run) -> list[str]:
    """The retrievers scored in this run, in display order."""
    ir = table(run, "ir_scores")
    names = ir["retriever"].unique() if ir is not None else order(run)
    return analysis.order_systems(names, order(run))


def budgets(run: Run) -> list[int]:
    ir = table(run, "ir_scores")
    return sorted(int(b) for b in ir["budget"].unique()) if ir is not None else []


def generation_budget(run: Run) -> int | None:
    return manifest(run).get("config", {}).get("generation", {}).get("budget")


def answers(run: Run) -> pd.DataFrame | None:
    """answers.parquet, one row per (qid, system) (a budget sweep keeps the main budget)."""
    return analysis.primary(table(run, "answers"), generation_budget(run))


def judgments(run: Run) -> pd.DataFrame | None:
    """judgments.parquet, one row per (qid, system) (main budget, one judge model)."""
    return analysis.primary(table(run, "judgments"), generation_budget(run))


def config(run: Run) -> dict:
    return manifest(run).get("config", {})


# --- cached computations (keyed by the run path and its files' stamps) --------------------------


def _stamps(run: Run, *names: str) -> tuple[int, ...]:
    return tuple(stamp(run.file(n)) for n in names)


@st.cache_data(show_spinner="Bootstrapping confidence bands…", max_entries=16)
def _bands(path: str, stamps: tuple, n_boot: int) -> pd.DataFrame:
    return analysis.bootstrap_curves(Run(path).read("ir_scores"), n_boot=n_boot)


def bands(run: Run, n_boot: int = 1000) -> pd.DataFrame:
    return _bands(str(run.path), _stamps(run, "ir_scores"), n_boot)


@st.cache_data(show_spinner=False, max_entries=64)
def _diff(path: str, stamps: tuple, a: str, b: str) -> pd.DataFrame:
    return analysis.difference_curve(Run(path).read("ir_scores"), a, b)


def difference(run: Run, a: str, b: str) -> pd.DataFrame:
    return _diff(str(run.path), _stamps(run, "ir_scores"), a, b)


@st.cache_data(show_spinner="Preparing the threshold panel…", max_entries=16)
def _thresholds(path: str, stamps: tuple, budget: int) -> analysis.ThresholdData:
    run = Run(path)
    gen = run.manifest.get("config", {}).get("generation", {}).get("budget")
    j = analysis.primary(run.read("judgments"), gen) if run.has("judgments") else None
    cal_file = run.path / "calibration.json"
    cal = json.loads(cal_file.read_text()) if cal_file.exists() else None
    order_ = list(run.manifest.get("config", {}).get("retrievers", {}).get("use", []))
    return analysis.threshold_data(run.read("ir_scores"), j, budget, order_, cal)


def thresholds(run: Run, budget: int) -> analysis.ThresholdData:
    stamps = (*_stamps(run, "ir_scores", "judgments"), stamp(run.path / "calibration.json"))
    return _thresholds(str(run.path), stamps, int(budget))


@st.cache_data(show_spinner="Measuring how well retrieval predicts the judge…", max_entries=16)
def _predictiveness(path: str, stamps: tuple, budget: int) -> dict | None:
    from ragdash.calibration.predictive import predictiveness as measure

    data = _thresholds(path, stamps, budget)
    return measure(data.pairs) if data.has_judgments else None


def predictiveness(run: Run, budget: int) -> dict | None:
    """`ragdash.calibration.predictive.predictiveness` at `budget` (None without judgments):
    the same pairs, bootstrap and seed as the calibrate stage."""
    stamps = (*_stamps(run, "ir_scores", "judgments"), stamp(run.path / "calibration.json"))
    return _predictiveness(str(run.path), stamps, int(budget))


@st.cache_data(show_spinner=False, max_entries=256)
def _question(path: str, stamps: tuple, qid: str) -> dict[str, pd.DataFrame]:
    run = Run(path)
    retrieved = _read(str(run.file("retrieved")), stamps[0])
    chunks = _read(str(run.file("chunks")), stamps[1])
    return analysis.question_chunks(retrieved, chunks, qid)


def question_chunks(run: Run, qid: str) -> dict[str, pd.DataFrame]:
    """{retriever: its chunks for `qid` in rank order (rank, chunk_id, title, text, score)}."""
    if not (run.has("retrieved") and run.has("chunks")):
        return {}
    return _question(str(run.path), _stamps(run, "retrieved", "chunks"), str(qid))


@st.cache_data(show_spinner=False, max_entries=16)
def _audit(path: str, stamps: tuple) -> list[judge_audit.Check]:
    run = Run(path)
    gen = run.manifest.get("config", {}).get("generation", {}).get("budget")
    judged = analysis.primary(run.read("judgments"), gen)
    answers_ = analysis.primary(run.read("answers"), gen) if run.has("answers") else None
    examples = run.read("examples") if run.has("examples") else None
    return judge_audit.audit(judged, answers_, examples)


def audit(run: Run) -> list[judge_audit.Check]:
    """The judge audit of the run's main judgments (empty without judgments)."""
    if not run.has("judgments"):
        return []
    return _audit(str(run.path), _stamps(run, "judgments", "answers", "examples"))
