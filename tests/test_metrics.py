"""RAGAS and RAGChecker metrics (`ragdash.metrics`): each metric on a hand-made answer whose
claims and verdicts are known (a scripted LLM decides entailment by word overlap), broken and
unreadable replies (mended or kept apart as errors, never 0), the parsing, the stage's resume
from the reply cache and the dry run that makes no call."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings, prompt_of
from fixtures.metric_replies import (
    ANSWER,
    CHUNKS,
    CLAIMS,
    GENERATED,
    ITEM,
    QUESTION,
    asked,
    bag_of_words,
    llm,
    scripted,
)
from fixtures.pipeline import llm_args

from ragdash.cli import main
from ragdash.config import ConfigError, load_config
from ragdash.metrics import METRICS, resolve
from ragdash.metrics import ragas as R
from ragdash.metrics import ragchecker as RC
from ragdash.metrics.evaluate import NO_ANSWER, cut_chunks, evaluate
from ragdash.metrics.parse import ReplyParseError, parse_claims, parse_labels, parse_questions
from ragdash.metrics.plan import planned_prompts, planned_steps
from ragdash.metrics.prompts import check_prompt
from ragdash.rundir import Run

EXPECTED = {
    # answer claims A1 (correct), A2 (1750, wrong), A3 (Paris, wrong); gold claims G1, G2
    "claim_precision": 1 / 3, "claim_recall": 1 / 2, "claim_f1": 0.4,
    # chunk 1 entails A2; chunk 2 entails A1 and G1; chunk 3 nothing
    "retriever_claim_recall": 1 / 2, "rc_context_precision": 1 / 3,
    "rc_context_precision_parts": 2 / 3, "context_utilization": 1.0,
    "noise_sensitivity_relevant": 0.0, "noise_sensitivity_irrelevant": 1 / 3,
    "noise_sensitivity_relevant_parts": 1 / 3, "noise_sensitivity_irrelevant_parts": 0.0,
    "hallucination": 1 / 3, "self_knowledge": 0.0, "rc_faithfulness": 2 / 3,
    # RAGAS: all three claims are in the joined context; useful chunks [0, 1, 0]
    "faithfulness": 1.0, "context_precision": 0.5, "context_recall": 0.5,
}


def test_every_metric_on_a_hand_made_answer():
    with FakeLLMServer(default=llm) as srv:
        table = evaluate([ITEM], fast_settings(srv), embed=bag_of_words)
        calls = len(srv.chat_requests())
    row = table.iloc[0]
    for name, value in EXPECTED.items():
        assert row[name] == pytest.approx(value), name
    cos = bag_of_words([QUESTION, *GENERATED])
    cos = cos / np.linalg.norm(cos, axis=1, keepdims=True)
    assert row["answer_relevancy"] == pytest.approx(float(np.mean(cos[1:] @ cos[0])))
    assert 0 < row["answer_relevancy"] < 1
    assert row["error"] is None and row["notes"] is None
    # 2 claim lists + 2 checks + 3 chunk checks + nli + questions + 3 usefulness + recall
    assert calls == row["calls"] == 13
    detail = json.loads(row["detail"])
    assert detail["values"]["answer_claims"] == CLAIMS[ANSWER]
    assert set(table.columns) >= set(METRICS)


def test_llm_only_answers_get_no_context_metrics_and_no_error():
    item = ITEM._replace(system="llm_only", budget=None, chunks=None, parts_relevant=None)
    with FakeLLMServer(default=llm) as srv:
        row = evaluate([item], fast_settings(srv), embed=bag_of_words).iloc[0]
    assert row["claim_f1"] == pytest.approx(0.4) and row["answer_relevancy"] > 0
    assert math.isnan(row["faithfulness"]) and math.isnan(row["hallucination"])
    assert row["error"] is None and "LLM only" in row["notes"]


def test_broken_json_is_mended_and_unreadable_replies_are_errors_not_zeros():
    def broken(body: dict) -> Reply:
        p = asked(body)
        if p.startswith("Break the answer") and "1750" in p:  # unclosed, single quotes
            return Reply("Sure! {'claims': ['Shakespeare wrote Hamlet', 'Hamlet was written "
                         "in 1750', 'Hamlet was written in Paris'")
        if p.startswith("Given a context and the sentences"):
            return Reply("I think the answer is mostly fine.")  # never a verdict
        if p.startswith("Judge the faithfulness"):
            return Reply('{"verdicts": [1]}')  # wrong count, every time
        return llm(body)

    with FakeLLMServer(default=broken) as srv:
        row = evaluate([ITEM], fast_settings(srv, retries=1), embed=bag_of_words).iloc[0]
        recall_asks = [r for r in srv.chat_requests()
                       if prompt_of(r).startswith("Your reply could not be used")]
    assert row["claim_precision"] == pytest.approx(1 / 3)  # the mended claims were read
    assert math.isnan(row["context_recall"]) and math.isnan(row["faithfulness"])
    assert "recall_attribution:" in row["error"] and "nli:" in row["error"]
    assert "expected 3 verdicts, found 1" in row["error"]
    assert len(recall_asks) == 2  # one correction each, then the error is recorded
    assert row["hallucination"] == pytest.approx(1 / 3)  # other metrics unaffected


def test_a_failed_call_and_a_missing_answer_are_kept_apart():
    def down(body: dict) -> Reply:
        return Reply(status=500) if asked(body).startswith("Write 3") else llm(body)

    gone = ITEM._replace(system="sim", answer=None, error="timeout")
    with FakeLLMServer(default=down) as srv:
        table = evaluate([ITEM, gone], fast_settings(srv, retries=0),
                         use="answer_relevancy,claim_f1", embed=bag_of_words)
    assert list(table.columns[4:6]) == ["answer_relevancy", "claim_f1"]
    assert math.isnan(table.loc[0, "answer_relevancy"]) and "questions:" in table.loc[0, "error"]
    assert table.loc[0, "claim_f1"] == pytest.approx(0.4)
    assert table.loc[1, "error"] == NO_ANSWER and table.loc[1, "calls"] == 0


def test_noncommittal_answer_scores_zero_relevancy():
    assert R.answer_relevancy("Q?", ["Q?"], True, bag_of_words) == 0.0
    assert R.answer_relevancy("Who wrote it?", ["Who wrote it?"], False, bag_of_words) == \
        pytest.approx(1.0)
    assert math.isnan(R.answer_relevancy("Q?", [], False, bag_of_words))


@pytest.mark.parametrize(("useful", "ap"), [
    ([1, 0, 1], (1 + 2 / 3) / 2), ([0, 0, 1], 1 / 3), ([0, 0], 0.0), ([1, 1], 1.0)])
def test_context_precision_is_ragas_average_precision(useful, ap):
    assert R.context_precision(useful) == pytest.approx(ap)


def test_ragchecker_empty_sets_score_zero_and_missing_verdicts_nan():
    empty = RC.scores(RC.verdicts([], [True], [[]], [[True]], answer_claims=0, gold_claims=1))
    assert empty["claim_precision"] == 0.0 and empty["claim_f1"] == 0.0
    assert empty["rc_faithfulness"] == 0.0 and empty["hallucination"] == 0.0
    missing = RC.scores(RC.verdicts(None, [True], None, None))
    assert math.isnan(missing["claim_precision"]) and math.isnan(missing["claim_f1"])
    assert missing["claim_recall"] == 1.0 and math.isnan(missing["rc_context_precision"])


def test_parsing_is_tolerant_but_never_guesses():
    assert parse_claims('{"claims": ["a", "b"') == ["a", "b"]
    assert parse_claims("Claims:\n- Ada wrote it.\n2. In 1843.") == ["Ada wrote it.", "In 1843."]
    assert parse_claims('{"claims": []}') == []
    assert parse_claims('{"claims": [["Ada", "wrote", "it"]]}') == ["Ada wrote it"]
    with pytest.raises(ReplyParseError):
        parse_claims("The answer makes no sense to me.")
    assert parse_labels('{"verdicts": ["Entailment", "neutral", 0, true]}', 4) == [
        "entailment", "neutral", "neutral", "entailment"]
    assert parse_labels("1. Entailment 2. Contradiction", 2) == ["entailment", "contradiction"]
    with pytest.raises(ReplyParseError, match="expected 2"):
        parse_labels('{"verdicts": ["entailment"]}', 2)
    with pytest.raises(ReplyParseError):
        parse_labels('{"verdicts": ["maybe", "yes"]}', 2)
    assert parse_questions('{"questions": ["Q?"], "noncommittal": 1}') == (["Q?"], True)
    with pytest.raises(ReplyParseError):
        parse_questions('{"questions": []}')


def test_use_selects_metrics_and_rejects_unknown_ones():
    assert resolve("ragas") == ["faithfulness", "answer_relevancy", "context_precision",
                                "context_recall"]
    assert resolve(["claim_f1", "faithfulness"]) == ["faithfulness", "claim_f1"]
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        resolve("bleu")
    with pytest.raises(ConfigError, match="metrics.use"):
        load_config(overrides={"metrics.use": ["bleu"]})
    with pytest.raises(ConfigError, match="metrics.limit"):
        load_config(overrides={"metrics.limit": 0})


def test_cut_chunks_follows_the_context_cut():
    assert cut_chunks(["abcd", "efgh", "ijk"], 7) == ("abcd", "ef")
    assert cut_chunks(["abcd", "efgh"], 100) == ("abcd", "efgh")
    assert cut_chunks(["abcd"], 0) == ()


def test_planned_calls_match_the_calls_made():
    prompts, outs = planned_prompts([ITEM])
    assert len(prompts) == len(outs) == 13  # the count the hand-made answer made


def test_planned_calls_count_a_repeated_prompt_once():
    """A second system retrieving the same chunks with another answer repeats the gold claims,
    the chunk-usefulness and the context-recall prompts (the reply cache answers them), none
    that reads the answer."""
    other = ITEM._replace(system="dense", answer="Marlowe wrote Hamlet.")
    prompts, _ = planned_prompts([ITEM, other])
    assert len(prompts) == len(set(prompts)) == 13 + 13 - 1 - len(CHUNKS) - 1
    assert len(planned_prompts([ITEM, ITEM])[0]) == 13  # the same answer twice: all cached


def test_planned_checks_use_the_claims_the_cache_knows():
    """Known claims give the exact prompts a run sends; a known empty list sends no check."""
    mine, gold = CLAIMS[ANSWER], CLAIMS[ITEM.gold]
    steps = planned_steps([ITEM], None, lambda it: (mine, gold))
    checks = {p for s, p, _ in steps if s == "precision_check"}
    assert checks == {check_prompt(QUESTION, ITEM.gold, mine)}
    assert sum(s == "chunk_check" for s, _, _ in steps) == len(CHUNKS)
    none = [s for s, _, _ in planned_steps([ITEM], None, lambda it: ([], gold))]
    assert "precision_check" not in none and "nli" not in none and "recall_check" in none
    assert {s for s, _, _ in planned_steps([ITEM], None, lambda it: ([], []))} == {
        "answer_claims", "gold_claims", "questions", "chunk_useful", "recall_attribution"}


def _metrics_args(url: str, run_dir) -> list[str]:
    return [*llm_args(url, run_dir), "--set", "metrics.enabled=true", "--set",
            "metrics.use=[claim_f1,hallucination,faithfulness]"]


def test_stage_resumes_from_the_cache_and_dry_run_makes_no_call(generic, tmp_path, monkeypatch,
                                                                 capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    ds, corpus = generic
    run_dir = tmp_path / "r"
    with FakeLLMServer(default=scripted) as srv:
        assert main(["generate", "--dataset", str(ds), "--corpus", str(corpus),
                     *llm_args(srv.openai_url, run_dir)]) == 0
        before = len(srv.chat_requests())
        assert main(["metrics", "--run-dir", str(run_dir), "--dry-run", "--limit", "2"]) == 0
        assert len(srv.chat_requests()) == before  # the dry run asked nothing
        assert "calls" in capsys.readouterr().out
        assert main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--dry-run",
                     *_metrics_args(srv.openai_url, run_dir)]) == 0
        assert len(srv.chat_requests()) == before  # nor did `ragdash run --dry-run`
        priced = re.search(r"metrics: fake-model: (\d+) calls", capsys.readouterr().out)
        assert priced and int(priced.group(1)) > 0
        # stopped after two questions: the dry run counts only what the cache lacks
        use = ["--use", "claim_f1,hallucination,faithfulness"]
        assert main(["metrics", "--run-dir", str(run_dir), *use, "--limit", "2"]) == 0
        first = len(srv.chat_requests()) - before
        assert main(["metrics", "--run-dir", str(run_dir), *use, "--dry-run"]) == 0
        out = capsys.readouterr().out
        left = int(re.search(r"fake-model: (\d+) calls", out).group(1))
        assert f"{first:,} more calls are answered by the reply cache" in out, out
        assert main(["run", "--dataset", str(ds), "--corpus", str(corpus),
                     *_metrics_args(srv.openai_url, run_dir)]) == 0, capsys.readouterr().err
        measured = len(srv.chat_requests()) - before
        assert 0 < left == measured - first  # the estimate was the calls the run made
        assert main(["metrics", "--run-dir", str(run_dir), *use, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert "fake-model: 0 calls" in out and f"{measured:,} more calls are" in out, out
    run = Run(run_dir)
    table = run.read("metrics")
    assert len(table) == 4 * 3 and measured > 0
    assert list(table.columns[4:7]) == ["faithfulness", "claim_f1", "hallucination"]
    retrieved = table[table["system"] != "llm_only"]
    scored = retrieved[["faithfulness", "claim_f1", "hallucination"]].to_numpy()
    assert ((scored >= 0) & (scored <= 1)).all() and table["error"].isna().all()
    assert table.loc[table["system"] == "llm_only", "faithfulness"].isna().all()
    assert run.stage("metrics")["counts"]["answers"] == 12
    # forced again, and through `ragdash metrics`: every reply comes from the cache
    with FakeLLMServer(default=scripted) as srv:
        assert main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--force",
                     *_metrics_args(srv.openai_url, run_dir)]) == 0
        assert main(["metrics", "--run-dir", str(run_dir), "--use",
                     "claim_f1,hallucination,faithfulness", "--set",
                     f"llm.base_url={srv.openai_url}"]) == 0
        assert srv.chat_requests() == []
    again = Run(run_dir).read("metrics")
    assert again[["claim_f1", "hallucination"]].equals(table[["claim_f1", "hallucination"]])
