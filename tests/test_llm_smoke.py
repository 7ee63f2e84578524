"""Real end-to-end smoke test: llama.cpp server with SmolLM2, the real `openai` client."""

from __future__ import annotations

import pytest

from ragdash.llm import Candidate, JudgeItem, LLMSettings
from ragdash.llm.generate import generate
from ragdash.llm.judge import judge

pytestmark = [
    pytest.mark.slow,
    pytest.mark.requires("llama_cpp", "smollm2"),
]


def _answers(url: str) -> bool:
    """Whether a server answers at the OpenAI-compatible `url`."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as resp:
            return resp.status == 200
    except (OSError, urllib.error.URLError):
        return False


def test_local_server_serves_langchain_generates_and_judges(tmp_path):
    """One llama.cpp server (SmolLM2), started by `open_chat_model` for its block: LangChain's
    chat model, then ragdash's generation and judge on the same server; stopped on exit."""
    from ragdash.llm import open_chat_model

    with open_chat_model({"backend": "local", "model": "smollm2", "max_tokens": 16}) as llm:
        reply = llm.invoke("Say the word Paris.")
        base_url = str(llm.openai_api_base)
        assert _answers(base_url)
        settings = LLMSettings(backend="local", model="smollm2", base_url=base_url,
                               max_tokens=64, timeout_s=120, retries=1)
        answers = generate([("q1", "bm25", 1000, "What is the capital of France?",
                             "Paris is the capital and largest city of France.")], settings,
                           cache=tmp_path / "c.sqlite")
        assert answers["error"].isna().all(), answers["error"].tolist()
        answer = answers["answer"][0]
        assert answer.strip() and answers["tokens_in"][0] > 20
        judged = judge([JudgeItem("q1", "What is the capital of France?", "Paris",
                                  ["Paris is the capital and largest city of France."],
                                  [Candidate("bm25", answer, 1000)])], settings,
                       cache=tmp_path / "c.sqlite")
    assert isinstance(reply.content, str) and reply.content.strip()
    assert judged["error"].isna().all(), judged["raw"].tolist()
    assert 1 <= judged["score"][0] <= 5
    assert judged["judge_model"][0] == "smollm2-135m-instruct"
    assert not _answers(base_url)  # stopped on exit


@pytest.mark.requires("judge-1.5b")
def test_the_offline_judge_tells_a_right_answer_from_a_wrong_one(tmp_path):
    """The real Qwen2.5-Coder 1.5B judges stepwise through the lazily started local server.
    (It does not recognise refusals: "the documents do not say" comes back "incorrect".)"""
    item = JudgeItem("q1", "Which city is the capital of France?", "Paris",
                     ["Paris is the capital and largest city of France."],
                     [Candidate("bm25", "The capital of France is Paris, on the Seine.", 1000),
                      Candidate("sim", "The capital of France is Lyon.", 1000)])
    settings = LLMSettings(backend="local", model="qwen-1.5b", max_tokens=32, retries=1)
    judged = judge([item], settings, mode="stepwise", cache=tmp_path / "c.sqlite")
    assert judged["error"].isna().all(), judged["raw"].tolist()
    assert judged.set_index("system")["score"].to_dict() == {"bm25": 5, "sim": 4}
    assert (judged["judge_model"] == "qwen2.5-coder-1.5b-instruct").all()
