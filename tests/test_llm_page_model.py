"""Issue 34 §3: the LLM results page's model (`ragdash.view.llm`, `ragdash.view.llm_launch`),
tested without Streamlit: the launcher's specification from its form (a bad value refused, as
the page shows it), the answers the refusal rule matches beside what the run recorded, the
retrieval-gain sentence, the error counts in the run's order and the cost line; where the
launcher's form starts and the sections' captions (issue 48 §4: composed in the page before)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ragdash.config import ConfigError, RunSpec
from ragdash.llm.refusal import RefusalRule
from ragdash.llm.settings import LOCAL_GENERATOR, LOCAL_JUDGE
from ragdash.view.llm import (
    abstention_intro,
    agreement_captions,
    cost_line,
    erag_caption,
    error_counts,
    failed_line,
    gain_sentence,
    refusal_hits,
    stress_captions,
    truthfulness_caption,
)
from ragdash.view.llm_launch import LaunchForm, form_start, launch_spec, saved_rule


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


def test_the_form_starts_from_how_the_run_judged_stepwise_and_abstain_before():
    """Moved from the LLM page's AppTest session on a run without LLM stages: stepwise and
    abstain by default (a small local judge scores the paper's rubric by position)."""
    assert (form_start({}, 12).mode, form_start({}, 12).prompt) == ("stepwise", "abstain")
    judged = {"judge": {"enabled": True, "mode": "grouped"}, "generation": {"prompt": "paper"}}
    assert (form_start(judged, 12).mode, form_start(judged, 12).prompt) == ("grouped", "paper")
    off = {"judge": {"enabled": False, "mode": "grouped"}, "generation": {"prompt": "paper"}}
    assert (form_start(off, 12).mode, form_start(off, 12).prompt) == ("stepwise", "abstain")
    assert (form_start({"judge": {"enabled": True}}, 1).mode,
            form_start({"judge": {"enabled": True}}, 1).prompt) == ("stepwise", "abstain")


def test_the_question_limit_steps_by_what_the_buttons_can_take():
    """Moved from the LLM page's AppTest session: on 12 questions the +/- buttons step by 1 (a
    step of 10 left them disabled); up to 10 on larger runs; at least 1 on an empty one."""
    assert [(form_start({}, q).limit_max, form_start({}, q).limit_step)
            for q in (0, 12, 55, 250)] == [(1, 1), (12, 1), (55, 5), (250, 10)]
    assert form_start({}, 1234).limit_help == (
        "Generate and judge only the first N of the run's 1,234 questions: a quick, cheap look "
        "before the whole run")


def test_the_rule_starts_from_the_runs_own():
    saved = saved_rule(RunSpec.from_config(
        {"judge": {"refusal": {"patterns": ["no idea"], "enabled": False}}}))
    assert (saved.patterns, saved.enabled) == (RefusalRule(["no idea"], False).patterns, False)
    default = saved_rule(RunSpec())
    assert (default.patterns, default.enabled) == (RefusalRule.from_config(None).patterns,
                                                   RefusalRule.from_config(None).enabled)


def test_the_sections_captions():
    assert failed_line("All failed.") == "All failed. See the errors below."
    assert "relevant parts C_800 held" in abstention_intro(800)
    assert truthfulness_caption("a *b*", md=lambda s: s.replace("*", r"\*")).endswith(
        r"Correct by: a \*b\*.")
    judge = agreement_captions("judge scored 5")
    assert len(judge) == 1 and judge[0].startswith("Truth: judge scored 5. Per signal")
    ref = agreement_captions("reference metric contains")
    assert len(ref) == 2 and "partly by construction" in ref[1]
    assert "Its LLM cost: 40 calls, 8,400 tokens; Score_IR's: none." in erag_caption((40, 8400))
    assert "Its LLM cost: –; Score_IR's: none." in erag_caption(None)
    answered, dose = stress_captions(1234, 56, 1000, fitted=False)
    assert answered.startswith("The generator answered 1,234 contexts built from this run's own "
                               "chunks for 56 questions")
    assert dose.startswith("Score_IR of each context at the generation budget N = 1,000.")
    assert dose.endswith("also easier. (h and k were not fitted at this N: no lines.)")
    assert stress_captions(1, 1, 10, fitted=True)[1].endswith("are also easier.")
