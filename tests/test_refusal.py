"""The refusal rule before the judge, the abstain prompt, and the stage keys it changes."""

from __future__ import annotations

import pytest
from fakes.llm_server import FakeLLMServer, fast_settings, prompt_of

from ragdash.config import ConfigError, load_config
from ragdash.llm import Candidate, JudgeItem
from ragdash.llm.judge import judge
from ragdash.llm.prompts import ABSTAIN_ANSWER, generation_prompt, generation_prompt_version
from ragdash.llm.refusal import (
    ABSTAIN_SENTENCE,
    DEFAULT_PATTERNS,
    LLM_ONLY_ABSTAIN_SENTENCE,
    REASON,
    RefusalRule,
)
from ragdash.stages.runner import stage_keys

REFUSALS = [
    ABSTAIN_SENTENCE,
    LLM_ONLY_ABSTAIN_SENTENCE,
    "The documents do not say who designed the bridge.",
    "The context does not mention his birthplace.",
    "There is not enough information to answer the question.",
    "The year cannot be determined from the given documents.",
    "I don't know.",
    "There is no information about the coach in the documents.",
]
ANSWERS = [
    "The capital is Paris.",
    "No, he did not have any children.",
    "Denver Broncos won Super Bowl 50.",
    "He could not find the treasure until 1922.",
    "The documents were signed in 1648.",
    "The team was unable to answer the call in time.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_refusals_match(answer):
    assert RefusalRule().match(answer) in DEFAULT_PATTERNS


@pytest.mark.parametrize("answer", ANSWERS)
def test_answers_do_not_match(answer):
    assert RefusalRule().match(answer) is None


def test_patterns_are_configurable_and_checked():
    rule = RefusalRule.from_config({"patterns": [r"\bno idea\b"]})
    assert rule.match("No idea, sorry.") == r"\bno idea\b"
    assert rule.match(ABSTAIN_SENTENCE) is None  # the defaults are replaced, not extended
    assert RefusalRule.from_config({"enabled": False}).match(ABSTAIN_SENTENCE) is None
    with pytest.raises(ConfigError, match="judge.refusal.patterns.*not a valid regular"):
        load_config(overrides={"judge": {"refusal": {"patterns": ["(unclosed"]}}})
    with pytest.raises(ConfigError, match="list of regular expressions"):
        load_config(overrides={"judge": {"refusal": {"patterns": "cannot"}}})
    assert load_config()["judge"]["refusal"] == {"enabled": True,
                                                 "patterns": list(DEFAULT_PATTERNS)}


def test_refusals_are_scored_1_without_a_judge_call():
    item = JudgeItem("q", "Capital of France?", "Paris", ["Paris is the capital of France."],
                     [Candidate("llm_only", "The capital is Paris."),
                      Candidate("bm25", "The documents do not say which city it is.", 500),
                      Candidate("sim", ABSTAIN_SENTENCE, 500)])
    with FakeLLMServer(default='{"verdict": "correct"}') as srv:
        out = judge([item], fast_settings(srv), mode="stepwise", refusal=RefusalRule())
        sent = [prompt_of(r) for r in srv.chat_requests()]
    assert len(sent) == 1 and "The capital is Paris." in sent[0]
    by = out.set_index("system")
    assert by.loc["llm_only", "score"] == 5 and by.loc["llm_only", "rule"] is None
    for system in ("bm25", "sim"):
        assert by.loc[system, "score"] == 1 and by.loc[system, "raw"] == REASON
        assert by.loc[system, "rule"] in DEFAULT_PATTERNS and by.loc[system, "error"] is None
        assert by.loc[system, "judge_model"] == "fake-model"  # kept with the judge's rows


def test_without_the_rule_every_answer_goes_to_the_judge():
    item = JudgeItem("q", "Q?", "A", ["p"], [Candidate("bm25", ABSTAIN_SENTENCE, 500)])
    with FakeLLMServer(default='{"verdict": "incorrect"}') as srv:
        out = judge([item], fast_settings(srv), mode="stepwise")
        assert len(srv.chat_requests()) == 1
    assert out["score"].tolist() == [4]


def test_abstain_prompt_answers_from_the_documents_and_keeps_the_refusal_sentence():
    abstain = generation_prompt("Q?", "Some documents.", prompt="abstain")
    assert f'reply exactly: "{ABSTAIN_SENTENCE}"' in abstain
    # the documents first, then the query, the answer instruction last (issue 33)
    assert abstain.index("Some documents.") < abstain.index("Q?")
    assert abstain.endswith(ABSTAIN_ANSWER)
    only = generation_prompt("Q?", None, prompt="abstain")
    assert f'reply exactly: "{LLM_ONLY_ABSTAIN_SENTENCE}"' in only
    assert ABSTAIN_SENTENCE not in only and ABSTAIN_SENTENCE not in generation_prompt("Q?", None)
    with pytest.raises(ValueError, match="one of paper, abstain"):
        generation_prompt("Q?", "d", prompt="polite")


def test_stage_keys_change_with_the_prompt_and_the_rule(monkeypatch):
    base = load_config()
    keys = stage_keys(base)
    abstain = stage_keys(load_config(overrides={"generation": {"prompt": "abstain"}}))
    assert abstain["retrieve"] == keys["retrieve"] and abstain["score"] == keys["score"]
    assert abstain["generate"] != keys["generate"] and abstain["judge"] != keys["judge"]
    ruled = stage_keys(load_config(overrides={"judge": {"refusal": {"patterns": ["x"]}}}))
    assert ruled["generate"] == keys["generate"] and ruled["judge"] != keys["judge"]
    with pytest.raises(ConfigError, match="generation.prompt"):
        load_config(overrides={"generation": {"prompt": "polite"}})
    # a change of prompt text alone (no config change) re-keys the LLM stages
    import ragdash.llm.prompts as prompts

    before = generation_prompt_version()
    monkeypatch.setattr(prompts, "RAG_INSTRUCTION", prompts.RAG_INSTRUCTION + " Be brief.")
    assert generation_prompt_version() != before
    changed = stage_keys(base)
    assert changed["generate"] != keys["generate"] and changed["retrieve"] == keys["retrieve"]
    monkeypatch.setitem(prompts.VERDICTS, "correct", "it states the true answer")
    assert stage_keys(base)["judge"] != changed["judge"]
