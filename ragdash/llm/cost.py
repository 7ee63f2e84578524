"""Cost and time of LLM calls: an editable price table, estimates before a run, actuals after.

Prices are USD per 1M input / output tokens. The defaults below can be overridden (and
extended) by a YAML or JSON file mapping a model name to `{input: ..., output: ...}` or
`[input, output]`; `RAGDASH_PRICES` names such a file. Models served by the `local` or `ollama`
backends cost 0 unless the table says otherwise.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ragdash.llm.speed import Speed


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float

    def cost(self, tokens_in: float, tokens_out: float) -> float:
        return (tokens_in * self.input_per_m + tokens_out * self.output_per_m) / 1e6


DEFAULT_PRICES: dict[str, Price] = {
    # OpenAI list prices (standard tier); check https://openai.com/api/pricing before relying
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-2024-05-13": Price(5.00, 15.00),  # the snapshot the paper most likely used
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    # local models
    "llama3": Price(0.0, 0.0),
    "llama3:8b": Price(0.0, 0.0),
    "qwen2.5-0.5b-instruct": Price(0.0, 0.0),
    "smollm2-135m-instruct": Price(0.0, 0.0),
}
FREE_BACKENDS = ("local", "ollama")


def _price(value: Any, model: str, source: str) -> Price:
    if isinstance(value, Mapping) and {"input", "output"} <= set(value):
        return Price(float(value["input"]), float(value["output"]))
    if isinstance(value, list | tuple) and len(value) == 2:
        return Price(float(value[0]), float(value[1]))
    raise ValueError(f"{source}: price of '{model}' must be {{input: x, output: y}} or [x, y] "
                     "(USD per 1M tokens)")


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The default table updated from `path` (or `RAGDASH_PRICES`), YAML or JSON."""
    prices = dict(DEFAULT_PRICES)
    path = path or os.environ.get("RAGDASH_PRICES")
    if not path:
        return prices
    path = Path(path)
    text = path.read_text()
    if path.suffix.lower() == ".json":
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text) or {}
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected a mapping of model name to price")
    for model, value in data.items():
        prices[str(model)] = _price(value, str(model), str(path))
    return prices


def price_for(model: str, prices: Mapping[str, Price] | None = None, *,
              backend: str | None = None) -> Price | None:
    """Exact name, else the longest table name the model starts with (`gpt-4o-2024-08-06` ->
    `gpt-4o`); 0 for local backends; None when unknown."""
    prices = DEFAULT_PRICES if prices is None else prices
    if model in prices:
        return prices[model]
    prefixes = [k for k in prices if model.startswith(k) and model[len(k):][:1] in ("-", ":")]
    if prefixes:
        return prices[max(prefixes, key=len)]
    if backend in FREE_BACKENDS:
        return Price(0.0, 0.0)
    return None


def duration(seconds: float | None) -> str:
    """'about 40 s', 'about 12 min', 'about 2.5 h' ('' when unknown)."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Estimate:
    """Calls, total tokens, money (None: model not in the price table) and wall time (None:
    no speed known for the model) of a batch of calls; `time_source` says where the time comes
    from (`ragdash.llm.speed.Speed.describe`, or the rate given)."""

    model: str
    calls: int
    tokens_in: int
    tokens_out: int
    usd: float | None
    seconds: float | None
    rate_per_min: float | None
    time_source: str = ""

    def time_text(self) -> str:
        """'about 12 min at 4.1 calls/min (measured on 40 calls of this model)', or why not."""
        if self.calls == 0:
            return "no time: no call to make"
        if self.seconds is None:
            return "time unknown (no call of this model measured yet)"
        why = f" ({self.time_source})" if self.time_source else ""
        return f"{duration(self.seconds)} at {self.rate_per_min:,.1f} calls/min{why}"

    def scaled(self, factor: float) -> Estimate:
        """The estimate of `factor` times as many calls of the same sizes (one measured on a
        sample, for the whole)."""
        return replace(self, calls=round(self.calls * factor),
                       tokens_in=round(self.tokens_in * factor),
                       tokens_out=round(self.tokens_out * factor),
                       usd=None if self.usd is None else self.usd * factor,
                       seconds=None if self.seconds is None else self.seconds * factor)

    def __str__(self) -> str:
        money = "price unknown" if self.usd is None else f"${self.usd:,.2f}"
        return (f"{self.model}: {self.calls:,} calls, {self.tokens_in:,} tokens in, "
                f"{self.tokens_out:,} out, {money}, {self.time_text()}")


def estimate(calls: int, tokens_in: float, tokens_out: float, model: str, *,
             rate: float | None = None, speed: Speed | None = None,
             prices: Mapping[str, Price] | None = None,
             backend: str | None = None) -> Estimate:
    """Before a run: `calls` calls of `tokens_in`/`tokens_out` tokens each (averages); the time
    from `speed` (seconds per call of that size) or `rate` (calls per minute, all workers)."""
    total_in, total_out = round(calls * tokens_in), round(calls * tokens_out)
    price = price_for(model, prices, backend=backend)
    source = ""
    if speed is not None:
        rate, source = 60.0 / speed.seconds(tokens_in, tokens_out), speed.describe()
    return Estimate(model, int(calls), total_in, total_out,
                    None if price is None else price.cost(total_in, total_out),
                    None if not rate else calls / rate * 60.0, rate or None, source)


def count_tokens(text: str | Iterable[Mapping[str, str]], tokenizer: str = "cl100k") -> int:
    """Approximate prompt tokens without a network: a string, or chat messages (content tokens
    plus OpenAI's ~4 tokens per message and 3 per reply)."""
    from ragdash.budget import get_tokenizer

    tok = get_tokenizer(tokenizer)
    if isinstance(text, str):
        return tok.count(text)
    return sum(tok.count(m["content"]) + 4 for m in text) + 3


def estimate_prompts(prompts: Iterable[str | list[dict[str, str]]], model: str, *,
                     tokens_out: float, rate: float | None = None,
                     speed: Speed | None = None, tokenizer: str = "cl100k",
                     prices: Mapping[str, Price] | None = None,
                     backend: str | None = None) -> Estimate:
    """`estimate` with input tokens counted on the actual prompts."""
    counts = [count_tokens(p, tokenizer) for p in prompts]
    mean_in = sum(counts) / len(counts) if counts else 0.0
    return estimate(len(counts), mean_in, tokens_out, model, rate=rate, speed=speed,
                    prices=prices, backend=backend)


def actual_cost(frame: pd.DataFrame, prices: Mapping[str, Price] | None = None, *,
                backend: str | None = None) -> pd.DataFrame:
    """After a run: per model, calls, recorded tokens, USD and summed latency.

    Takes an answers frame (`model`) or a judgments frame (`judge_model`, one call per
    `call_id`); rows without tokens (failed calls) count as calls with 0 tokens.
    """
    model_col = "judge_model" if "judge_model" in frame.columns else "model"
    df = frame
    if "call_id" in df.columns:
        df = df.dropna(subset=["call_id"]).drop_duplicates("call_id")
    df = df.assign(tokens_in=df["tokens_in"].fillna(0), tokens_out=df["tokens_out"].fillna(0),
                   latency_s=df["latency_s"].fillna(0.0))
    rows = []
    for model, g in df.groupby(model_col, dropna=False):
        price = price_for(str(model), prices, backend=backend)
        t_in, t_out = int(g["tokens_in"].sum()), int(g["tokens_out"].sum())
        rows.append({"model": model, "calls": len(g), "tokens_in": t_in, "tokens_out": t_out,
                     "usd": None if price is None else price.cost(t_in, t_out),
                     "latency_s": float(g["latency_s"].sum())})
    return pd.DataFrame(rows, columns=["model", "calls", "tokens_in", "tokens_out", "usd",
                                       "latency_s"])


def cost_avoided(answers: pd.DataFrame | None, judgments: pd.DataFrame | None,
                 calls: dict, model: str = "gpt-4o") -> float | None:
    """What the calls the thresholds avoid would cost with `model` (the paper's judge), priced
    at the run's mean tokens per call; None without token counts."""
    if answers is None or not {"tokens_in", "tokens_out"} <= set(answers.columns):
        return None
    usd = estimate(calls["generation_calls"], float(answers["tokens_in"].astype(float).mean()),
                   float(answers["tokens_out"].astype(float).mean()), model).usd
    jt = judgments if judgments is not None else pd.DataFrame()
    if usd is not None and {"tokens_in", "tokens_out", "call_id"} <= set(jt.columns):
        per_call = jt.dropna(subset=["call_id"]).drop_duplicates("call_id")
        judge_usd = estimate(calls["judge_calls"],
                             float(per_call["tokens_in"].astype(float).mean()),
                             float(per_call["tokens_out"].astype(float).mean()), model).usd
        usd = usd + judge_usd if judge_usd is not None else usd
    return usd if usd is not None and math.isfinite(usd) else None
