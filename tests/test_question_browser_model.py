"""Issue 34 §3: the Question browser's model (`ragdash.view.browser`), tested without Streamlit:
each filter alone and together (a search is literal text, not a pattern), and one system's
answer with its judge score, a failed call and a failed judgment."""

from __future__ import annotations

import pandas as pd
import pytest

from ragdash.view.browser import Filters, answer_of

TABLE = pd.DataFrame({
    "qid": ["q1", "q2", "q3", "q4"],
    "question": ["Who sang the album?", "Where is (the) tower?", "When?", "Why albums?"],
    "answer": ["Ada", "Paris", "1900", "because"],
    "type": ["bridge", "comparison", "bridge", "bridge"],
    "ir:bm25": [1.0, 0.5, 0.0, 0.2],
    "ir:sim": [0.0, 0.9, 0.3, 0.2],
    "judge:bm25": [5, 1, 3, 5],
})


def _qids(f: Filters) -> list[str]:
    return f.apply(TABLE)["qid"].tolist()


def test_each_filter_alone():
    assert _qids(Filters("bm25")) == ["q1", "q2", "q3", "q4"]
    assert _qids(Filters("bm25", (0.2, 1.0))) == ["q1", "q2", "q4"]  # ends included
    assert _qids(Filters("sim", (0.85, 1.0))) == ["q2"]
    assert _qids(Filters("bm25", search="ALBUM")) == ["q1", "q4"]
    assert _qids(Filters("bm25", search="(the)")) == ["q2"]  # literal, not a pattern
    assert _qids(Filters("bm25", search="q3")) == ["q3"]  # the id too
    assert _qids(Filters("bm25", search="paris")) == ["q2"]  # the gold answer too
    assert _qids(Filters("bm25", metadata={"type": ["comparison"]})) == ["q2"]
    assert _qids(Filters("bm25", judge=[5])) == ["q1", "q4"]
    assert _qids(Filters("sim", judge=[5])) == ["q1", "q2", "q3", "q4"]  # sim not judged


def test_filters_together_and_renumbered():
    shown = Filters("bm25", (0.1, 1.0), "album", {"type": ["bridge"]}, [5]).apply(TABLE)
    assert shown["qid"].tolist() == ["q1", "q4"] and list(shown.index) == [0, 1]
    assert Filters("bm25", (0.6, 0.7)).apply(TABLE).empty


def test_an_answer_with_its_judge_score():
    answers = pd.DataFrame({"qid": ["q1", "q1", "q2"], "system": ["bm25", "llm_only", "bm25"],
                            "answer": ["Ada sang it.", None, "Paris"],
                            "error": [None, "timeout after 30 s", None]})
    judgments = pd.DataFrame({"qid": ["q1", "q2"], "system": ["bm25", "bm25"],
                              "score": [5, None]})
    assert answer_of(answers, judgments, "q1", "bm25").judge == 5
    failed = answer_of(answers, judgments, "q1", "llm_only")
    assert (failed.text, failed.judge) == ("(error: timeout after 30 s)", None)
    assert answer_of(answers, judgments, "q2", "bm25").judge is None  # judgment failed
    assert answer_of(answers, None, "q2", "bm25").text == "Paris"
    assert answer_of(answers, judgments, "q9", "bm25") is None
    assert answer_of(None, judgments, "q1", "bm25") is None


def test_score_ir_at_the_cut():
    """Issue 48 §4: the browser's Score_IR at its movable cut, computed in the page before:
    each part's score and their mean, the semantic figure beside an exact one."""
    from ragdash.analysis.matching import SemanticMatch
    from ragdash.view.browser import CutScore, cut_score

    parts = ["the capital of France", "Lyon is large"]
    context = "Paris is the capital of France. Lyon is large."
    first = len("Paris is the capital of France.")
    assert cut_score(parts, context, first, "contains") == CutScore((1.0, 0.0), 0.5)
    assert cut_score(parts, context, len(context), "contains") == CutScore((1.0, 1.0), 1.0)
    part = cut_score(parts, context, first, "substring")
    assert part.parts[0] == 1.0 and 0 < part.parts[1] < 1  # a share of "Lyon is large"
    assert part.score == pytest.approx(sum(part.parts) / 2)
    windows = [SemanticMatch(0, 0, first, cosine=0.9, score=0.8),
               SemanticMatch(1, 0, first, cosine=0.5, score=0.4)]
    assert cut_score(parts, context, first, "semantic", windows) == \
        CutScore((0.8, 0.4), pytest.approx(0.6))
    beside = cut_score(parts, context, first, "contains", windows)
    assert (beside.score, beside.semantic) == (0.5, pytest.approx(0.6))
    assert cut_score([], context, first, "contains", windows) == CutScore((), 0.0)
