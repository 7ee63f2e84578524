"""The figures of benchmarks/checker_agreement.py: chunk-level agreement, the AUC interval, and
the reading of an LLM's and a cross-encoder's verdicts (no model needed)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "checker_agreement.py"
_spec = importlib.util.spec_from_file_location("checker_agreement", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_chunk_agreement_counts_and_kappa():
    # truth: 2 relevant of 5; verdicts: 1 hit, 1 miss, 1 false alarm, 2 right rejections
    truth = [True, True, False, False, False]
    said = [True, False, True, False, False]
    a = bench.chunk_agreement(said, truth)
    assert a["chunks"] == 5 and a["relevant"] == 2
    assert a["accuracy"] == pytest.approx(0.6)
    assert a["balanced_accuracy"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert a["share_yes"] == pytest.approx(0.4)
    # observed 0.6; chance 0.4*0.4 + 0.6*0.6 = 0.52 -> (0.6 - 0.52) / 0.48
    assert a["kappa"] == pytest.approx(0.08 / 0.48)
    assert math.isnan(a["auc"])


def test_chunk_agreement_all_yes_has_chance_kappa_and_balanced_accuracy():
    a = bench.chunk_agreement([True] * 4, [True, False, False, False], [0.9, 0.1, 0.2, 0.3])
    assert a["kappa"] == pytest.approx(0.0)
    assert a["balanced_accuracy"] == pytest.approx(0.5)
    assert a["auc"] == pytest.approx(1.0)


def test_auc_interval_perfect_and_skips_nan():
    a = bench.auc_interval([0.1, 0.2, math.nan, 0.8, 0.9], [False, False, True, True, True],
                           n_boot=200)
    assert a["n"] == 4 and a["correct"] == 2
    assert a["auc"] == pytest.approx(1.0)
    assert a["low"] == pytest.approx(1.0) and a["high"] == pytest.approx(1.0)


def test_llm_view_reads_ragdash_detail():
    v = {"answer_claims": ["a1", "a2"], "gold_claims": ["g1"],
         "precision_check": [True, False], "recall_check": [True], "nli": [True, True],
         "chunk_answer": [[True, False], [False, False]], "chunk_gold": [[False], [True]],
         "chunk_useful": [False, True]}
    got = bench.llm_view(v)
    assert got["chunk_entails_gold"] == [False, True]
    assert got["claim_precision"] == 0.5 and got["claim_recall"] == 1.0
    assert got["faithfulness"] == 1.0 and got["rc_faithfulness"] == 0.5
    assert got["context_precision"] == pytest.approx(0.5)
    assert got["answer_claims"] == 2


def test_llm_view_no_claims_is_unscored_faithfulness_and_zero_shares():
    got = bench.llm_view({"answer_claims": [], "gold_claims": ["g"], "precision_check": [],
                          "recall_check": [False], "nli": [], "chunk_answer": [[]],
                          "chunk_gold": [[False]]})
    assert math.isnan(got["faithfulness"])
    assert got["rc_faithfulness"] == 0.0 and got["claim_precision"] == 0.0
    assert got["chunk_useful"] is None and math.isnan(got["context_precision"])


def test_nli_view_thresholds_probabilities():
    n = {"precision": [0.3, 0.1], "recall": [0.05],
         "chunk_answer": [[0.25, 0.0], [0.0, 0.1]], "chunk_gold": [[0.1], [0.5]]}
    got = bench.nli_view(n, 0.2)
    assert got["chunk_entails_gold"] == [False, True]
    assert got["chunk_score"] == [0.1, 0.5]
    assert got["claim_precision"] == 0.5 and got["claim_recall"] == 0.0
    assert got["faithfulness"] == 0.5
    assert got["context_precision"] == pytest.approx(0.5)
