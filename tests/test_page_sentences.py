"""Every sentence a page or the report says about a figure is written from the figure's numbers.
Synthetic runs whose truth is known by construction: judgments set from Score_IR so that the
h/k rule over- or underestimates correct answers or matches the judge, a confusion matrix with
errors on one side only, retrievers that tie on every question or differ on one, a run judged on
5 of its 12 questions. The Overview, Thresholds and Compare runs pages (streamlit's AppTest) and
the HTML report must say what those numbers are."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from streamlit.testing.v1 import AppTest

from ragdash.analysis import compare, sentences, threshold_panel
from ragdash.calibration import calibrate, pairs
from ragdash.constants import CLASSES
from ragdash.html_report import build_report
from ragdash.rundir import Run
from ragdash.viz import calibration as viz

T = 0.5  # judgments are set on either side of Score_IR = T at BUDGET; pages are set to h = k = T
BUDGET = 1000


def _over(ir: np.ndarray) -> np.ndarray:
    """Above T: two answers in three correct, the third judged 3; below T: 1 (so at k = T the
    rule overestimates, and every error is an optimistic one)."""
    third = np.arange(len(ir)) % 3 == 0
    return np.where(ir > T, np.where(third, 3, 5), np.where(ir < T, 1, 3))


def _under(ir: np.ndarray) -> np.ndarray:
    """Above T: correct; the 12 answers with the least retrieved correct anyway (no k counts
    them without counting every other answer below T), the others below T 1: the rule
    underestimates, every error at k = T a pessimistic one."""
    judge = np.where(ir > T, 5, np.where(ir < T, 1, 3))
    judge[np.argsort(ir, kind="stable")[:12]] = 5
    return judge


def _matches(ir: np.ndarray) -> np.ndarray:
    """As many answers above T judged 3 as below T judged 5: the shares are equal at k = T."""
    judge = np.where(ir > T, 5, np.where(ir < T, 1, 3))
    judge[np.flatnonzero(ir > T)[:3]] = 3
    judge[np.flatnonzero(ir < T)[:3]] = 5
    return judge


def rejudge(path: Path, rule, keep: int | None = None) -> Path:
    """Set every RAG judgment from its Score_IR at BUDGET by `rule` (no judge error left), keep
    the answers and judgments of the first `keep` questions only, and calibrate again."""
    run = Run(path)
    ir = run.read("ir_scores")
    j, answers = run.read("judgments"), run.read("answers")
    if keep is not None:
        qids = sorted(j["qid"].unique())[:keep]
        j, answers = j[j["qid"].isin(qids)], answers[answers["qid"].isin(qids)]
        run.write("answers", answers.reset_index(drop=True))
    j = j.reset_index(drop=True)
    at = ir[ir["budget"] == BUDGET].set_index(["qid", "retriever"])["score"]
    rag = (j["system"] != "llm_only").to_numpy()
    x = at.reindex(pd.MultiIndex.from_arrays([j["qid"][rag], j["system"][rag]])).to_numpy(float)
    score = j["score"].astype("Float64").fillna(4).to_numpy(float)
    score[rag] = rule(x)
    j = j.assign(score=pd.array(score.astype(int), dtype="Int64"), error=None, rule=None,
                 raw=[str(int(s)) for s in score])
    run.write("judgments", j)
    run.write_json("calibration", calibrate(ir, j, budget=BUDGET, n_boot=50).to_dict())
    return path


def tie_scores(path: Path, differ: int) -> Path:
    """SIM scores exactly as BM25 except on the first `differ` questions (0.25 lower there); the
    other retrievers far below, so BM25 leads and SIM is the runner-up."""
    run = Run(path)
    ir = run.read("ir_scores")
    bm = ir[ir["retriever"] == "bm25"].set_index(["qid", "budget"])["score"]
    sim = ir["retriever"] == "sim"
    ir.loc[sim, "score"] = bm.reindex(pd.MultiIndex.from_frame(ir.loc[sim, ["qid", "budget"]])
                                      ).to_numpy()
    first = sorted(ir["qid"].unique())[:differ]
    lower = sim & ir["qid"].isin(first)
    ir.loc[lower, "score"] = (ir.loc[lower, "score"] - 0.25).clip(lower=0)
    rest = ~ir["retriever"].isin(["bm25", "sim"])
    ir.loc[rest, "score"] *= 0.2
    run.write("ir_scores", ir)
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("sentences")
    out = {"over": rejudge(make_run(root / "demo-over", n_questions=30, seed=3), _over)}
    made = root / "runs"
    out["under"] = rejudge(make_run(made / "under", n_questions=30, seed=3), _under)
    out["matches"] = rejudge(make_run(made / "matches", n_questions=30, seed=3), _matches)
    out["partly"] = rejudge(make_run(made / "partly", n_questions=12, seed=4), _over, keep=5)
    out["ties"] = tie_scores(make_run(made / "ties", n_questions=12, seed=5, llm=False), 0)
    out["one"] = tie_scores(make_run(made / "one-differs", n_questions=12, seed=6, llm=False), 1)
    old = {k: os.environ.get(k) for k in ("RAGDASH_DEMO_RUN", "RAGDASH_RUNS_ROOT")}
    os.environ["RAGDASH_DEMO_RUN"] = str(out["over"])
    os.environ["RAGDASH_RUNS_ROOT"] = str(made)
    yield out
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def key(path: Path) -> str:
    return str(Path(path).resolve())


def page(run: Path, name: str | None = None, **params) -> AppTest:
    """The app on `run`, on page `name` (the Overview by default) with URL parameters."""
    return open_app(name, run=key(run), timeout=90, **params)


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "html", "subheader")
                     for e in getattr(at, kind))


def truth(path: Path, k: float) -> dict:
    """Estimated (Score_IR > k) and judged (5) shares of correct answers in %, computed here
    from the run's tables, and the number of judged answers and questions."""
    run = Run(path)
    p, _ = pairs(run.read("ir_scores"), run.read("judgments"), BUDGET)
    est, act = 100 * (p["ir"] > k).mean(), 100 * (p["judge"] == 5).mean()
    return {"est": est, "act": act, "diff": est - act, "n": len(p),
            "questions": p["qid"].nunique()}


def bias_of(text: str) -> str:
    return next(line for line in re.split(r"(?<=\n)", text) if "The h/k rule " in line)


# --- the sentences themselves --------------------------------------------------------------------


def test_rule_bias_says_the_direction_of_its_numbers():
    base = {"budget": 500, "k": 0.259, "n": 300, "questions": 60, "level": 0.95, "over": 71,
            "under": 19}
    over = sentences.rule_bias({**base, "est_pct": 71.3, "act_pct": 54.0, "diff_pp": 17.3,
                                "ci": [7.7, 26.7]})
    assert over.startswith("The h/k rule overestimates correct answers by 17.3 points: "
                           "71.3 % estimated vs 54.0 % judged 5")
    assert "300 judged answers from 60 questions" in over and "underestimates" not in over
    under = sentences.rule_bias({**base, "est_pct": 40.0, "act_pct": 52.5, "diff_pp": -12.5,
                                 "ci": [-20.0, -5.0]})
    assert under.startswith("The h/k rule underestimates correct answers by 12.5 points")
    same = sentences.rule_bias({**base, "est_pct": 55.0, "act_pct": 54.0, "diff_pp": 1.0,
                                "ci": [-3.0, 5.0]})
    assert same.startswith("The h/k rule matches the judge within the 95 % CI (difference "
                           "+1.0 points)")
    wide = sentences.rule_bias({**base, "est_pct": 60.0, "act_pct": 48.0, "diff_pp": 12.0,
                                "ci": [-4.0, 32.0]})
    assert wide.startswith("The h/k rule is within noise of the judge, but the interval is too "
                           "wide to tell (difference +12.0 points")
    assert "matches" not in wide and "estimates" not in wide.split(":")[0]
    assert sentences.rule_bias({**base, "n": 0, "questions": 0, "est_pct": np.nan,
                                "act_pct": np.nan, "diff_pp": np.nan, "ci": None}
                               ).startswith("No judged answer")


def test_judged_basis_names_the_questions_left_out():
    assert sentences.judged_basis(300, 60) == "300 judged answers from 60 questions"
    assert sentences.judged_basis(300, 60, 60) == "300 judged answers from 60 questions"
    assert sentences.judged_basis(15, 5, 12) == \
        "15 judged answers from 5 of the 12 questions (7 not judged)"
    assert sentences.judged_basis(1, 1) == "1 judged answer from 1 question"


def test_confusion_reading_names_each_cell_on_the_side_it_is_drawn():
    conf = pd.DataFrame([[7, 4, 0], [14, 42, 19], [32, 39, 143]], index=list(CLASSES),
                        columns=list(CLASSES))
    lines = sentences.confusion_reading(conf, 0.05, 0.259, 500)
    assert lines[0] == ("The rule errs mostly on the optimistic side: 85 answers below the "
                        "diagonal against 23 above.")
    below = next(s for s in lines if s.startswith("Below the diagonal"))
    assert "optimistic" in below and "pessimistic" not in below
    assert "32 estimated correct but judged 1" in below
    assert "39 estimated correct but judged 2–4" in below
    assert "14 estimated at risk (2–4) but judged 1" in below
    above = next(s for s in lines if s.startswith("Above the diagonal"))
    assert "pessimistic" in above and "19 estimated at risk (2–4) but judged 5" in above
    assert "On the diagonal the rule is right: 192 answers (64 %)." in lines
    # the figure draws the first row on top: a row after the column is below the diagonal
    fig = viz.confusion(conf)
    assert fig.layout.yaxis.autorange == "reversed" and list(fig.data[0].z[2]) == [32, 39, 143]
    with pytest.raises(ValueError, match="rows and columns must be"):
        sentences.confusion_reading(conf.iloc[::-1], 0.05, 0.259, 500)


def test_paired_test_phrase_agrees_with_the_counts():
    assert sentences.paired_test_phrase(
        {"pvalue": None, "n": 12, "win": 0, "loss": 0, "tie": 12}) == "no test: all 12 " \
        "questions tie"
    one = sentences.paired_test_phrase({"pvalue": None, "n": 12, "win": 1, "loss": 0,
                                        "tie": 11})
    assert one == ("no test: only 1 of the 12 questions differs, too few for a Wilcoxon "
                   "signed-rank test (it needs 2)")
    assert sentences.paired_test_phrase({"pvalue": 0.0123, "n": 12}) == "Wilcoxon p = 0.012"


def test_a_p_value_is_two_digits_or_a_dash_without_a_test():
    assert [sentences.p_text(p) for p in (0.0123, 2.7e-07, None, np.nan)] == [
        "0.012", "2.7e-07", "—", "—"]


def test_a_difference_within_the_tie_tolerance_is_a_tie_for_the_test_too():
    d = np.array([0.0, 5e-10, 0.3, 0.0])
    assert compare.counts(d)["tie"] == 3
    assert compare.wilcoxon_test(d)["n_nonzero"] == 1 and compare.wilcoxon_test(d)["pvalue"] \
        is None


def test_judged_only_cuts_the_chart_to_the_judged_answers(runs):
    run = Run(runs["partly"])
    full = threshold_panel.threshold_data(run.read("ir_scores"), run.read("judgments"), BUDGET)
    assert all(len(v) == 12 for v in full.sorted_ir.values())
    cut = threshold_panel.judged_only(full)
    assert all(len(v) == 5 for v in cut.sorted_ir.values())
    fig = viz.threshold_curves(cut, threshold_panel.panel(cut, T, T)["estimated"], T, T)
    titles = [a.text for a in fig.layout.annotations if a.text and "answers" in a.text]
    assert titles == [f"{r} · 5 answers" for r in ("BM25", "SIM", "MMR", "REO", "MLQ")]
    none = threshold_panel.threshold_data(run.read("ir_scores"), None, BUDGET)
    assert threshold_panel.judged_only(none) is none


# --- the pages' models and the report ----------------------------------------------------------


def view(path: Path):
    """The run's view as the pages read it (`ragdash.ui.state.view`: the one render below and
    the models share what they compute)."""
    from ragdash.ui import state

    return state.view(Run(path))


def panel(path: Path):
    """The Thresholds panel's model at N = BUDGET, h = k = T."""
    from ragdash.view.thresholds import panel as thresholds_panel
    from ragdash.viz.colors import label

    return thresholds_panel(view(path), BUDGET, T, T, name=label)


def overview(path: Path):
    from ragdash.view.overview import overview as overview_model
    from ragdash.viz.colors import label

    return overview_model(view(path), name=label)


def joined(pair: tuple[str, str]) -> str:
    """A (lead-in, the rest) sentence as one line, the lead-in's bold marks left out."""
    return ": ".join(x for x in pair if x)


def test_thresholds_page_lays_out_its_sentences(runs):
    """The Thresholds page at N = BUDGET, h = k = T shows its model's basis, bias sentence,
    table and reading of the confusion matrix (what they say: the tests below)."""
    at = page(runs["over"], "thresholds", thr_n=str(BUDGET), thr_h=str(T), thr_k=str(T))
    p = panel(runs["over"])
    shown = texts(at)
    head, rest = p.bias
    assert f"**{head}:** {rest}" in shown and p.basis in shown
    assert all(line in shown for line in p.confusion)
    assert at.dataframe[0].value["answers"].tolist() == p.table["answers"].tolist()


@pytest.mark.parametrize(("name", "word"), [("over", "overestimates"),
                                            ("under", "underestimates"),
                                            ("matches", "matches the judge")])
def test_thresholds_model_says_what_its_table_shows(runs, name, word):
    p = panel(runs[name])
    t = truth(runs[name], T)
    assert (t["diff"] > 0, t["diff"] < 0, t["diff"] == 0)[("over", "under", "matches")
                                                          .index(name)]  # the fixture
    said = joined(p.bias)
    assert word in said, said
    assert (f"{t['est']:.1f} % estimated vs {t['act']:.1f} % judged 5" in said)
    if name != "matches":
        assert f"by {abs(t['diff']):.1f} points" in said
    assert f"{t['n']} judged answers from {t['questions']} questions" in said
    assert p.table["answers"].sum() == t["n"]
    assert [w for w in ("overestimates", "underestimates", "matches the judge")
            if w in said] == [word]


@pytest.mark.parametrize(("name", "side", "never"), [("over", "optimistic", "pessimistic"),
                                                     ("under", "pessimistic", "optimistic")])
def test_a_one_sided_confusion_matrix_is_read_from_its_cells(runs, name, side, never):
    run = Run(runs[name])
    p, _ = pairs(run.read("ir_scores"), run.read("judgments"), BUDGET)
    x, judge = p["ir"].to_numpy(), p["judge"].to_numpy()
    shown = "\n".join(panel(runs[name]).confusion)
    assert f"The rule errs mostly on the {side} side" in shown
    if name == "over":  # above T judged 3: estimated correct but judged 2–4, below the diagonal
        n = int(((x > T) & (judge == 3)).sum())
        assert f"{n} estimated correct but judged 2–4" in shown
        assert "Above the diagonal: no answer; the rule is never pessimistic here." in shown
    else:  # under T judged 5: estimated lacking information but judged 5, above the diagonal
        n = int(((x < T) & (judge == 5)).sum())
        assert f"{n} estimated lacking information but judged 5" in shown
        assert "Below the diagonal: no answer; the rule is never optimistic here." in shown
    assert f"the rule is {never} (" not in shown


def test_overview_and_report_say_the_rules_bias_at_the_fit(runs):
    for name, word in (("over", "overestimates"), ("under", "underestimates")):
        cal = Run(runs[name]).calibration()
        t = truth(runs[name], cal.k)
        assert (t["diff"] > 0) == (name == "over")
        expected = f"The h/k rule {word} correct answers by {abs(t['diff']):.1f} points"
        ov = overview(runs[name])
        assert expected in joined(ov.prediction.note)
        assert f"{t['est']:.1f} %" == next(m.value for m in ov.prediction.tiles
                                           if m.label.startswith("Estimated by the h/k rule"))
        report = build_report(runs[name])
        assert expected in report and f"k = {cal.k:.3f} at N = {BUDGET}" in report
        assert "Reading the confusion matrix" in report


def test_partly_judged_run_says_how_few_answers_the_llm_figures_rest_on(runs):
    basis = "25 judged answers from 5 of the 12 questions (7 not judged)"
    ov = overview(runs["partly"])
    q = next(m for m in ov.tiles if m.label == "Questions")
    assert q.value == "12" and "5 judged by the LLM" in str(q.delta)
    assert ov.prediction.basis == f"Every figure in this section rests on the {basis}."
    assert basis in joined(ov.prediction.note)

    p = panel(runs["partly"])
    assert p.basis == f"Every figure below counts the same answers: the {basis}."
    assert p.table["answers"].tolist() == [5] * 5  # the table and the chart: 5 per retriever

    report = build_report(runs["partly"])
    assert f"estimated (h/k rule) vs judged 5 (RAG answers), on {basis}" in report
    assert f"Every figure of this section counts the same answers: the {basis}." in report


def verdict_box(path: Path) -> str:
    """The Compare runs page's verdict at N = 200 on the run alone, as its box shows it
    (headline, then detail; escaped)."""
    from ragdash.ui import state

    _, verdict, _ = state.runs_view({key(path): Run(path)}).board(200)
    return f"<div>{html.escape(verdict['headline'])}</div><div>" \
           f"{html.escape(verdict['detail'])}</div>"


@pytest.mark.parametrize(("name", "differ"), [("ties", 0), ("one", 1)])
def test_compare_runs_verdict_agrees_with_its_counts(runs, name, differ):
    box = verdict_box(runs[name])
    if differ == 0:
        assert "tie at N = 200" in box
        assert "No lead: both score the same on every one of the 12 questions (no test)." in box
    else:
        assert "leads at N = 200" in box and "tie" not in box.split("</div>")[0]
        assert "higher on 1, lower on 0 and tied on 11 of 12 questions" in box
        assert ("no test: only 1 of the 12 questions differs, too few for a Wilcoxon "
                "signed-rank test (it needs 2)") in box
        assert "every" not in box.lower()


def test_compare_runs_page_lays_out_its_verdict(runs):
    at = page(runs["one"], "runs", rn_runs=[key(runs["one"])], rn_n="200")
    box = next(h.value for h in at.html if "Score_IR" in h.value)
    head, detail = verdict_box(runs["one"]).removeprefix("<div>").removesuffix(
        "</div>").split("</div><div>")
    assert head in box and detail in box


def test_compare_retrievers_says_why_no_test_was_run(runs):
    from ragdash.view.compare_retrievers import pair

    verdict = pair(view(runs["one"]), "bm25", "sim", 200).verdict
    assert "At N = 200, no test: only 1 of the 12 questions differs" in verdict, verdict
