"""Issue 34 §2: one call plan. Each LLM stage builds its calls as data (`ChatCall` and the
judge's calls, each with the `messages` it sends first) with one function that the stage and
the dry run both use (`generation_plan`, `judge_calls`, `decompose_calls`; the metrics'
`step_plan`; eRAG's `erag_plan`), so what a dry run prices is what a run sends. Pinned here
message by message against a scripted server."""

from __future__ import annotations

import json

import pytest
from fakes.llm_server import FakeLLMServer
from fixtures.pipeline import llm_args, responder

from ragdash.cli import main
from ragdash.config import RunSpec, deep_merge, saved_spec
from ragdash.erag.calls import erag_plan
from ragdash.llm.generate import generation_plan
from ragdash.llm.judge import items_from_frames, judge_calls
from ragdash.llm.plan import not_cached
from ragdash.planning import dry_run
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.erag import chunk_items, erag_settings, prompt_options
from ragdash.stages.generate import generator_settings, requests, stand_in_answers
from ragdash.stages.judge import judge_options, judge_settings


@pytest.fixture
def env_key(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-plan")
    monkeypatch.chdir(tmp_path)
    return "sk-test-plan"


def _key(messages) -> str:
    return json.dumps(messages, sort_keys=True)


def test_the_calls_priced_are_the_calls_sent(generic, tmp_path, env_key, capsys):
    ds, corpus = generic
    args = ["--dataset", str(ds), "--corpus", str(corpus),
            *llm_args("http://127.0.0.1:9/v1", tmp_path / "r")]
    with FakeLLMServer(default=responder) as srv:
        args[args.index("--llm-url") + 1] = srv.openai_url
        assert main(["score", *args]) == 0
        run = Run(tmp_path / "r")
        # generation and judging switched on: a dry run prices the stages a run would perform
        spec = RunSpec.from_config(deep_merge(saved_spec(run.manifest).to_config(), {
            "generation": {"enabled": True}, "judge": {"enabled": True}}))
        g = spec.generation
        plan = generation_plan(requests(run, spec), reference_prompts=g.reference_prompts,
                               prompt=g.prompt)
        priced = dry_run(run, spec)
        assert main(["generate", *args]) == 0
        sent = [r["body"]["messages"] for r in srv.chat_requests()]
        # the same calls (sent several at once, so in any order): what the dry run counted
        assert sorted(_key(c.messages) for c in plan.calls) == sorted(_key(m) for m in sent)
        assert priced["generation"].calls == len(sent) == len(plan.calls)
        # the judge, priced before answers on stand-in answers by its own call builder, asks
        # as many calls as it does on the real answers
        judge = judge_settings(spec)
        before = judge_calls(items_from_frames(stand_in_answers(requests(run, spec)),
                                               run.read("examples")), judge,
                             **judge_options(spec))[1]
        assert priced["judge"].calls == len(before)
        run = Run(run.path)
        after = dry_run(run, spec)  # answers exist: the judge is priced on them
        planned = judge_calls(items_from_frames(run.read("answers"), run.read("examples")),
                              judge, **judge_options(spec))[1]
        assert main(["judge", *args]) == 0
        judged = [r["body"]["messages"] for r in srv.chat_requests()][len(sent):]
        assert sorted(_key(c.messages) for c in planned) == sorted(_key(m) for m in judged)
        assert after["judge"].calls == len(judged) == len(before)
        assert after["generation"].calls == 0  # every generation call is in the reply cache
        # eRAG: each top-k chunk alone, priced from the plan the stage sends; a chunk that was
        # a whole context C_N makes a generation prompt again, which the reply cache answers
        with_erag = RunSpec.from_config(deep_merge(spec.to_config(),
                                                   {"erag": {"enabled": True, "k": 2}}))
        calls = erag_plan(chunk_items(run, with_erag), **prompt_options(with_erag)).calls
        left, cached = not_cached(calls, erag_settings(with_erag), RunsRoot(spec.runs_root))
        priced_erag = dry_run(run, with_erag)
        assert main(["erag", "--run-dir", str(tmp_path / "r"), "--k", "2", "-q"]) == 0
        asked = [r["body"]["messages"] for r in srv.chat_requests()][len(sent) + len(judged):]
        assert sorted(_key(c.messages) for c in left) == sorted(_key(m) for m in asked)
        assert priced_erag["erag"].calls == len(asked) == len(calls) - cached > 0
        assert f"erag: {cached:,} more calls answered" in priced_erag["note"]
        assert dry_run(run, with_erag)["erag"].calls == 0  # now all in the reply cache
    assert generator_settings(spec).model == "fake-model"
