"""Issue 33 §1: the default generator and its prompts (benchmarks/default_generator.py measured
them): the LLM-only prompt never speaks of documents, the RAG prompt keeps an exact refusal
sentence that the refusal rule recognises, and the local default generator is the 1.5B."""

from __future__ import annotations

import re

import pytest

from ragdash.config import load_config, load_spec
from ragdash.llm.local.models import QWEN_1_5B, model_alias
from ragdash.llm.prompts import GENERATION_PROMPTS, generation_prompt, generation_prompt_version
from ragdash.llm.refusal import ABSTAIN_SENTENCE, LLM_ONLY_ABSTAIN_SENTENCE, RefusalRule
from ragdash.llm.settings import LOCAL_GENERATOR, generator_model_for, local_default_llm
from ragdash.stages.generate import generator_settings
from ragdash.stages.runner import stage_keys

DOCUMENT_WORDS = re.compile(r"document|context|passage|reference|source|text", re.IGNORECASE)
PROMPT_VERSION_BEFORE_ISSUE_33 = "98df40a4d6c0"


def exact_reply(prompt: str) -> str:
    """The sentence a prompt asks to reply with exactly."""
    found = re.findall(r'reply exactly: "([^"]+)"', prompt)
    assert len(found) == 1, prompt
    return found[0]


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("prompt", GENERATION_PROMPTS)
def test_the_llm_only_prompt_never_mentions_documents(prompt, reference):
    text = generation_prompt("Who wrote Hamlet?", None, prompt=prompt, reference=reference)
    assert not DOCUMENT_WORDS.search(text.replace("Who wrote Hamlet?", "")), text


@pytest.mark.parametrize("reference", [False, True])
def test_the_rag_prompt_keeps_an_exact_refusal_sentence_the_rule_recognises(reference):
    rag = generation_prompt("Q?", "Some documents.", prompt="abstain", reference=reference)
    assert exact_reply(rag) == ABSTAIN_SENTENCE
    only = generation_prompt("Q?", None, prompt="abstain", reference=reference)
    assert exact_reply(only) == LLM_ONLY_ABSTAIN_SENTENCE
    rule = RefusalRule()
    for sentence in (ABSTAIN_SENTENCE, LLM_ONLY_ABSTAIN_SENTENCE):
        assert rule.match(sentence) is not None
        assert rule.match(f"{sentence[:-1]}, sorry.") is not None  # also inside a reply


def test_the_rag_prompt_asks_for_the_answer_last_and_in_one_or_two_sentences():
    rag = generation_prompt("Who wrote Hamlet?", "Hamlet is a play by Shakespeare.",
                            prompt="abstain")
    last = rag.split("\n")[-1]
    assert rag.index("Shakespeare") < rag.index("Who wrote Hamlet?") < rag.index(last)
    assert "one or two sentences" in last and "reply exactly" not in last


def test_a_change_of_one_prompts_text_rekeys_only_the_runs_that_use_it(monkeypatch):
    import ragdash.llm.prompts as prompts

    paper, abstain = (generation_prompt_version(p) for p in ("paper", "abstain"))
    assert paper != abstain and PROMPT_VERSION_BEFORE_ISSUE_33 not in (paper, abstain)
    configs = {p: load_config(overrides={"generation.prompt": p}) for p in ("paper", "abstain")}
    before = {p: stage_keys(cfg)["generate"] for p, cfg in configs.items()}
    monkeypatch.setattr(prompts, "ABSTAIN_ANSWER", "Answer in one sentence.")
    assert generation_prompt_version("abstain") != abstain
    assert generation_prompt_version("paper") == paper
    after = {p: stage_keys(cfg)["generate"] for p, cfg in configs.items()}
    assert after["abstain"] != before["abstain"] and after["paper"] == before["paper"]


def test_the_default_generator_is_the_1_5b(monkeypatch):
    monkeypatch.delenv("RAGDASH_LOCAL_MODEL", raising=False)
    assert LOCAL_GENERATOR in QWEN_1_5B.names
    cfg = load_config()
    assert cfg["generation"]["llm"] == {"backend": "local", "model": LOCAL_GENERATOR}
    assert cfg["llm"]["model"] is None  # MLQ's sub-questions stay on the 0.5B
    # the Build page's overrides with an empty model field
    spec = load_spec(None, {"llm.backend": "local", "generation.enabled": True,
                            "generation.prompt": "abstain"})
    assert model_alias(generator_settings(spec).model) == QWEN_1_5B.alias
    assert load_config(overrides={"llm.max_tokens": 96})["generation"]["llm"] == {
        "backend": "local", "model": LOCAL_GENERATOR, "max_tokens": 96}
    again = load_spec(None, cfg).to_config()
    assert again["generation"]["llm"] == cfg["generation"]["llm"]


@pytest.mark.parametrize("overrides", [
    {"llm.model": "qwen"},  # a model named for the run: it answers too
    {"generation.llm": {"backend": "local", "model": "smollm2"}},
    {"llm.backend": "openai"},
    {"llm.base_url": "http://127.0.0.1:8011/v1"},  # a running server serves its own model
])
def test_a_chosen_generator_is_kept(monkeypatch, overrides):
    monkeypatch.delenv("RAGDASH_LOCAL_MODEL", raising=False)
    spec = load_spec(None, overrides)
    assert generator_settings(spec).model != LOCAL_GENERATOR


def test_the_local_model_variable_is_kept(monkeypatch):
    monkeypatch.setenv("RAGDASH_LOCAL_MODEL", "smollm2")
    assert local_default_llm({"backend": "local", "model": None}) is None
    assert load_config()["generation"]["llm"] is None


def test_a_saved_run_keeps_the_generator_it_was_made_with(monkeypatch):
    """A saved config names its generator (None: the run's `llm`, the 0.5B then)."""
    monkeypatch.delenv("RAGDASH_LOCAL_MODEL", raising=False)
    saved = {**load_config(), "generation": {**load_config()["generation"], "llm": None}}
    assert load_config(None, saved)["generation"]["llm"] is None
    assert generator_model_for("local", None) == LOCAL_GENERATOR
    assert generator_model_for("local", "qwen") == "qwen"
    assert generator_model_for("openai", None) is None
