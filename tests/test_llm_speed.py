"""How long a call takes before a run (ragdash.llm.speed): fitted on the reply cache's
latencies, else for a local model assumed from the bundled demos' calls, and said so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.llm.cache import LLMCache
from ragdash.llm.cost import estimate
from ragdash.llm.local import model_alias
from ragdash.llm.speed import MIN_CALLS_TO_FIT, bundled_speed, call_speed, fit, measured_speed
from ragdash.llm.types import LLMResult
from ragdash.rundir.root import RunsRoot


def test_fit_recovers_the_cost_per_token():
    rng = np.random.default_rng(0)
    tin, tout = rng.integers(50, 2000, 200).astype(float), rng.integers(5, 80, 200).astype(float)
    lat = 0.5 + 0.01 * tin + 0.1 * tout + rng.normal(0, 0.05, 200)
    s = fit(lat, tin, tout, source="measured")
    assert s.intercept == pytest.approx(0.5, abs=0.05)
    assert s.per_token_in == pytest.approx(0.01, rel=0.02)
    assert s.per_token_out == pytest.approx(0.1, rel=0.02)
    assert s.seconds(1000, 40) == pytest.approx(14.5, rel=0.02)
    assert s.calls == 200 and "measured on 200 calls" in s.describe()


def test_few_calls_or_no_token_counts_give_the_mean_latency():
    few = fit(np.array([2.0, 4.0, 0.0, np.nan]), np.array([10.0, 20, 30, 40]),
              np.array([1.0, 2, 3, 4]), source="measured")
    assert few.calls == 2 and few.seconds(10_000, 500) == pytest.approx(3.0)
    n = MIN_CALLS_TO_FIT + 2
    untokened = fit(np.full(n, 5.0), np.full(n, np.nan), np.full(n, np.nan), source="measured")
    assert untokened.seconds(500, 20) == pytest.approx(5.0)
    assert fit(np.array([0.0, -1.0]), np.ones(2), np.ones(2), source="measured") is None


def _cache(path, model: str, latencies: list[float]) -> None:
    cache = LLMCache(path)
    for i, lat in enumerate(latencies):
        cache.put(f"k{i}", "local", LLMResult(f"reply {i}", 100 + 10 * i, 20, lat, model))


def test_measured_speed_reads_the_reply_cache(tmp_path):
    path = tmp_path / "_llm_cache.sqlite"
    assert measured_speed(path, "m") is None  # no cache yet
    _cache(path, "m", [1.0, 3.0])
    s = measured_speed(path, "m")
    assert s.source == "measured" and s.calls == 2 and s.seconds(100, 20) == pytest.approx(2.0)
    assert measured_speed(path, "other") is None


def test_the_bundled_demos_give_the_default_local_models_a_prior():
    for name in (None, "qwen-1.5b"):
        s = bundled_speed(model_alias(name))
        assert s is not None and s.source == "bundled" and s.calls >= 200
        assert 1 < s.seconds(500, 30) < 60  # seconds per call on a 2-core CPU
    assert bundled_speed("a-model-never-run") is None


def test_call_speed_prefers_the_measurement_and_gives_remote_models_no_prior(tmp_path):
    root = RunsRoot(tmp_path)
    local = model_alias(None)
    assert call_speed(root, local, "local").source == "bundled"
    assert call_speed(root, local, "openai") is None  # the same name elsewhere: no prior
    # a few calls (a test, a timeout) prove little: the prior holds until MIN_CALLS_TO_FIT
    _cache(tmp_path / "_llm_cache.sqlite", local, [0.25] * (MIN_CALLS_TO_FIT - 1))
    assert call_speed(root, local, "local").source == "bundled"
    _cache(tmp_path / "_llm_cache.sqlite", local, [0.25] * MIN_CALLS_TO_FIT)
    measured = call_speed(root, local, "local")
    assert measured.source == "measured" and measured.seconds(150, 20) == pytest.approx(0.25)
    assert "measured on 8 calls" in measured.describe()


def test_the_estimate_says_where_its_time_comes_from():
    prior = bundled_speed(model_alias(None))
    e = estimate(60, 500, 30, model_alias(None), speed=prior, backend="local")
    assert e.seconds == pytest.approx(60 * prior.seconds(500, 30))
    assert "bundled demo runs" in str(e) and "calls/min" in str(e) and "$0.00" in str(e)
    unknown = estimate(60, 500, 30, "gpt-4o")
    assert unknown.seconds is None and "time unknown" in str(unknown)


def test_demo_parquets_keep_what_the_prior_needs():
    for run in ("data/demo_squad", "data/demo_run"):
        answers = pd.read_parquet(f"{run}/answers.parquet")
        assert {"model", "latency_s", "tokens_in", "tokens_out"} <= set(answers.columns)
