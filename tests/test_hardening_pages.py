"""Runs the pages must survive: every judgment an error (the judge's replies could not be read),
only some judgments errors, and a retriever that found nothing for a question of stopwords only.
Analysis functions on that input, every dashboard page through AppTest, the HTML report and the
CLI's warnings."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl
from fixtures.make_run import fail_judgments, make_run
from streamlit.testing.v1 import AppTest

from ragdash.analysis import judging
from ragdash.analysis.threshold_panel import threshold_data
from ragdash.html_report import build_report, figures
from ragdash.rundir import Run
from ragdash.stages.retrieve import empty_message, empty_results

APP = str(Path(__file__).resolve().parent.parent / "app.py")
N_Q = 12
SYSTEMS = 6  # LLM only and five retrievers
ALL_FAILED = (f"All {N_Q * SYSTEMS} judgments failed (the judge's replies could not be read): "
              "no judge-based figure can be shown.")
PAGES = ("overview", "retrieval", "browser", "compare", "runs", "llm", "thresholds", "report")
SAYS_SO = ("overview", "browser", "llm", "thresholds", "report")  # the pages that use judgments


def judgments(scores: list[float | None], systems: list[str], errors: list[str | None],
              raws: list[str | None] | None = None) -> pd.DataFrame:
    """A judgments frame, one question per `systems` entry group."""
    n = len(scores)
    return pd.DataFrame({
        "qid": [f"q{i // len(set(systems))}" for i in range(n)], "system": systems,
        "budget": pd.array([None] * n, dtype="Int64"), "judge_model": "j",
        "score": pd.array(scores, dtype="Int64"), "raw": raws or [None] * n, "error": errors})


# --- analysis on all-error and some-error judgments ---------------------------------------------


def all_error_frame(n_q: int = 4) -> pd.DataFrame:
    systems = ["llm_only", "bm25", "sim"] * n_q
    return judgments([None] * len(systems), systems,
                     ["invalid judge reply after 3 attempts: found none"] * len(systems),
                     raws=["fine answer"] * len(systems))


def test_rag_gain_on_all_errors_counts_nothing_and_raises_nothing():
    gain = judging.rag_gain(all_error_frame())
    assert gain["system"].tolist() == ["bm25", "sim"]
    assert gain["n"].tolist() == [0, 0]
    assert gain["rag_correct"].isna().all() and gain["llm_only_correct"].isna().all()
    assert gain[["fixed", "broken"]].to_numpy().sum() == 0


def test_all_failed_says_how_many_and_why():
    assert judging.all_failed(all_error_frame()) == (
        "All 12 judgments failed (the judge's replies could not be read): no judge-based "
        "figure can be shown.")
    mixed = judgments([None] * 3, ["llm_only", "bm25", "sim"],
                      ["no answer", "timeout after 3 attempts", "timeout after 3 attempts"])
    assert judging.all_failed(mixed) == (
        "All 3 judgments failed (the judge calls failed for 2; there was no answer to judge "
        "for 1): no judge-based figure can be shown.")
    assert judging.all_failed(None) is None
    assert judging.all_failed(all_error_frame().iloc[:0]) is None  # no judgment is not a failure
    one_scored = all_error_frame()
    one_scored.loc[5, "score"] = 3
    assert judging.all_failed(one_scored) is None


def test_distributions_on_all_errors_count_every_error():
    j = all_error_frame()
    dist = judging.judge_distribution(j)
    assert (dist["n_valid"] == 0).all() and (dist["n_errors"] == 4).all()
    assert dist["count"].sum() == 0 and dist["share"].isna().all()
    t = judging.table_3_3(j)
    assert t["n"].tolist() == [0, 0, 0] and t["errors"].tolist() == [4, 4, 4]
    assert judging.llm_vs_rag(j, "bm25").to_numpy().sum() == 0
    assert len(judging.errors_table(None, j)) == 12
    ir = pd.DataFrame({"qid": [f"q{i}" for i in range(4) for _ in range(2)],
                       "retriever": ["bm25", "sim"] * 4, "budget": 100,
                       "score": np.linspace(0, 1, 8)})
    assert not threshold_data(ir, j, 100).has_judgments


def test_some_errors_are_left_out_of_the_counts():
    # q0: all scored; q1: sim failed; q2: llm_only failed; q3: all scored
    systems = ["llm_only", "bm25", "sim"] * 4
    scores = [5, 5, 1, 2, 5, None, None, 5, 5, 1, 1, 5]
    errors = [None if s is not None else "invalid judge reply" for s in scores]
    j = judgments(scores, systems, errors)
    gain = judging.rag_gain(j).set_index("system")
    assert gain.loc["bm25", "n"] == 3 and gain.loc["sim", "n"] == 2
    assert gain.loc["bm25", "rag_correct"] == pytest.approx(2 / 3)
    assert gain.loc["bm25", "fixed"] == 1 and gain.loc["bm25", "broken"] == 0  # q1 fixed
    assert gain.loc["sim", "rag_correct"] == pytest.approx(1 / 2)
    t = judging.table_3_3(j)
    assert t.loc["sim", "n"] == 3 and t.loc["sim", "errors"] == 1
    assert t.loc["llm_only", "n"] == 3 and t.loc["llm_only", "errors"] == 1
    assert judging.all_failed(j) is None
    sim_failed = judgments([5, 4, None] * 2, systems[:6], [None, None, "bad"] * 2)
    gain = judging.rag_gain(sim_failed).set_index("system")  # one system never judged
    assert gain.loc["sim", "n"] == 0 and np.isnan(gain.loc["sim", "rag_correct"])
    assert gain.loc["bm25", "n"] == 2


# --- the runs -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """all-failed (the demo, selected first), partly-failed (sim's judgments all errors, plus
    the fixture's few LLM errors) and ok, under one runs root."""
    root = tmp_path_factory.mktemp("hardening")
    failed = fail_judgments(make_run(root / "runs" / "all-failed", n_questions=N_Q, seed=5))
    partly = fail_judgments(make_run(root / "runs" / "partly-failed", n_questions=N_Q, seed=6),
                            systems=("sim",))
    make_run(root / "runs" / "ok", n_questions=N_Q, seed=7)
    old = {k: os.environ.get(k) for k in ("RAGDASH_DEMO_RUN", "RAGDASH_RUNS_ROOT")}
    os.environ["RAGDASH_DEMO_RUN"] = str(failed)
    os.environ["RAGDASH_RUNS_ROOT"] = str(root / "runs")
    yield {"failed": failed, "partly": partly, "root": root}
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success",
                                  "title", "subheader") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def visit(at: AppTest, page: str, **params) -> AppTest:
    at.switch_page(f"app_pages/{page}.py")
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    return at


def test_the_fixture_is_a_run_whose_every_judgment_failed(runs):
    run = Run(runs["failed"])
    j = run.read("judgments")
    assert len(j) == N_Q * SYSTEMS and j["score"].isna().all() and j["error"].notna().all()
    assert run.calibration() is None and run.stage("calibrate")["status"] == "failed"


def test_every_page_renders_a_run_whose_judgments_all_failed(runs):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Run all\\-failed"  # the run name escaped: shown literally
    for page in PAGES:
        params = {"rn_runs": [str(runs["failed"]), str(runs["partly"])]} if page == "runs" \
            else {}
        if page != "overview":
            visit(at, page, **params)
        shown = texts(at)
        if page in SAYS_SO:
            boxes = [e.value for e in at.error]
            assert any(b.startswith(ALL_FAILED) for b in boxes), (page, boxes)
        assert "no LLM answers and judgments" not in shown, page  # it has them: they failed
        if page == "llm":
            assert "See the errors below." in at.error[0].value
            assert "Errors (kept apart)" in shown
            assert "Table 3.3" not in shown and "What retrieval adds" not in shown


def test_every_page_renders_a_run_where_some_judgments_failed(runs):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    box = at.selectbox(key="run")
    box.select(next(o for o in box.options if o.endswith("partly-failed"))).run()
    for page in PAGES:
        if page != "overview":  # the LLM page with SIM picked: never judged both ways
            visit(at, page, **({"llm_sys": "sim"} if page == "llm" else {}))
        assert not [e for e in at.error if "judgments failed" in e.value], page
        if page == "llm":
            assert "of 0 questions judged both ways" in texts(at)
            table = next(d.value for d in at.dataframe
                         if "judged" in getattr(d.value, "columns", []))
            assert table.loc["SIM", "judged"] == 0 and table.loc["SIM", "errors"] == N_Q
            assert table.loc["BM25", "judged"] > 0
    sim = judging.rag_gain(Run(runs["partly"]).read("judgments")).set_index("system")
    assert sim.loc["sim", "n"] == 0


# --- the HTML report ----------------------------------------------------------------------------


def test_html_report_of_a_run_whose_judgments_all_failed(runs):
    page = build_report(runs["failed"])
    assert ALL_FAILED.replace("'", "&#x27;") in page
    assert "See the errors below." in page
    assert "invalid judge reply after 3 attempts" in page  # the errors are listed
    assert "**bold**" not in page and "evil.example" not in page  # raw replies not shown
    assert not {"judge_scores", "rag_vs_llm_only"} & set(figures(runs["failed"]))
    assert "judgments failed" not in build_report(runs["partly"])
    assert {"judge_scores", "rag_vs_llm_only"} <= set(figures(runs["partly"]))


# --- a question BM25 finds nothing for ----------------------------------------------------------


def stopword_dataset(tmp_path: Path, with_who: bool = True) -> tuple[Path, Path]:
    rows = [{"id": q, "question": t, "answer": a, "relevant_parts": p}
            for q, t, a, p in QUESTIONS]
    if with_who:
        rows.append({"id": "q5", "question": "Who?", "answer": "Alan Turing",
                     "relevant_parts": ["Alan Turing was an English mathematician and "
                                        "computer scientist."]})
    ds = write_jsonl(tmp_path / ("qa.jsonl" if with_who else "qa4.jsonl"), rows)
    corpus = write_jsonl(tmp_path / "corpus.jsonl",
                         [{"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return ds, corpus


def test_empty_results_per_retriever_and_its_message():
    examples = pd.DataFrame({"qid": ["a", "b", "c", "d"],
                             "question": ["x y", "Who?", "**bold** [l](http://e)", "`z` y"]})
    retrieved = pd.DataFrame({"qid": ["a", "c", "d", "a", "b", "c", "d"],
                              "retriever": ["bm25"] * 3 + ["sim"] * 4})
    warnings = empty_results(retrieved, examples, ["bm25", "sim", "mmr"])
    assert [w["retriever"] for w in warnings] == ["bm25", "mmr"]  # sim found every one
    bm25, mmr = warnings
    assert (bm25["questions"], bm25["of"]) == (1, 4)
    assert bm25["examples"] == [{"qid": "b", "question": "Who?"}]
    assert empty_message(bm25) == ("bm25 retrieved nothing for 1 of 4 questions (e.g. b "
                                   "'Who?'): questions of stopwords only or with no word in "
                                   "the corpus score 0")
    assert mmr["questions"] == 4 and len(mmr["examples"]) == 3  # a few named, all counted
    assert "mmr retrieved nothing for 4 of 4 questions" in empty_message(mmr)


def test_a_stopword_question_is_warned_about_in_the_cli_run_json_and_overview(
        tmp_path, capsys, monkeypatch):
    from ragdash.cli import main

    ds, corpus = stopword_dataset(tmp_path)
    run_dir = tmp_path / "run"
    args = ["run", "--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "bm25",
            "--chunker", "recursive", "--budgets", "10:60:10", "--run-dir", str(run_dir), "-q"]
    assert main(args) == 0
    out = capsys.readouterr()
    expected = ("bm25 retrieved nothing for 1 of 5 questions (e.g. q5 'Who?'): questions of "
                "stopwords only or with no word in the corpus score 0")
    assert f"warning: stage retrieve: {expected}" in out.err
    stage = json.loads((run_dir / "run.json").read_text())["stages"]["retrieve"]
    assert stage["warnings"] == [{
        "retriever": "bm25", "questions": 1, "of": 5,
        "examples": [{"qid": "q5", "question": "Who?"}],
        "cause": "questions of stopwords only or with no word in the corpus",
        "message": expected}]
    ir = Run(run_dir).read("ir_scores")
    assert (ir.loc[ir["qid"] == "q5", "score"] == 0).all()  # scored 0, as it should be

    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run_dir))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "none"))
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    box = next(w.value for w in at.warning if "retrieved nothing" in w.value)
    assert re.search(r"- bm25 retrieved nothing for 1 of 5 questions \(e\.g\. `q5` `Who\?`\): "
                     r"questions of stopwords only or with no word in the corpus score 0", box)

    ds4, _ = stopword_dataset(tmp_path, with_who=False)  # retrieval redone: the warning goes
    assert main([*args[:2], str(ds4), *args[3:]]) == 0
    assert "retrieved nothing" not in capsys.readouterr().err
    assert Run(run_dir).stage("retrieve")["warnings"] == []


def test_overview_quotes_question_text_as_code(tmp_path):
    """A retrieve stage's warning reaches the Overview's model as recorded, and the page's
    words for it quote the question as code (`widgets.code`, as the stopword test above sees
    the page do): shown literally, never read as Markdown, a backtick in it too."""
    from ragdash.ui import widgets
    from ragdash.view import RunView
    from ragdash.view.overview import overview

    run = Run(make_run(tmp_path / "r", n_questions=4, seed=1, llm=False,
                       retrievers=("bm25",), budgets=(100,)))
    hostile = {"retriever": "bm25", "questions": 1, "of": 4, "cause": "c",
               "examples": [{"qid": "q`1", "question": "**bold** [x](http://evil.example)"}]}
    run.set_stage("retrieve", warnings=[{**hostile, "message": empty_message(hostile)}])
    (warning,) = overview(RunView(run.path)).empty_retrievals
    assert "``q`1`` `**bold** [x](http://evil.example)`" in empty_message(warning,
                                                                          quote=widgets.code)
