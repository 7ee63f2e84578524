"""Issue 35 §3 (first part): CRAG's truthfulness score (Yang et al., NeurIPS 2024): correct +1,
missing (a refusal) 0, incorrect −1 per answer, from people's labels where they exist, else the
judge, else a reference metric; per system the mean with a bootstrap interval over questions;
shown on the LLM results page and in the report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.analysis import truthfulness as T
from ragdash.constants import PROJECT_ROOT
from ragdash.view import RunView


def _answers(rows):
    return pd.DataFrame(rows, columns=["qid", "system", "answer", "error"])


def test_each_answer_takes_the_first_source_that_has_it():
    answers = _answers([("q1", "a", "Paris", None), ("q1", "b", "I cannot find enough "
                        "information in the documents.", None), ("q2", "a", "Lyon", None),
                        ("q2", "b", None, "timeout"), ("q3", "a", "Nice", None)])
    refused = answers["answer"].fillna("").str.contains("cannot find")
    labels = pd.DataFrame({"qid": ["q1", "q2"], "system": ["a", "a"], "score": [1, 5],
                           "labeller": ["ana", "stand-in: contains"]})
    judgments = pd.DataFrame({"qid": ["q1", "q2", "q1"], "system": ["a", "a", "b"],
                              "score": [5, 1, 1]})
    reference = pd.DataFrame({"qid": ["q3"], "system": ["a"], "contains": [1.0]})
    c = T.classify(answers, refused=refused, labels=labels, judgments=judgments,
                   reference=reference).set_index(["qid", "system"])
    # a person said wrong although the judge gave 5: the label wins
    assert (c.loc[("q1", "a"), "class"], c.loc[("q1", "a"), "source"]) == ("incorrect", "labels")
    # a stand-in label is no person's: the judge decides
    assert (c.loc[("q2", "a"), "class"], c.loc[("q2", "a"), "source"]) == ("incorrect", "judge")
    assert c.loc[("q1", "b"), "class"] == "missing" and c.loc[("q1", "b"), "truthfulness"] == 0
    assert c.loc[("q3", "a"), "source"] == "reference metric: contains"
    assert ("q2", "b") not in c.index  # a failed call is no answer
    assert T.sources_text(c.reset_index()).startswith("people's labels (1)")


def test_a_system_that_hallucinates_scores_below_one_that_abstains():
    rng = np.random.default_rng(0)
    rows, judged = [], []
    for i in range(40):
        right = rng.random() < 0.4
        rows += [(f"q{i}", "bold", "An answer.", None),
                 (f"q{i}", "careful", "An answer." if right else "I do not know the answer.",
                  None)]
        judged += [(f"q{i}", "bold", 5 if right else 1), (f"q{i}", "careful", 5 if right else 1)]
    answers = _answers(rows)
    refused = answers["answer"].str.contains("do not know")
    judgments = pd.DataFrame(judged, columns=["qid", "system", "score"])
    table = T.scores(T.classify(answers, refused=refused, judgments=judgments),
                     ["bold", "careful"]).set_index("system")
    # the same right answers; bold answers the rest wrongly, careful declines
    assert table.loc["careful", "correct"] == table.loc["bold", "correct"]
    assert table.loc["careful", "score"] > table.loc["bold", "score"]
    assert table.loc["careful", "score"] == pytest.approx(table.loc["careful", "correct"])
    assert -1 <= table.loc["bold", "lo"] <= table.loc["bold", "score"] <= table.loc["bold", "hi"]
    assert table.loc["bold", "missing"] == 0 and table["n"].eq(40).all()
    said = T.sentence(table.reset_index())
    assert said.startswith("careful scores highest") and "bold" in said


def test_ties_are_named_together_at_the_top_and_below_it():
    table = pd.DataFrame({"system": ["a", "b", "c", "d"], "score": [0.5, 0.2, 0.2, 0.1],
                          "lo": [0.3, 0.0, 0.0, -0.1], "hi": [0.7, 0.4, 0.4, 0.3],
                          "n": [10] * 4, "correct": [.6] * 4, "missing": [.2] * 4,
                          "incorrect": [.2] * 4})
    assert T.sentence(table) == ("a scores highest (+0.50), then b and c (+0.20); their "
                                 "intervals overlap.")


def test_ties_are_named_together_and_negative_scores_said():
    table = pd.DataFrame({"system": ["a", "b", "c"], "score": [0.3, 0.3, -0.2],
                          "lo": [0.1, 0.1, -0.4], "hi": [0.5, 0.5, 0.0], "n": [10, 10, 10],
                          "correct": [.5, .5, .3], "missing": [.3, .3, .2],
                          "incorrect": [.2, .2, .5]})
    said = T.sentence(table)
    assert said.startswith("a and b score highest (+0.30), then c (-0.20), below the leader's")
    assert "Below 0, more wrong answers than right ones: c (-0.20)" in said
    shown = T.display(table, name=str.upper)
    assert list(shown["system"]) == ["A", "B", "C"]
    assert shown["truthfulness (−1 to 1)"].iloc[0] == "0.300 [0.100–0.500]"


def test_the_squad_demo_scores_every_system_and_the_pages_show_it():
    found = RunView(PROJECT_ROOT / "data" / "demo_squad").truthfulness()
    assert found is not None
    table, classes, sources = found
    assert list(table["system"]) == ["llm_only", "bm25", "sim", "mmr", "reo", "mlq"]
    assert table["score"].between(-1, 1).all() and (table["lo"] <= table["hi"]).all()
    assert np.allclose(table[["correct", "missing", "incorrect"]].sum(axis=1), 1.0)
    # the demo's labels are stand-ins, not people's: the judge and the refusal rule decide
    assert sources.startswith("the judge (") and "the refusal rule (" in sources
    # correct here is the judge's 5, as on every page
    judged = RunView(PROJECT_ROOT / "data" / "demo_squad").judgments()
    fives = judged.assign(five=judged["score"] == 5).groupby("system")["five"].mean()
    assert np.allclose(table["correct"].to_numpy(float),
                       fives.reindex(table["system"]).to_numpy(float))
    from ragdash.html_report import build_report

    assert "Truthfulness: a wrong answer counts against a system (CRAG score)" in \
        build_report(PROJECT_ROOT / "data" / "demo_squad")


def test_the_compare_pages_board_carries_the_score_with_its_interval():
    from ragdash.analysis.signals import signal_label

    view = RunView(PROJECT_ROOT / "data" / "demo_squad")
    board = view.signal_board(1000, n_boot=200)
    means = board.means[board.means["signal"] == "truthfulness"].set_index("system")
    table = view.truthfulness()[0].set_index("system")
    assert np.allclose(means.loc[table.index, "mean"], table["score"])
    assert (means["lo"] <= means["mean"]).all() and (means["mean"] <= means["hi"]).all()
    assert signal_label("truthfulness", detail=True) == \
        "CRAG truthfulness (correct +1, declined 0, wrong −1)"
