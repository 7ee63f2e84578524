"""Issue 35 §2: the controlled contexts on the LLM results page and in the report
(`ragdash.view.stress`): the sentences read the numbers (accuracy falling with noise, the
rejection rate and its verdict, position), the observed curve comes from the run's own answers,
and the page and the report draw the section with no exception."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from fixtures.make_run import make_run
from fixtures.stress import stress_table

from ragdash.html_report import build_report, figures
from ragdash.rundir import Run
from ragdash.stress.summary import summary
from ragdash.view import RunView
from ragdash.view.stress import noise_sentence, position_sentence, rejection_sentence, stress


def test_the_sentences_read_the_numbers():
    s = summary(stress_table([f"q{i}" for i in range(20)]))
    assert noise_sentence(s).startswith("Accuracy falls from 100% (95 % CI 84%–100%) with 0% "
                                        "noise to 25%")
    assert rejection_sentence(s).startswith("With no evidence in its context the generator "
                                            "refused 80% of 20 questions")
    assert rejection_sentence(s).endswith("it mostly declines, as it should.")
    assert position_sentence(s) == ("Evidence placed first is used best (100%), placed middle "
                                    "worst (35%).")
    flat = summary(stress_table(["q0", "q1"]).assign(correct=True))
    assert "no clear difference" in position_sentence(flat)


@pytest.fixture(scope="module")
def stressed(tmp_path_factory):
    path = make_run(tmp_path_factory.mktemp("st") / "st", n_questions=20, seed=6,
                    retrievers=("bm25", "sim"))
    run = Run(path)
    run.write("stress", stress_table(run.read("examples")["qid"].astype(str).tolist()))
    return path


def test_the_view_puts_the_run_beside_the_controlled_contexts(stressed):
    page = stress(RunView(stressed))
    assert page.questions == 20 and page.contexts == 20 * 7 and page.position_ratio == 0.8
    assert page.observed is not None and page.observed["n"].sum() > 0  # the run's answers
    assert len(page.sentences) == 3
    assert page.budget == 1000  # the budget the stage cut the contexts at
    cal = Run(stressed).calibration()  # h and k are marked when fitted at that budget only
    assert (page.h, page.k) == ((cal.h, cal.k) if cal.budget == 1000 else (None, None))


def test_the_observed_curve_bins_the_runs_answers_by_score_ir():
    from ragdash.stress.summary import observed_curve

    ir = pd.DataFrame({"qid": ["a", "b", "c", "d"], "retriever": ["bm25"] * 4,
                       "score": [0.05, 0.1, 0.95, 1.0]})
    ref = pd.DataFrame({"qid": ["a", "b", "c", "d", "a"],
                        "system": ["bm25"] * 4 + ["llm_only"],
                        "contains": [False, True, True, True, True]})
    curve = observed_curve(ir, ref).set_index("mid")
    assert list(curve.index) == [pytest.approx(0.1), pytest.approx(0.9)]
    assert curve["n"].tolist() == [2, 2] and curve["accuracy"].tolist() == [0.5, 1.0]


def test_the_report_draws_the_section(stressed):
    figs = figures(stressed)
    assert {"stress_noise", "stress_position", "stress_dose_response"} <= set(figs)
    report = build_report(stressed)
    assert "Does the evidence cause good answers? (controlled contexts)" in report
    assert "it mostly declines, as it should." in report


def test_a_run_without_the_stage_has_no_section(tmp_path, stressed):
    bare = tmp_path / "bare"
    shutil.copytree(stressed, bare)
    (bare / "stress.parquet").unlink()
    assert stress(RunView(bare)) is None
    assert "controlled contexts" not in build_report(bare)


def test_evidence_cut_off_by_the_budget_is_said_to_be():
    table = stress_table([f"q{i}" for i in range(10)])
    middle = (table["test"] == "position") & (table["position"] == "middle")
    s = summary(table.assign(score_ir=table["score_ir"].where(~middle, 0.2)))
    said = position_sentence(s)
    assert said.startswith("Evidence placed first is used best (100%), placed middle worst")
    assert "past the budget N (mean Score_IR 0.20 against 1.00)" in said
