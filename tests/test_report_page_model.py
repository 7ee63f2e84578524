"""Issue 34 §3: the Report page's model (`ragdash.view.report`), tested without Streamlit: the
tables offered for download with and without judgments (rows counted against the run's files),
and a run id made safe as a file name."""

from __future__ import annotations

import pytest
from fixtures.make_run import make_run

from ragdash.rundir import Run
from ragdash.view import RunView
from ragdash.view.report import file_stem, tables


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rep")
    return (make_run(root / "judged", n_questions=12, seed=4, retrievers=("bm25", "sim")),
            make_run(root / "bare", n_questions=12, seed=5, retrievers=("bm25", "sim"),
                     llm=False))


def test_a_judged_run_offers_every_table(runs):
    judged = runs[0]
    run = Run(judged)
    n = RunView(judged).budgets[1]
    out = tables(RunView(judged), n)
    assert list(out)[:5] == [f"questions_at_N{n}", "scores_all_budgets", "table_3_1",
                             "table_3_3", "llm_errors"]
    wide = out[f"questions_at_N{n}"].frame
    assert len(wide) == 12 and {"ir:bm25", "ir:sim"} <= set(wide.columns)
    assert any(c.startswith("judge:") for c in wide.columns)
    assert len(out["scores_all_budgets"].frame) == len(run.table("ir_scores"))
    assert len(out["table_3_1"].frame) == len(RunView(judged).budgets)
    assert out[f"questions_at_N{n}"].about.endswith("judge scores (`judge:`).")


def test_a_run_without_judgments_offers_the_retrieval_tables(runs):
    out = tables(RunView(runs[1]), RunView(runs[1]).budgets[0])
    assert [k for k in out if not k.startswith("questions_at_N")] == ["scores_all_budgets",
                                                                      "table_3_1"]
    assert all(t.about.endswith(".") and "judge" not in t.about for t in out.values())


def test_a_run_id_becomes_a_safe_file_name():
    assert file_stem("exp-1_v2.final") == "exp-1_v2.final"
    assert file_stem('../a b/"c"<d>') == ".._a_b__c__d_"
