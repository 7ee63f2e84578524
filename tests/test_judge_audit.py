"""The judge audit: each check fails on the judge failure it is built for, passes on a judge
that reads the answers, and says n/a (never "ok") without enough data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.analysis import judge_audit as ja

SYSTEMS = ("llm_only", "bm25", "sim", "mmr", "reo", "mlq")


def _tables(n_q: int = 30, seed: int = 0):
    """Answers where half the systems copy one text; about a third state the true answer."""
    rng = np.random.default_rng(seed)
    examples = pd.DataFrame({"qid": [f"q{i}" for i in range(n_q)],
                             "question": [f"Who made thing {i}?" for i in range(n_q)],
                             "answer": [f"Person Number{i}" for i in range(n_q)]})
    rows = []
    for i in range(n_q):
        shared = f"It was Person Number{i}." if rng.random() < 0.4 else f"It was Other{i}."
        for k, s in enumerate(SYSTEMS):
            text = shared if k % 2 else f"{s} thinks Other{i}{k}."
            rows.append({"qid": f"q{i}", "system": s, "budget": None if s == "llm_only"
                         else 1000, "answer": text})
    answers = pd.DataFrame(rows).astype({"budget": "Int64"})
    return examples, answers


def _judged(answers: pd.DataFrame, score, position=None) -> pd.DataFrame:
    j = answers[["qid", "system", "budget"]].copy()
    j["score"] = pd.array([score(r) for r in answers.itertuples()], dtype="Int64")
    j["position"] = pd.array(position if position is not None else [None] * len(j),
                             dtype="Int64")
    return j


def _reader(r) -> int:
    return 5 if "Person" in r.answer else 4


def _by_status(checks):
    return {c.name: c.status for c in checks}


def test_a_judge_that_reads_the_answers_passes_every_check():
    examples, answers = _tables()
    checks = ja.audit(_judged(answers, _reader), answers, examples)
    assert _by_status(checks) == {"spread": "ok", "consistency": "ok", "position": "n/a",
                                  "reference_match": "ok"}
    rm = next(c for c in checks if c.name == "reference_match")
    assert rm.value == pytest.approx(1.0) and "100% of the" in rm.finding


def test_a_constant_judge_fails_spread_and_reference_match():
    examples, answers = _tables()
    checks = ja.audit(_judged(answers, lambda r: 1), answers, examples)
    status = _by_status(checks)
    assert status["spread"] == "warn" and status["reference_match"] == "warn"
    assert "100%" in checks[0].finding and ja.summary(checks)["warnings"] == 2


def test_a_position_judge_fails_position_and_consistency():
    examples, answers = _tables()
    positions = [k + 1 for _ in range(30) for k in range(6)]
    judged = _judged(answers, lambda r: 0, positions)
    judged["score"] = pd.array([min(p, 5) for p in positions], dtype="Int64")
    checks = ja.audit(judged, answers, examples)
    status = _by_status(checks)
    assert status["position"] == "warn" and status["consistency"] == "warn"
    pos = next(c for c in checks if c.name == "position")
    assert pos.value > 0.9 and "1: 1.0" in pos.finding


def test_shuffled_positions_of_a_reading_judge_are_not_a_bias():
    examples, answers = _tables(60)
    rng = np.random.default_rng(3)
    positions = np.concatenate([rng.permutation(6) + 1 for _ in range(60)])
    checks = ja.audit(_judged(answers, _reader, positions), answers, examples)
    assert _by_status(checks)["position"] == "ok"


def test_errors_are_left_out_and_yes_no_answers_skipped():
    examples, answers = _tables(4)
    judged = _judged(answers, _reader)
    judged.loc[::2, "score"] = pd.NA
    checks = ja.audit(judged, answers, examples.assign(answer="yes"))
    assert _by_status(checks) == {"spread": "ok", "consistency": "n/a", "position": "n/a",
                                  "reference_match": "n/a"}
    assert "of 12 answers" in checks[0].finding  # 12 of 24 were errors
    assert ja.spread(judged.iloc[:4]).status == "n/a"


def test_without_answers_only_the_score_checks_run():
    _, answers = _tables()
    assert [c.name for c in ja.audit(_judged(answers, _reader))] == ["spread", "position"]


def test_normalize_is_squad_like():
    assert ja.normalize("The  Eiffel-Tower!") == "eiffeltower"
    assert ja.normalize("an Apple, a day") == "apple day"


def test_reference_match_with_no_answer_on_one_side_says_so():
    import pandas as pd

    from ragdash.analysis.judge_audit import reference_match

    n = 30
    examples = pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "answer": ["Paris"] * n})
    answers = pd.DataFrame({"qid": examples["qid"], "system": "bm25", "answer": ["Lyon."] * n})
    judgments = pd.DataFrame({"qid": examples["qid"], "system": "bm25",
                              "score": [4] * (n - 5) + [5] * 5})
    check = reference_match(judgments, answers, examples)
    assert "nan" not in check.finding and "there are no answers that contain" in check.finding
