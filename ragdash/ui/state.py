"""Streamlit state shared by pages: which runs exist, the selected run, cached tables.

Runs: the bundled demo runs (`RAGDASH_DEMO_RUN`, one path or several joined by `os.pathsep`;
default `data/demo_squad` then `data/demo_run`) first, then every run under the runs root
(`RAGDASH_RUNS_ROOT`, default `runs/`). The selected run lives in the sidebar selectbox `run`,
bound to the URL (`?run=...`). Tables are cached with `st.cache_data`, keyed by file path and
modification time, so a rewritten file is re-read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash import dashboard_settings, judge_audit
from ragdash.analysis import compare, frames, leaderboard, matching
from ragdash.analysis.thresholds import ThresholdData
from ragdash.budget import Tokenizer, get_tokenizer
from ragdash.chunking.preview import ChunkPreview, preview
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import FILES, MANIFEST, Run, RunConfig, list_runs
from ragdash.ui.paths import demo_paths, inside, runs_root  # noqa: F401 (pages use state.*)
from ragdash.view import RunView


def is_demo(run: Run) -> bool:
    return any(run.path.resolve() == p.resolve() for p in demo_paths())


def description(run: Run) -> str:
    """The run's one-line description (config `description`), if any."""
    return run.config.description


def max_upload_mb() -> int:
    """Megabytes one upload may have: `RAGDASH_MAX_UPLOAD_MB`, checked against Streamlit's
    `server.maxUploadSize`; ValueError saying what to set otherwise."""
    return dashboard_settings.max_upload_mb(
        server_limit_mb=int(st.get_option("server.maxUploadSize")))


def run_key(path: Path) -> str:
    """How a run is named in the URL: its path relative to the project (or absolute)."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(PROJECT_ROOT))
    except ValueError:
        return str(p)


def _listed(root: Path) -> list[Run]:
    """The runs under `root` (newest first), then those one folder deeper (a sweep's, made by
    `ragdash sweep --runs-root <root>/<name>`)."""
    runs = list_runs(root)
    if root.is_dir():
        for sub in sorted(root.iterdir()):
            if sub.is_dir() and not sub.name.startswith(("_", ".")) and \
                    not (sub / MANIFEST).exists():
                runs += list_runs(sub)
    # a run (or sweep folder) that is a symlink out of the runs root is not the dashboard's to read
    return [r for r in runs if inside(r.path / MANIFEST, root)]


def available_runs() -> dict[str, Run]:
    """{url key: Run}, the demo runs first, then runs under the runs root (newest first), then
    the runs of sweep folders under it."""
    out: dict[str, Run] = {}
    for path in demo_paths():
        demo = Run(path)
        if demo.exists():
            out[run_key(demo.path)] = demo
    for r in _listed(runs_root()):
        out.setdefault(run_key(r.path), r)
    return out


def run_label(run: Run) -> str:
    """How pickers show a run: its id, `(demo)` for a demo, `<folder>/<id>` inside a sweep
    folder."""
    if is_demo(run):
        return f"{run.id} (demo)"
    if run.path.parent.resolve() != runs_root().resolve():
        return f"{run.path.parent.name}/{run.id}"
    return run.id


def select_run(container=None) -> Run | None:
    """The sidebar run picker; returns the selected run (None when there is none)."""
    runs = available_runs()
    box = container or st.sidebar
    if not runs:
        box.info("No run yet: build one on **Build a run**.")
        return None
    from ragdash.ui import widgets

    asked = st.query_params.get("run")
    if asked and asked not in runs and "run" not in st.session_state:
        box.warning(f"Run {widgets.code(asked)} (from the link) was not found; showing "
                    f"{widgets.code(next(iter(runs)))} instead.")

    key = widgets.url_select("Run", list(runs), "run", container=box,
                     format_func=lambda k: run_label(runs[k]),
                     help="The run directory every page shows: the demos first, then the runs "
                          f"under {widgets.code(run_key(runs_root()))}.")
    if text := description(runs[key]):
        box.caption(widgets.md(text))
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


@st.cache_data(show_spinner="Chunking the first documents of the corpus…", max_entries=8)
def chunk_preview(dataset: tuple, limit: int | None, method: str, params: tuple,
                  max_chars: int | None, k: int) -> ChunkPreview:
    """`ragdash.chunking.preview.preview` of a dataset given as (path, format, corpus,
    corpus format); `params` as sorted (name, value) pairs."""
    from ragdash.data import load_dataset
    from ragdash.embeddings import embedding_settings

    path, fmt, corpus, corpus_fmt = dataset
    docs = load_dataset(path, fmt, corpus=corpus, corpus_fmt=corpus_fmt, limit=limit).documents
    with embedding_settings(runs_root()):  # the run built next reads these embeddings back
        return preview(docs, method, dict(params), max_chars, k)


@st.cache_resource(show_spinner="Loading the tokenizer…")
def tokenizer(spec: str) -> Tokenizer:
    """The run's tokenizer (loaded once per server)."""
    return get_tokenizer(spec)


def stamp(path: Path) -> int:
    return path.stat().st_mtime_ns if path.exists() else 0


def stamps(run: Run, *keys: str) -> tuple[int, ...]:
    """The modification times of some run files: a cache key that changes when one is rewritten."""
    return tuple(stamp(run.file(k)) for k in keys)


@st.cache_data(show_spinner=False, max_entries=128)
def _read(path: str, mtime_ns: int, key: str) -> pd.DataFrame:
    return FILES[key].read(Path(path))


def _own(run: Run, key: str) -> Path | None:
    """A run file's path; None when it is missing or a symlink to outside its run directory
    (then never read: it could name any file on the server)."""
    f = run.file(key)
    return f if f.exists() and inside(f, run.path) else None


def table(run: Run, key: str) -> pd.DataFrame | None:
    """A run table (a key of `ragdash.rundir.FILES`), cached; None when the file is missing (or
    links outside its run)."""
    f = _own(run, key)
    if f is None:
        return None
    return _read(str(f), stamp(f), key)


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


def _cached_json(run: Run, key: str) -> dict | None:
    f = _own(run, key)
    return None if f is None else _json(str(f), stamp(f))


def calibration(run: Run) -> dict | None:
    """calibration.json, None before the calibrate stage."""
    return _cached_json(run, "calibration")


def manifest(run: Run) -> dict:
    return _cached_json(run, "manifest") or {}


def config(run: Run) -> RunConfig:
    return RunConfig.from_dict(manifest(run).get("config"))


def order(run: Run) -> list[str]:
    """Retrievers in the run's configured order."""
    return list(config(run).retrievers)


def retrievers(run: Run) -> list[str]:
    """The retrievers scored in this run, in display order."""
    ir = table(run, "ir_scores")
    names = ir["retriever"].unique() if ir is not None else order(run)
    return frames.order_systems(names, order(run))


def budgets(run: Run) -> list[int]:
    ir = table(run, "ir_scores")
    return sorted(int(b) for b in ir["budget"].unique()) if ir is not None else []


def answers(run: Run) -> pd.DataFrame | None:
    """answers.parquet, one row per (qid, system) (a budget sweep keeps the main budget)."""
    return frames.primary(table(run, "answers"), config(run).generation_budget)


def judgments(run: Run) -> pd.DataFrame | None:
    """judgments.parquet, one row per (qid, system) (main budget, one judge model)."""
    return frames.primary(table(run, "judgments"), config(run).generation_budget)


# --- cached computations of `RunView`, keyed by the run path and its files' stamps ---------------

_JUDGED = ("ir_scores", "judgments", "calibration", "manifest")


_SCORED = ("ir_scores", "ir_scores_also", "manifest")


@st.cache_data(show_spinner="Bootstrapping confidence bands…", max_entries=16)
def _bands(path: str, stamps_: tuple, n_boot: int, method: str | None) -> pd.DataFrame:
    return RunView(path).bands(n_boot, method)


def bands(run: Run, n_boot: int = 1000, method: str | None = None) -> pd.DataFrame:
    """Mean Score_IR curves with bootstrap bands, by one matching method (None: the run's)."""
    return _bands(str(run.path), stamps(run, *_SCORED), n_boot, method)


@st.cache_data(show_spinner=False, max_entries=16)
def _methods(path: str, stamps_: tuple) -> list[str]:
    return Run(path).score_methods()


def score_methods(run: Run) -> list[str]:
    """The Score_IR matching methods of the run: scoring.method first, then scoring.also's."""
    return _methods(str(run.path), stamps(run, *_SCORED))


@st.cache_data(show_spinner=False, max_entries=16)
def _scores(path: str, stamps_: tuple, method: str | None) -> pd.DataFrame:
    return Run(path).ir_scores(method)


def ir_scores(run: Run, method: str | None = None) -> pd.DataFrame:
    """Score_IR by one matching method (None: the run's scoring.method)."""
    return _scores(str(run.path), stamps(run, *_SCORED), method)


@st.cache_data(show_spinner="Embedding the context's sentences…", max_entries=256)
def semantic_matches(parts: tuple[str, ...], context: str, cut: int
                     ) -> list[matching.SemanticMatch]:
    """Each part's closest sentence window in context[:cut] (loads MiniLM once per server)."""
    return matching.semantic_matches(parts, context, cut)


@st.cache_data(show_spinner=False, max_entries=64)
def _diff(path: str, stamps_: tuple, a: str, b: str) -> pd.DataFrame:
    return RunView(path).difference(a, b)


def difference(run: Run, a: str, b: str) -> pd.DataFrame:
    return _diff(str(run.path), stamps(run, "ir_scores"), a, b)


@st.cache_data(show_spinner="Preparing the threshold panel…", max_entries=16)
def _thresholds(path: str, stamps_: tuple, budget: int) -> ThresholdData:
    return RunView(path).thresholds(budget)


def thresholds(run: Run, budget: int) -> ThresholdData:
    return _thresholds(str(run.path), stamps(run, *_JUDGED), int(budget))


@st.cache_data(show_spinner="Measuring how well retrieval predicts the judge…", max_entries=16)
def _predictiveness(path: str, stamps_: tuple, budget: int) -> dict | None:
    return RunView(path).predictiveness(budget)


def predictiveness(run: Run, budget: int) -> dict | None:
    """How well Score_IR at `budget` predicts the judge (None without judgments)."""
    return _predictiveness(str(run.path), stamps(run, *_JUDGED), int(budget))


@st.cache_data(show_spinner="Cross-validating the estimators…", max_entries=8)
def _cross_validation(path: str, stamps_: tuple, budget: int) -> tuple[pd.DataFrame, str]:
    return RunView(path).cross_validate(budget)


def cross_validation(run: Run, budget: int) -> tuple[pd.DataFrame, str]:
    """The estimators cross-validated at `budget` (as the calibrate stage does)."""
    return _cross_validation(str(run.path), stamps(run, "ir_scores", "judgments"), int(budget))


@st.cache_data(show_spinner=False, max_entries=256)
def _question(path: str, stamps_: tuple, qid: str) -> dict[str, pd.DataFrame]:
    return RunView(path).question_chunks(qid)


def question_chunks(run: Run, qid: str) -> dict[str, pd.DataFrame]:
    """{retriever: its chunks for `qid` in rank order (rank, chunk_id, title, text, score)}."""
    return _question(str(run.path), stamps(run, "retrieved", "chunks"), str(qid))


@st.cache_data(show_spinner=False, max_entries=16)
def _audit(path: str, stamps_: tuple) -> list[judge_audit.Check]:
    return RunView(path).audit()


def audit(run: Run) -> list[judge_audit.Check]:
    """The judge audit of the run's main judgments (empty without judgments)."""
    return _audit(str(run.path), stamps(run, "judgments", "answers", "examples", "manifest"))


@st.cache_data(show_spinner=False, max_entries=16)
def _reference(path: str, stamps_: tuple) -> pd.DataFrame | None:
    return RunView(path).reference_summary()


def reference_summary(run: Run) -> pd.DataFrame | None:
    """Mean EM, F1 and share containing a gold answer per system (None without answers)."""
    return _reference(str(run.path), stamps(run, "answers", "examples", "reference",
                                            "manifest"))


# --- several runs (the Runs page), keyed by the runs' paths and their files' stamps ---------------

_COMPARED = ("manifest", "ir_scores", "ir_metrics", "examples", "answers", "judgments",
             "calibration")


def _signature(runs: dict[str, Run]) -> tuple:
    return tuple((k, str(r.path), stamps(r, *_COMPARED)) for k, r in runs.items())


@st.cache_data(show_spinner=False, max_entries=8)
def _catalogue(sig: tuple) -> pd.DataFrame:
    return leaderboard.catalogue({k: Run(p) for k, p, _ in sig})


def catalogue(runs: dict[str, Run]) -> pd.DataFrame:
    """One row per run: dataset, chunker, retrievers, budgets, stages, size (cached)."""
    return _catalogue(tuple((k, str(r.path), stamps(r, "manifest", "calibration"))
                            for k, r in runs.items()))


@st.cache_data(show_spinner="Reading the runs' scores…", max_entries=8)
def _comparison(sig: tuple) -> leaderboard.Comparison:
    return leaderboard.compare_runs({k: Run(p) for k, p, _ in sig})


def comparison(runs: dict[str, Run]) -> leaderboard.Comparison:
    """The runs on their shared questions and budgets; NotComparable says why not."""
    return _comparison(_signature(runs))


@st.cache_data(show_spinner="Bootstrapping confidence bands…", max_entries=8)
def _run_bands(sig: tuple, n_boot: int) -> pd.DataFrame:
    return leaderboard.bands(_comparison(sig), n_boot)


def run_bands(runs: dict[str, Run], n_boot: int = 1000) -> pd.DataFrame:
    """Mean Score_IR per (entry, budget) with its bootstrap band."""
    return _run_bands(_signature(runs), n_boot)


@st.cache_data(show_spinner="Ranking…", max_entries=32)
def _board(sig: tuple, budget: int, n_boot: int) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    comp = _comparison(sig)
    board = leaderboard.leaderboard(comp, budget, _run_bands(sig, n_boot))
    return (board, leaderboard.verdict(comp, board, budget),
            leaderboard.versus_leader(comp, board, budget))


def board(runs: dict[str, Run], budget: int, n_boot: int = 1000
          ) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """(leaderboard, verdict, the leader against every other entry) at `budget`."""
    return _board(_signature(runs), int(budget), n_boot)


@st.cache_data(show_spinner=False, max_entries=64)
def _runs_pair(sig: tuple, a: str, b: str, budget: int) -> tuple[dict, pd.DataFrame]:
    comp = _comparison(sig)
    m = comp.matrix(budget)
    return compare.paired(m[a], m[b]), compare.difference_curve(comp.scores, a, b)


def runs_pair(runs: dict[str, Run], a: str, b: str, budget: int) -> tuple[dict, pd.DataFrame]:
    """Entries `a` vs `b`: `compare.paired` at `budget` and the difference across budgets."""
    return _runs_pair(_signature(runs), a, b, int(budget))
