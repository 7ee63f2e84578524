"""Issue 34 §3: the Overview page's model (`ragdash.view.overview`), built by pure functions over
a run's view and tested without Streamlit: the headline tiles, the prediction section (with a
degenerate fit), the note before calibration, and the facts. The page only lays it out
(tests/test_app_pages.py renders it once; tests/test_pages_agree.py checks it agrees with the
other pages)."""

from __future__ import annotations

import pytest
from fixtures.make_run import make_run

from ragdash.calibration import calibrate
from ragdash.rundir import Run
from ragdash.view import RunView
from ragdash.view.overview import ci_text, overview


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("ov") / "ov", n_questions=30, seed=1,
                    retrievers=("bm25", "sim"))


def test_the_headline_tiles_describe_the_run(made):
    page = overview(RunView(made), name=str.upper)
    assert page.title == "Run ov" and page.has_scores and page.order == ["bm25", "sim"]
    questions, corpus, retrievers, best = page.tiles
    assert (questions.label, questions.value) == ("Questions", "30")
    assert corpus.value.endswith(" docs") and corpus.delta.endswith(" chunks")
    assert (retrievers.value, retrievers.delta) == ("2", "BM25, SIM")  # names as the page says
    assert best.label in ("Best retriever over all budgets", "Largest area over all budgets")
    assert "BM25" in best.value or "SIM" in best.value
    assert list(page.table.columns) == ["bm25", "sim"] and len(page.table) == 10
    assert "largest area under its Score_IR curve" in page.curve_sentences
    assert dict(page.facts)["created"] and page.no_calibration is None


def test_the_prediction_section_matches_the_calibration(made):
    page = overview(RunView(made))
    cal = Run(made).calibration()
    p = page.prediction
    assert p is not None and f"N = {cal.budget}" in p.title and "substring" in p.title
    judged5, rule, logistic, avoided = p.tiles
    assert judged5.value == f"{cal.shares['actual']['pct']:.1f} %"
    assert judged5.caption == ci_text(cal.shares["actual"])
    est = cal.shares["estimates"]["h/k rule"]
    assert rule.value == f"{est['pct']:.1f} %"
    assert rule.delta == f"{est['pct'] - cal.shares['actual']['pct']:+.1f} pp vs judged 5"
    assert logistic.label == "Estimated by a logistic model"
    # 30 questions x (2 retrievers + LLM only) generations, and 30 judge calls
    assert avoided.delta == "120 LLM calls"
    assert avoided.label in ("LLM time avoided next time", "LLM cost avoided next time")
    assert p.basis.startswith("Every figure in this section rests on the ")
    assert p.note is not None and p.note[0] and p.note[1]


def test_a_degenerate_fit_gives_no_estimate_and_says_why(tmp_path):
    run = Run(make_run(tmp_path / "flat", n_questions=20, seed=2, retrievers=("bm25",)))
    judgments = run.read("judgments").assign(score=1)  # nothing judged correct
    run.write("judgments", judgments.astype({"score": "Int64"}))
    run.write_json("calibration", calibrate(run.read("ir_scores"), run.read("judgments"),
                                            budget=1000, n_boot=20).to_dict())
    p = overview(RunView(run.path)).prediction
    rule = next(t for t in p.tiles if t.label == "Estimated by the h/k rule")
    assert (rule.value, rule.delta) == ("no estimate", "degenerate fit")
    assert p.note[0] == "" and p.note[1].startswith("The h/k rule gives no estimate here: ")


def test_before_calibration_the_page_says_where_estimates_come_from(tmp_path):
    run = Run(make_run(tmp_path / "ir", n_questions=10, seed=3, llm=False))
    page = overview(RunView(run.path))
    assert page.prediction is None and page.all_failed is None
    assert "h = " in page.no_calibration and "k = " in page.no_calibration
    assert page.tiles[0].delta is None  # nothing judged: no "judged by the LLM" line


def test_facts_keep_the_dataset_file_name_only_and_unescaped(made, tmp_path):
    run = Run(made)
    cfg = run.manifest["config"]
    hostile = "/secret/dir/<img src=x>`y*.jsonl"
    run.update(config={**cfg, "dataset": {**cfg["dataset"], "path": hostile}})
    facts = dict(overview(RunView(made)).facts)
    assert facts["dataset"] == "<img src=x>`y*.jsonl"  # the page escapes it; no server path
    run.update(config=cfg)


def test_ci_text_says_when_there_is_no_interval():
    assert ci_text({"pct": 40.0, "ci": [35.0, 47.5]}) == "95 % CI 35.0–47.5 %"
    assert ci_text({"pct": 40.0, "ci": None}) == "no interval (too few questions)"
