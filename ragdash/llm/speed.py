"""How long one LLM call takes, before a run: seconds = a + b·tokens_in + c·tokens_out.

Measured: fitted on the latencies the LLM reply cache recorded for the model. Before the first
call of a local model there is nothing to measure, so the time is assumed from the calls of the
same model in the bundled demo runs (recorded on a 2-core CPU, as their manifests say): a prior
that the estimate names as such, replaced by the measurement once the cache holds
`MIN_CALLS_TO_FIT` calls of a local model (a handful, from a test or a timeout, prove little).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ragdash.constants import BUNDLED_RUNS, PROJECT_ROOT
from ragdash.rundir.root import RunsRoot

if TYPE_CHECKING:
    from ragdash.llm.settings import LLMSettings

MIN_CALLS_TO_FIT = 8
"""Below this many calls the per-token terms are not fitted: the mean latency is used."""


@dataclass(frozen=True)
class Speed:
    """Seconds per call of one model, and where the figure comes from (`measured` in the LLM
    cache, or `bundled`: assumed from the bundled demos' calls) and how many calls it rests on."""

    intercept: float
    per_token_in: float
    per_token_out: float
    source: str
    calls: int

    def seconds(self, tokens_in: float, tokens_out: float) -> float:
        """The expected latency of one call of that size (at least 0.05 s)."""
        return max(self.intercept + self.per_token_in * tokens_in
                   + self.per_token_out * tokens_out, 0.05)

    def describe(self) -> str:
        """Where the figure comes from, in words."""
        if self.source == "measured":
            return f"measured on {self.calls:,} calls of this model"
        return (f"assumed from {self.calls:,} calls of this model in the bundled demo runs on a "
                f"2-core CPU; measured once {MIN_CALLS_TO_FIT} calls are recorded")


def fit(latency: np.ndarray, tokens_in: np.ndarray, tokens_out: np.ndarray, *,
        source: str) -> Speed | None:
    """Non-negative least squares of latency on (1, tokens_in, tokens_out); the mean latency
    alone when fewer than `MIN_CALLS_TO_FIT` calls (or no token counts) are known."""
    from scipy.optimize import nnls

    ok = np.isfinite(latency) & (latency > 0)
    if not ok.any():
        return None
    lat = latency[ok]
    tin, tout = np.nan_to_num(tokens_in[ok]), np.nan_to_num(tokens_out[ok])
    if len(lat) < MIN_CALLS_TO_FIT or not (tin.any() and tout.any()):
        return Speed(float(lat.mean()), 0.0, 0.0, source, int(len(lat)))
    coef, _ = nnls(np.column_stack([np.ones(len(lat)), tin, tout]), lat)
    return Speed(float(coef[0]), float(coef[1]), float(coef[2]), source, int(len(lat)))


def measured_speed(cache_path: Path, model: str) -> Speed | None:
    """The speed of `model` fitted on the calls the LLM reply cache at `cache_path` recorded."""
    if not cache_path.exists():
        return None
    with sqlite3.connect(cache_path) as db:
        rows = db.execute("SELECT latency_s, tokens_in, tokens_out FROM replies WHERE model = ? "
                          "AND latency_s > 0", (model,)).fetchall()
    if not rows:
        return None
    arr = np.array(rows, dtype=float)
    return fit(arr[:, 0], arr[:, 1], arr[:, 2], source="measured")


@cache
def bundled_speed(model: str, runs: tuple[Path, ...] | None = None) -> Speed | None:
    """The speed of `model` fitted on its answers and judgments in the bundled demo runs."""
    calls = []
    for run in runs or tuple(PROJECT_ROOT / r for r in BUNDLED_RUNS):
        for name, col in (("answers", "model"), ("judgments", "judge_model")):
            path = run / f"{name}.parquet"
            if not path.exists():
                continue
            frame = pd.read_parquet(path)
            if {col, "latency_s", "tokens_in", "tokens_out"} <= set(frame.columns):
                calls.append(frame.loc[frame[col] == model,
                                       ["latency_s", "tokens_in", "tokens_out"]])
    if not calls:
        return None
    arr = pd.concat(calls).to_numpy(dtype=float)
    return fit(arr[:, 0], arr[:, 1], arr[:, 2], source="bundled") if len(arr) else None


def call_speed(root: RunsRoot, model: str, backend: str | None = None) -> Speed | None:
    """How long a call of `model` takes: measured in the LLM cache of the runs root `root`, else,
    for the local backend until it holds `MIN_CALLS_TO_FIT` calls, assumed from the bundled
    demos' calls of that model."""
    measured = measured_speed(root.llm_cache, model)
    if backend == "local" and (measured is None or measured.calls < MIN_CALLS_TO_FIT):
        return bundled_speed(model) or measured  # a few calls (a test, a timeout) prove little
    return measured


def model_name(settings: LLMSettings) -> str:
    """The model name calls are recorded under (the alias of a local GGUF)."""
    if settings.backend == "local":
        from ragdash.llm.local import model_alias

        return model_alias(settings.model)
    return settings.model
