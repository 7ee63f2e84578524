"""generate() and judge(): tables, order, progress, prompts sent, Ollama path, resume."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, fast_settings, prompt_of

from ragdash.llm import Candidate, JudgeItem, LLMCache, parse_scores
from ragdash.llm.generate import ANSWER_COLUMNS, generate
from ragdash.llm.judge import JUDGMENT_COLUMNS, ScoreParseError, items_from_frames, judge

REQS = [("q1", "llm_only", None, "Who wrote Hamlet?", None),
        ("q1", "bm25", 1000, "Who wrote Hamlet?", "Hamlet is a play by Shakespeare."),
        ("q2", "sim", 1000, "Capital of France?", "Paris is the capital of France.")]


def _echo(body):
    return "About France." if "France" in body["messages"][-1]["content"] else "About Hamlet."


@pytest.mark.parametrize("backend", ["openai", "ollama"])
def test_generate_table_in_request_order(backend):
    seen: list[tuple[int, int]] = []
    with FakeLLMServer(default=_echo) as srv:
        out = generate(REQS, fast_settings(srv, backend, concurrency=3),
                       progress=lambda d, t: seen.append((d, t)))
        prompts = [prompt_of(r) for r in srv.chat_requests()]
    assert list(out.columns) == ANSWER_COLUMNS
    assert out[["qid", "system"]].values.tolist() == [[q, s] for q, s, *_ in REQS]
    assert out["budget"].tolist()[1:] == [1000, 1000] and pd.isna(out["budget"][0])
    assert out["tokens_in"].tolist() == [11] * 3 and out["tokens_out"].tolist() == [7] * 3
    assert (out["model"] == "fake-model").all() and out["error"].isna().all()
    assert out["answer"].tolist() == ["About Hamlet.", "About Hamlet.", "About France."]
    assert seen[0] == (0, 3) and seen[-1] == (3, 3) and len(seen) == 4
    llm_only = [p for p in prompts if "Documents:" not in p]
    assert llm_only == ["Respond to the query with a precise, one-sentence explanation.\n"
                        "Query: Who wrote Hamlet?"]
    assert sum("Documents:\nParis is the capital of France." in p for p in prompts) == 1


def test_reference_prompts_are_sent_when_asked():
    with FakeLLMServer() as srv:
        generate(REQS[:1], fast_settings(srv), reference_prompts=True)
        assert prompt_of(srv.chat_requests()[0]).startswith("Responde with")


def test_requests_may_be_mappings():
    with FakeLLMServer() as srv:
        out = generate([{"qid": 7, "system": "llm_only", "budget": None, "question": "Q?",
                         "context": None}], fast_settings(srv))
    assert out["qid"].tolist() == ["7"] and out["answer"].tolist() == ["ok"]


def test_interrupted_run_keeps_finished_calls(tmp_path):
    reqs = [(f"q{i}", "bm25", 100, f"Question {i}?", "docs") for i in range(6)]

    def stop_after_two(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with FakeLLMServer(default="An answer.") as srv:
        settings = fast_settings(srv)
        with pytest.raises(KeyboardInterrupt):
            generate(reqs, settings, cache=tmp_path / "c.sqlite", progress=stop_after_two)
        first = len(srv.chat_requests())
        with LLMCache(tmp_path / "c.sqlite") as cache:
            kept = len(cache)
        out = generate(reqs, settings, cache=tmp_path / "c.sqlite")
        again = len(srv.chat_requests()) - first
    assert 2 <= kept == first < 6
    assert again == 6 - kept and out["error"].isna().all()


@pytest.mark.parametrize("text,expected", [
    ('{"scores": [5, 1, 3]}', [5, 1, 3]),
    ("5, 1, 3", [5, 1, 3]),
    ("[5,1,3]", [5, 1, 3]),
    ("candidate answer 1: 5\ncandidate answer 2: 1\ncandidate answer 3: 3", [5, 1, 3]),
    ("1. 5\n2. 1\n3. 3", [5, 1, 3]),
    ("Scores: 5 (4 out of 5 is too low), 1, 3", None),
    ("```json\n{\"scores\": [5, 1, 3]}\n```", [5, 1, 3]),
])
def test_parse_scores(text, expected):
    if expected is None:
        with pytest.raises(ScoreParseError):
            parse_scores(text, 3)
    else:
        assert parse_scores(text, 3) == expected


@pytest.mark.parametrize("text,problem", [
    ("5, 1", "expected 3 scores, found 2"), ("5, 7, 1", "outside"),
    ("4.5, 1, 2", "outside"), ("They are all fine.", "no scores"),
    ('{"scores": [5, 1, "x"]}', "not a score")])
def test_parse_scores_problems(text, problem):
    with pytest.raises(ScoreParseError, match=problem):
        parse_scores(text, 3)


def _items(n: int = 8) -> list[JudgeItem]:
    systems = ("llm_only", "bm25", "sim", "mmr", "reo", "mlq")
    return [JudgeItem(f"q{i}", f"Question {i}?", "gold", ["fact one", "fact two"],
                      [Candidate(s, f"{s} says {i}", 1000 if s != "llm_only" else None)
                       for s in systems]) for i in range(n)]


def _score_by_system(body):
    prompt = body["messages"][0]["content"]
    shown = [ln.split('"')[1].split(" says")[0] for ln in prompt.split("\n")
             if ln.startswith("candidate answer")]
    return json.dumps({"scores": [1 + len(s) % 5 for s in shown]})


def test_judge_shuffle_is_seeded_per_question_and_recorded():
    with FakeLLMServer(default=_score_by_system) as srv:
        a = judge(_items(), fast_settings(srv, concurrency=2), seed=1)
        b = judge(_items(), fast_settings(srv), seed=1)
        c = judge(_items(), fast_settings(srv), seed=2)
        fixed = judge(_items(), fast_settings(srv), shuffle=False)
    assert list(a.columns) == JUDGMENT_COLUMNS
    def orders(df):
        return df.sort_values(["qid", "position"]).groupby("qid")["system"].agg(tuple).tolist()

    assert orders(a) == orders(b) and orders(a) != orders(c)
    assert len(set(orders(a))) > 1
    for df in (a, c, fixed):
        assert sorted(df.loc[df["qid"] == "q3", "position"]) == [1, 2, 3, 4, 5, 6]
        assert (df["score"] == df["system"].map(lambda s: 1 + len(s) % 5)).all()
    order = fixed[fixed["qid"] == "q0"].sort_values("position")["system"].tolist()
    assert order == ["llm_only", "bm25", "sim", "mmr", "reo", "mlq"]
    assert a["call_id"].nunique() == 8 and (a["judge_model"] == "fake-model").all()
    assert a["budget"].isna().sum() == 8


def test_judge_single_mode_makes_one_call_per_answer():
    items = _items(2)
    with FakeLLMServer(default='{"scores": [2]}') as srv:
        out = judge(items, fast_settings(srv, "ollama"), mode="single")
        assert len(srv.chat_requests()) == 12
        fmt = srv.chat_requests()[0]["body"]["format"]
    assert (out["score"] == 2).all() and out["call_id"].nunique() == 12
    assert (out["position"] == 1).all()
    assert fmt["properties"]["scores"]["maxItems"] == 1


def test_candidates_without_answers_are_not_shown():
    item = JudgeItem("q", "Q?", "A", ["p"], [Candidate("llm_only", "yes"),
                                              Candidate("bm25", None, 1000, "timed out"),
                                              Candidate("sim", "  ")])
    with FakeLLMServer(default="4") as srv:
        out = judge([item], fast_settings(srv))
        prompt = prompt_of(srv.chat_requests()[0])
    assert prompt.count("\ncandidate answer ") == 1
    by = out.set_index("system")
    assert by.loc["llm_only", "score"] == 4
    assert by.loc["bm25", "error"] == by.loc["sim", "error"] == "no answer"


def test_items_from_run_tables_use_paper_order_and_budget():
    answers = pd.DataFrame({
        "qid": ["1"] * 4, "system": ["mlq", "reo", "llm_only", "bm25"],
        "budget": pd.array([1000, 1000, None, 500], dtype="Int64"),
        "answer": ["m", "r", "l", "b"], "error": [None, None, None, None]})
    examples = pd.DataFrame({"qid": [1], "question": ["Q?"], "answer": ["A"],
                             "parts": [["p1", "p2"]]})
    (item,) = items_from_frames(answers, examples)
    assert [c.system for c in item.candidates] == ["llm_only", "bm25", "reo", "mlq"]
    assert item.references == ["p1", "p2"]
    (only,) = items_from_frames(answers, examples, budget=1000)
    assert [c.system for c in only.candidates] == ["llm_only", "reo", "mlq"]
    with pytest.raises(ValueError, match="not found"):
        items_from_frames(answers.assign(qid="9"), examples)
