"""Faults from a scripted server: each is retried, then recorded as an error and excluded;
the successful path parses the scores."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings, prompt_of

from ragdash.llm import Candidate, JudgeItem, LLMError
from ragdash.llm.generate import generate
from ragdash.llm.judge import items_from_frames, judge


def _by_question(replies: dict[str, Reply | str], default: str = "A fine answer."):
    """A responder choosing the reply from the question in the prompt."""
    def respond(body):
        text = body["messages"][-1]["content"]
        for marker, reply in replies.items():
            if marker in text:
                return reply
        return default
    return respond


def test_timeout_is_retried_then_succeeds():
    with FakeLLMServer([Reply(text="late", delay_s=1.5)], default="Paris.") as srv:
        out = generate([("q", "llm_only", None, "Capital of France?", None)],
                       fast_settings(srv, timeout_s=0.5))
        assert len(srv.chat_requests()) == 2
    assert out["answer"][0] == "Paris." and out["error"].isna().all()


def test_timeout_every_time_is_recorded_and_other_calls_go_on():
    respond = _by_question({"slow question": Reply(text="late", delay_s=1.5)})
    with FakeLLMServer(default=respond) as srv:
        out = generate([("q1", "bm25", 1, "slow question", "d"),
                        ("q2", "bm25", 1, "quick question", "d")],
                       fast_settings(srv, retries=1, timeout_s=0.5))
        slow = [r for r in srv.chat_requests() if "slow question" in prompt_of(r)]
    assert len(slow) == 2
    assert out["answer"].isna().tolist() == [True, False]
    assert "timed out" in out["error"][0] and "2 attempts" in out["error"][0]
    assert out["error"][1] is None


def test_429_then_success():
    with FakeLLMServer([Reply(status=429)], default="Paris.") as srv:
        out = generate([("q", "llm_only", None, "Capital?", None)], fast_settings(srv))
        assert len(srv.chat_requests()) == 2
    assert out["answer"][0] == "Paris."


def test_500_is_retried_then_recorded_and_excluded_from_judging():
    respond = _by_question({"broken": Reply(status=500)})
    with FakeLLMServer(default=respond) as srv:
        settings = fast_settings(srv, retries=2)
        answers = generate([("q1", "llm_only", None, "broken", None),
                            ("q1", "bm25", 100, "fine", "docs")], settings)
        assert sum("broken" in prompt_of(r) for r in srv.chat_requests()) == 3
        srv.default = '{"scores": [4]}'
        examples = pd.DataFrame({"qid": ["q1"], "question": ["Q?"], "answer": ["A"],
                                 "parts": [["part"]]})
        judged = judge(items_from_frames(answers, examples), settings)
        judge_prompt = prompt_of(srv.chat_requests()[-1])
    assert "server error 500" in answers["error"][0] and "3 attempts" in answers["error"][0]
    row = judged.set_index("system").loc["llm_only"]
    assert row["error"] == "no answer" and pd.isna(row["score"])
    assert judged.set_index("system").loc["bm25", "score"] == 4
    assert "candidate answer 2" not in judge_prompt  # only the answered candidate was shown


def test_empty_answer_is_retried_then_an_error():
    with FakeLLMServer(default="   ") as srv:
        out = generate([("q", "bm25", 1, "Q?", "d")], fast_settings(srv, retries=2))
        assert len(srv.chat_requests()) == 3
    assert out["answer"][0] is None and "empty answer" in out["error"][0]


def test_no_server_stops_the_run_with_a_clear_error():
    with FakeLLMServer() as srv:
        settings = fast_settings(srv, retries=1)
    with pytest.raises(LLMError, match="cannot connect") as info:  # the server is gone
        generate([("q1", "bm25", 1, "Q?", "d"), ("q2", "bm25", 1, "Q?", "d")], settings)
    assert info.value.kind == "connection"


def _item(n: int = 3) -> JudgeItem:
    return JudgeItem("q1", "Who wrote Hamlet?", "Shakespeare", ["Hamlet is by Shakespeare."],
                     [Candidate(s, f"answer from {s}") for s in ("llm_only", "bm25", "sim")[:n]])


def test_judge_reply_with_too_few_scores_gets_a_correction():
    with FakeLLMServer(["5, 4", '{"scores": [5, 4, 1]}']) as srv:
        out = judge([_item()], fast_settings(srv), shuffle=False)
        second = srv.chat_requests()[1]["body"]["messages"]
    assert out["score"].tolist() == [5, 4, 1] and out["error"].isna().all()
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "5, 4" and "expected 3 scores, found 2" in second[2]["content"]
    assert out["raw"][0] == '{"scores": [5, 4, 1]}'


def test_judge_prose_is_corrected_then_recorded_as_an_error():
    with FakeLLMServer(default="All three answers look reasonable to me.") as srv:
        out = judge([_item()], fast_settings(srv, retries=2), shuffle=False)
        assert len(srv.chat_requests()) == 3
    assert out["score"].isna().all()
    assert out["error"].str.contains("invalid judge reply after 3 attempts: no scores").all()
    assert out["raw"].eq("All three answers look reasonable to me.").all()


def test_judge_score_out_of_range_is_an_error():
    with FakeLLMServer(default="5, 9, 1") as srv:
        out = judge([_item()], fast_settings(srv, retries=1))
        assert len(srv.chat_requests()) == 2
    assert out["score"].isna().all() and out["error"].str.contains("outside").all()


def test_judge_http_failure_marks_every_candidate_of_the_call():
    with FakeLLMServer(default=Reply(status=503)) as srv:
        out = judge([_item()], fast_settings(srv, retries=1))
    assert len(out) == 3 and out["error"].str.contains("server error 503").all()


def test_successful_judging_maps_shuffled_positions_back_to_systems():
    wanted = {"answer from llm_only": 1, "answer from bm25": 5, "answer from sim": 3}

    def respond(body):
        prompt = body["messages"][0]["content"]
        shown = [ln.split('"')[1] for ln in prompt.split("\n")
                 if ln.startswith("candidate answer")]
        return json.dumps({"scores": [wanted[a] for a in shown]})

    items = [_item()._replace(qid=f"q{i}") for i in range(6)]
    with FakeLLMServer(default=respond) as srv:
        out = judge(items, fast_settings(srv, concurrency=3), seed=7)
        body = srv.chat_requests()[0]["body"]
    assert out["error"].isna().all()
    for system, score in (("llm_only", 1), ("bm25", 5), ("sim", 3)):
        assert (out.loc[out["system"] == system, "score"] == score).all()
    orders = {tuple(g.sort_values("position")["system"]) for _, g in out.groupby("qid")}
    assert len(orders) > 1  # shuffled differently across questions
    assert body["response_format"]["json_schema"]["schema"]["properties"]["scores"][
        "maxItems"] == 3


@pytest.mark.parametrize("backend", ["openai", "ollama"])
@pytest.mark.parametrize("body", [b"<html><body>502 Bad Gateway</body></html>",
                                  b'{"id": "x", "object": "not.a.completion"'])
def test_a_200_that_is_not_a_chat_reply_is_retried_then_recorded(backend, body):
    bad = Reply(raw=body, content_type="text/html" if body.startswith(b"<") else
                "application/json")
    with FakeLLMServer([bad], default="Paris.") as srv:
        ok = generate([("q", "llm_only", None, "Capital of France?", None)],
                      fast_settings(srv, backend))
        assert len(srv.chat_requests()) == 2  # retried once
    assert ok["answer"].tolist() == ["Paris."] and ok["error"].isna().all()
    with FakeLLMServer(default=bad) as srv:
        out = generate([("q", "llm_only", None, "Capital of France?", None),
                        ("q2", "llm_only", None, "Capital of Italy?", None)],
                       fast_settings(srv, backend))
    assert out["answer"].isna().all() and len(out) == 2
    assert out["error"].str.len().gt(0).all()
