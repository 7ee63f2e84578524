"""Issue 34 §3: the LLM results page's model (`ragdash.view.llm`, `ragdash.view.llm_launch`),
tested without Streamlit: the launcher's specification from its form (a bad value refused, as
the page shows it), the answers the refusal rule matches beside what the run recorded, the
retrieval-gain sentence, the error counts in the run's order and the cost line."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ragdash.config import ConfigError
from ragdash.llm.refusal import RefusalRule
from ragdash.llm.settings import LOCAL_GENERATOR, LOCAL_JUDGE
from ragdash.view.llm import (
    cost_line,
    error_counts,
    gain_sentence,
    refusal_hits,
)
from ragdash.view.llm_launch import LaunchForm, launch_spec


def _form(**over) -> LaunchForm:
    fields = dict(gen_backend="local", gen_model="", judge_backend="local", judge_model="",
                  base_url="", mode="stepwise", prompt="abstain", budget=500, limit=0,
                  rule=RefusalRule(["I don't know"]))
    return LaunchForm(**{**fields, **over})


def _base() -> dict:
    return {"dataset": {"path": "qa.jsonl"}}


def test_the_form_switches_on_generation_judging_and_calibration():
    spec = launch_spec(_base(), _form(limit=7))
    assert spec.generation.enabled and spec.judge.enabled and spec.calibration.enabled
    assert spec.generation.budget == 500 == spec.calibration.budget
    assert spec.generation.limit == 7 and spec.judge.mode == "stepwise"
    assert spec.generation.llm.model == LOCAL_GENERATOR and spec.judge.llm.model == LOCAL_JUDGE
    assert list(spec.judge.refusal.patterns) == ["I don't know"]
    assert launch_spec(_base(), _form(limit=0)).generation.limit is None  # 0: every question


def test_a_named_server_serves_its_own_model():
    gen, jud = _form(gen_backend="openai", judge_backend="openai",
                     base_url="http://127.0.0.1:9/v1").llm_sections()
    assert gen == {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": None}
    assert jud["model"] is None and jud["base_url"] == "http://127.0.0.1:9/v1"


def test_a_bad_value_is_refused_with_its_key():
    with pytest.raises((ConfigError, ValueError), match="judge.mode"):
        launch_spec(_base(), _form(mode="sideways"))


def test_refusal_hits_show_the_unscored_as_a_dash():
    answers = pd.DataFrame({"qid": ["a", "b", "c", "d"], "system": ["bm25", "bm25", "sim", "sim"],
                            "answer": ["I don't know.", "Paris", "i DON'T know", None]})
    judgments = pd.DataFrame({"qid": ["a", "b"], "system": ["bm25", "bm25"], "score": [1, 5],
                              "rule": ["I don't know", None]})
    hits = refusal_hits(answers, judgments, RefusalRule(["I don't know"]), name=str.upper)
    assert hits.answers == 3 and hits.recorded == 1  # the empty answer is not an answer
    assert hits.table["qid"].tolist() == ["a", "c"]
    assert hits.table["system"].tolist() == ["BM25", "SIM"]
    assert hits.table["score"].tolist() == ["1", "—"]
    assert hits.sentence().startswith("**2 of 3 answers (66.7%) match the rule as shown**")
    none = refusal_hits(answers, None, RefusalRule(["nothing matches this"]))
    assert none.table.empty and none.recorded == 0 and "0 of 3" in none.sentence()


def test_gain_errors_and_cost():
    gain = pd.DataFrame({"system": ["bm25"], "fixed": [4], "broken": [1], "n": [20]})
    assert gain_sentence(gain, "bm25", name=str.upper) == (
        "With **BM25**, 4 answers became fully correct that were not without retrieval, and 1 "
        "correct answer was lost (of 20 questions judged both ways).")
    one = pd.DataFrame({"system": ["bm25"], "fixed": [1], "broken": [0], "n": [1]})
    assert gain_sentence(one, "bm25") == (
        "With **bm25**, 1 answer became fully correct that was not without retrieval, and 0 "
        "correct answers were lost (of 1 question judged both ways).")
    errs = pd.DataFrame({"stage": ["judge", "generate", "judge"],
                         "system": ["sim", "bm25", "bm25"]})
    counts = error_counts(errs, ["bm25", "sim"], name=str.upper)
    assert list(counts.columns) == ["BM25", "SIM"]
    assert counts.loc["judge"].tolist() == [1, 1] and counts.loc["generate"].tolist() == [1, 0]
    assert "$0.0150" in cost_line(pd.DataFrame({"model": ["a", "b"], "usd": [0.01, 0.005]}))
    assert "unknown (mystery-7b not in the price table)" in cost_line(
        pd.DataFrame({"model": ["mystery-7b"], "usd": [math.nan]}))


def test_a_local_model_outside_the_price_table_costs_nothing_as_the_build_page_says():
    """Issue 49: the Build page priced the local stages at $0.00 and LLM results said
    "unknown": each stage's model is priced with the backend it ran on."""
    from ragdash.analysis.judging import costs

    answers = pd.DataFrame({"model": ["qwen2.5-coder-1.5b-instruct"] * 2, "tokens_in": [40, 50],
                            "tokens_out": [9, 8], "latency_s": [1.0, 2.0]})
    judged = answers.rename(columns={"model": "judge_model"})
    local = costs(answers, judged, {"generation": "local", "judging": "local"})
    assert local["usd"].tolist() == [0.0, 0.0]
    assert cost_line(local).startswith("**Total cost:** $0.00 — ")
    unknown = costs(answers, judged, {"generation": "openai", "judging": "local"})
    assert "unknown (qwen2.5-coder-1.5b-instruct not in the price table)" in cost_line(unknown)
