"""Stepwise judging (the rubric as short questions for small local judges): the score mapping,
tolerant parsing of the verdict, corrections, errors kept apart, and the config/dry-run wiring."""

from __future__ import annotations

import json

import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings, prompt_of

from ragdash.config import ConfigError, load_config
from ragdash.llm import Candidate, JudgeItem
from ragdash.llm.judge import ScoreParseError, judge, parse_choice
from ragdash.llm.prompts import VERDICTS, details_prompt, verdict_prompt

V = list(VERDICTS)


def _item(*answers: str) -> JudgeItem:
    systems = ("llm_only", "bm25", "sim", "mmr", "reo")
    return JudgeItem("q1", "Who wrote Hamlet?", "William Shakespeare",
                     ["Hamlet is a tragedy written by William Shakespeare."],
                     [Candidate(s, a, None if s == "llm_only" else 1000)
                      for s, a in zip(systems, answers, strict=False)])


def _judge_by_answer(body):
    """Verdicts keyed on the candidate's text, as a judge that read it would give."""
    prompt = body["messages"][-1]["content"]
    answer = prompt.split('Candidate answer: "')[1].split('"')[0]
    if prompt.startswith("You check a partially correct"):
        return json.dumps({"wrong_details": "yes" if "Marlowe" in answer else "no"})
    verdict = {"Shakespeare wrote it.": "correct", "Marlowe wrote it.": "incorrect",
               "I cannot find that in the documents.": "no answer"}.get(answer,
                                                                        "partially correct")
    return json.dumps({"verdict": verdict})


@pytest.mark.parametrize(("text", "expected"), [
    ('{"verdict": "partially correct"}', "partially correct"),
    ('{"verdict": " Incorrect "}', "incorrect"),
    ("The candidate answer is incorrect.", "incorrect"),
    ("Verdict: partially correct", "partially correct"),
    ("CORRECT", "correct"),
    ("no answer", "no answer"),
])
def test_parse_choice_reads_json_or_the_one_option_named(text, expected):
    assert parse_choice(text, "verdict", V) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ('{"verdict": "mostly right"}', "not one of"),
    ("I think it is fine.", "found none"),
    ("It is correct, or perhaps incorrect.", "found correct, incorrect"),
    ("", "found none"),
])
def test_parse_choice_problems(text, problem):
    with pytest.raises(ScoreParseError, match=problem):
        parse_choice(text, "verdict", V)


def test_prompts_hold_the_facts_and_the_options():
    p = verdict_prompt("Who?", "Ada", "It was Ada.")
    assert 'True answer: "Ada"' in p and 'Candidate answer: "It was Ada."' in p
    assert all(f'"{v}"' in p for v in V) and "References" not in p
    d = details_prompt("Who?", "Ada", ["Ada wrote it.", "In 1843."], "Ada, in 1850.")
    assert '"Ada wrote it."\n"In 1843."' in d and "wrong_details" in d


def test_stepwise_maps_verdicts_to_the_paper_scale():
    item = _item("Shakespeare wrote it.", "Marlowe wrote it.",
                 "I cannot find that in the documents.", "Shakespeare, with Marlowe.",
                 "A playwright.")
    with FakeLLMServer(default=_judge_by_answer) as srv:
        out = judge([item], fast_settings(srv), mode="stepwise")
        reqs = srv.chat_requests()
        schema = reqs[0]["body"]["response_format"]["json_schema"]["schema"]
    # one verdict per answer, plus the wrong-details question for the two partial ones
    assert len(reqs) == 7
    assert schema["properties"]["verdict"]["enum"] == V
    by = out.set_index("system")
    assert by["score"].to_dict() == {"llm_only": 5, "bm25": 4, "sim": 1, "mmr": 2, "reo": 3}
    assert json.loads(by.loc["mmr", "raw"]) == {"verdict": "partially correct",
                                                "wrong_details": "yes"}
    assert json.loads(by.loc["bm25", "raw"]) == {"verdict": "incorrect"}
    assert out["error"].isna().all() and (out["position"] == 1).all()
    assert out["call_id"].nunique() == 5
    # tokens of both questions add up on the partial answers' rows
    assert by.loc["mmr", "tokens_in"] == 22 and by.loc["bm25", "tokens_in"] == 11


def test_stepwise_prose_gets_a_correction_then_is_an_error():
    with FakeLLMServer(["Looks fine to me.", '{"verdict": "correct"}'],
                       default="I would rather not say.") as srv:
        out = judge([_item("Shakespeare wrote it.", "Marlowe wrote it.")],
                    fast_settings(srv, retries=1), mode="stepwise")
        first = srv.chat_requests()[1]["body"]["messages"]
        assert len(srv.chat_requests()) == 4
    assert [m["role"] for m in first] == ["user", "assistant", "user"]
    assert "found none" in first[2]["content"] and '"verdict"' in first[2]["content"]
    by = out.set_index("system")
    assert by.loc["llm_only", "score"] == 5 and by.loc["llm_only", "error"] is None
    assert out.loc[out["system"] == "bm25", "score"].isna().all()
    assert "invalid judge reply after 2 attempts" in by.loc["bm25", "error"]
    assert by.loc["bm25", "raw"] == "I would rather not say."


def test_stepwise_failure_in_the_second_question_is_an_error_without_a_score():
    with FakeLLMServer(['{"verdict": "partially correct"}'], default=Reply(status=500)) as srv:
        out = judge([_item("Shakespeare, perhaps.")], fast_settings(srv, retries=0),
                    mode="stepwise")
    assert out["score"].isna().all() and out["error"].str.contains("500").all()


def test_stepwise_without_structured_output_sends_no_schema():
    with FakeLLMServer(default="correct") as srv:
        out = judge([_item("Shakespeare wrote it.")], fast_settings(srv, structured="none"),
                    mode="stepwise")
        body = srv.chat_requests()[0]["body"]
    assert "response_format" not in body and out["score"].tolist() == [5]
    assert "Which verdict fits" in prompt_of(srv.chat_requests()[0])


def test_unknown_mode_is_refused():
    with FakeLLMServer() as srv, pytest.raises(ValueError, match="grouped, single, stepwise"):
        judge([_item("x")], fast_settings(srv), mode="vibes")
    with pytest.raises(ConfigError, match="judge.mode"):
        load_config(None, {"judge": {"mode": "vibes"}})
    assert load_config(None, {"judge": {"mode": "stepwise"}})["judge"]["mode"] == "stepwise"
