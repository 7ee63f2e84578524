"""The comparison math and the resumable JSON lines of benchmarks/ragas_agreement.py."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "ragas_agreement.py"
_spec = importlib.util.spec_from_file_location("ragas_agreement", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_agreement_known_mad_and_spearman():
    # MAD = (0.1 + 0.2 + 0.05 + 0.3) / 4 = 0.1625; both sides rise together: rho = 1
    a = bench.agreement([0.1, 0.4, 0.6, 1.0], [0.2, 0.6, 0.65, 0.7])
    assert a["n"] == 4
    assert a["mad"] == pytest.approx(0.1625)
    assert a["mean_ragdash"] == pytest.approx(0.525)
    assert a["mean_ragas"] == pytest.approx(0.5375)
    assert a["spearman"] == pytest.approx(1.0)
    assert a["missing_ragdash"] == a["missing_ragas"] == 0


def test_agreement_reversed_order_is_minus_one():
    a = bench.agreement([0.0, 0.5, 1.0], [1.0, 0.5, 0.0])
    assert a["spearman"] == pytest.approx(-1.0)
    assert a["mad"] == pytest.approx(2 / 3)


def test_agreement_drops_pairs_with_a_missing_side_and_counts_them():
    a = bench.agreement([1.0, None, math.nan, 0.0, "err"], [1.0, 0.5, 0.2, None, 0.3])
    assert a["n"] == 1
    assert a["missing_ragdash"] == 3  # None, NaN and an unreadable value
    assert a["missing_ragas"] == 1
    assert a["mad"] == 0.0
    assert math.isnan(a["spearman"])  # fewer than 3 pairs


def test_agreement_constant_side_has_no_spearman_but_a_mad():
    a = bench.agreement([1.0, 1.0, 1.0], [0.0, 0.5, 1.0])
    assert math.isnan(a["spearman"]) and math.isnan(a["p_value"])
    assert a["mad"] == pytest.approx(0.5)


def test_agreement_empty_and_unequal_lengths():
    a = bench.agreement([], [])
    assert a["n"] == 0 and math.isnan(a["mad"]) and math.isnan(a["mean_ragas"])
    with pytest.raises(ValueError, match="3 and 2"):
        bench.agreement([1, 2, 3], [1, 2])


def test_compare_aligns_by_id_and_uses_only_answers_both_sides_have():
    inputs = [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}]
    ours = [{"id": "c", "faithfulness": 0.0}, {"id": "a", "faithfulness": 1.0},
            {"id": "b", "faithfulness": 0.5}, {"id": "d", "faithfulness": 0.2}]
    theirs = [{"id": "b", "faithfulness": 0.5}, {"id": "a", "faithfulness": 1.0},
              {"id": "c", "faithfulness": 0.25}]  # d not scored yet
    rows = bench.compare(inputs, ours, theirs, metrics=["faithfulness"])
    assert rows[0]["answers"] == 3 and rows[0]["n"] == 3
    assert rows[0]["mad"] == pytest.approx(0.25 / 3)
    assert rows[0]["spearman"] == pytest.approx(1.0)
    table = bench.markdown(rows)
    assert "| faithfulness | 3 |" in table and "0.083" in table


def test_per_answer_lists_only_answers_both_sides_scored():
    inputs = [{"id": "a", "question": "Q1?", "answer": "A1."},
              {"id": "b", "question": "Q2?", "answer": "A2."}]
    table = bench.per_answer(inputs, [{"id": "a", "faithfulness": 1.0},
                                      {"id": "b", "faithfulness": 0.5}],
                             [{"id": "a", "faithfulness": None}], metrics=["faithfulness"])
    assert "| Q1? | A1. | 1.00/NaN |" in table
    assert "Q2?" not in table


def test_markdown_shows_a_dash_for_nan():
    rows = bench.compare([{"id": "a"}], [{"id": "a", "context_recall": None}],
                         [{"id": "a", "context_recall": 1.0}], metrics=["context_recall"])
    assert "| context_recall | 0 | – | – | – | – (–) | 1 · 0 |" in bench.markdown(rows)


def test_jsonl_round_trip_skips_a_torn_line_and_writes_nan_as_null(tmp_path):
    path = tmp_path / "x.jsonl"
    assert bench.read_jsonl(path) == [] and bench.done_ids(path) == set()
    bench.append_jsonl(path, {"id": "a", "faithfulness": math.nan})
    with path.open("a") as f:
        f.write('{"id": "b", "faith')  # a run killed while writing
    assert bench.read_jsonl(path) == [{"id": "a", "faithfulness": None}]
    assert bench.done_ids(path) == {"a"}
    assert json.loads(path.read_text().splitlines()[0])["faithfulness"] is None
