"""Price table, estimates before a run, actual cost after, offline token counts."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ragdash.llm.cost import (
    Price,
    actual_cost,
    count_tokens,
    estimate,
    estimate_prompts,
    load_prices,
    price_for,
)


def test_estimate_money_and_time():
    e = estimate(1000, 1000, 20, "gpt-4o", rate=10)
    assert (e.calls, e.tokens_in, e.tokens_out) == (1000, 1_000_000, 20_000)
    assert e.usd == pytest.approx(2.5 + 0.2)
    assert e.seconds == pytest.approx(6000)
    assert "$2.70" in str(e)


def test_local_models_are_free_and_unknown_ones_have_no_price():
    assert estimate(10, 100, 10, "llama3").usd == 0
    assert estimate(10, 100, 10, "my-own-gguf", backend="local").usd == 0
    unknown = estimate(10, 100, 10, "mystery-model")
    assert unknown.usd is None and "price unknown" in str(unknown) and unknown.seconds is None


def test_price_lookup_uses_the_longest_prefix():
    assert price_for("gpt-4o-2024-08-06") == Price(2.5, 10.0)
    assert price_for("gpt-4o-mini-2024-07-18") == Price(0.15, 0.6)
    assert price_for("gpt-4o-2024-05-13") == Price(5.0, 15.0)
    assert price_for("gpt-4omega") is None


def test_prices_file_overrides_and_extends(tmp_path, monkeypatch):
    y = tmp_path / "prices.yaml"
    y.write_text("gpt-4o: {input: 1.0, output: 2.0}\nmy-model: [3, 4]\n")
    prices = load_prices(y)
    assert prices["gpt-4o"] == Price(1.0, 2.0) and prices["my-model"] == Price(3.0, 4.0)
    assert prices["gpt-4o-mini"] == Price(0.15, 0.6)
    j = tmp_path / "prices.json"
    j.write_text(json.dumps({"gpt-4o": [9, 9]}))
    monkeypatch.setenv("RAGDASH_PRICES", str(j))
    assert load_prices()["gpt-4o"] == Price(9.0, 9.0)
    j.write_text(json.dumps({"bad": 3}))
    with pytest.raises(ValueError, match="bad"):
        load_prices(j)


def test_actual_cost_counts_each_judge_call_once():
    judged = pd.DataFrame({
        "judge_model": ["gpt-4o"] * 3, "call_id": ["q1", "q1", None],
        "tokens_in": [1000, 1000, None], "tokens_out": [10, 10, None],
        "latency_s": [2.0, 2.0, None]})
    out = actual_cost(judged).iloc[0]
    assert (out["calls"], out["tokens_in"], out["tokens_out"]) == (1, 1000, 10)
    assert out["usd"] == pytest.approx(0.0025 + 0.0001)
    answers = pd.DataFrame({"model": ["llama3", "llama3"], "tokens_in": [10, 20],
                            "tokens_out": [1, None], "latency_s": [0.5, None]})
    row = actual_cost(answers).iloc[0]
    assert (row["calls"], row["tokens_in"], row["usd"], row["latency_s"]) == (2, 30, 0.0, 0.5)


def test_count_tokens_offline():
    assert count_tokens("hello world") == 2
    msgs = [{"role": "user", "content": "hello world"}]
    assert count_tokens(msgs) == 2 + 4 + 3
    e = estimate_prompts(["hello world", "hello world again"], "gpt-4o", tokens_out=5)
    assert e.calls == 2 and e.tokens_in == 5 and e.tokens_out == 10
