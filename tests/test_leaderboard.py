"""Several runs side by side: the leaderboard's maths (bootstrap intervals, the area under the
Score_IR curve, paired statistics against scipy), the refusal to compare runs of different
datasets, and the dashboard's Runs page (AppTest) on synthetic runs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.tables import clipped_headers
from scipy import stats
from streamlit.testing.v1 import AppTest

from ragdash.analysis import compare, curves, frames
from ragdash.analysis.area import curve_area
from ragdash.rundir import Run
from ragdash.view import leaderboard as lb

SHA = "ab" * 32


def _source(path, sha=SHA, name="qa.jsonl"):
    Run(path).update(source={"dataset": f"data/{name}", "format": "jsonl", "corpus": None,
                             "sha256": sha, "corpus_sha256": None, "records": 12})
    return Run(path)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Three synthetic runs on one dataset (one with fewer questions, one with no LLM files)
    and one on another dataset."""
    root = tmp_path_factory.mktemp("lb")
    runs = root / "runs"
    # one seed: the same questions and relevant parts; the retrievers' draws differ with
    # their order
    make_run(runs / "alpha", n_questions=12, seed=1, retrievers=("bm25", "sim"),
             budgets=(100, 200, 400))
    make_run(runs / "beta", n_questions=12, seed=1, llm=False, retrievers=("sim", "bm25"),
             budgets=(100, 200, 400))
    make_run(runs / "short", n_questions=9, seed=1, llm=False, retrievers=("bm25",),
             budgets=(100, 400, 800))
    make_run(runs / "other", n_questions=12, seed=4, llm=False, retrievers=("bm25",),
             budgets=(100, 200, 400))
    for name in ("alpha", "beta", "short"):
        _source(runs / name)
    _source(runs / "other", sha="cd" * 32, name="another.jsonl")
    return root


def runs_of(root, *names):
    return {n: Run(root / "runs" / n) for n in names}


# --- the maths --------------------------------------------------------------------------------


def test_curve_auc_is_the_mean_height_over_the_budget_range():
    budgets, means = [100, 200, 400, 1000], [0.2, 0.5, 0.6, 0.9]
    expected = np.trapezoid(means, budgets) / (1000 - 100)
    assert curve_area(budgets, means) == pytest.approx(expected)
    assert curve_area(budgets[::-1], means[::-1]) == pytest.approx(expected)  # any order
    assert curve_area([100, 500, 1000], [0.7] * 3) == pytest.approx(0.7)  # flat curve
    assert curve_area([1000], [0.4]) == pytest.approx(0.4)  # one budget: its value
    assert np.isnan(curve_area([], []))
    # a curve that rises early beats one that rises late with the same end points
    assert curve_area([100, 200, 1000], [0.1, 0.8, 0.9]) > \
        curve_area([100, 900, 1000], [0.1, 0.2, 0.9])


def test_mean_ci_is_about_the_t_interval_for_a_large_sample_and_never_zero_width():
    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 0.2, 300).clip(-1, 1)
    lo, hi = compare.mean_ci(d)
    ref = stats.t.interval(0.95, len(d) - 1, d.mean(), stats.sem(d))
    assert lo < d.mean() < hi
    assert lo == pytest.approx(ref[0], abs=0.004) and hi == pytest.approx(ref[1], abs=0.004)
    # forty ties are no proof that the next question ties: a width, about the exact bound's
    lo, hi = compare.mean_ci(np.zeros(40))
    assert lo < 0 < hi and hi == pytest.approx(-lo)
    assert 0.05 < hi - lo < 0.2
    # a 0/1 mean gets about Clopper-Pearson's interval
    k = np.r_[np.ones(7), np.zeros(13)]
    got = compare.mean_ci(k, bounds=(0.0, 1.0))
    exact = stats.binomtest(7, 20).proportion_ci(method="exact")
    assert got == pytest.approx((exact.low, exact.high), abs=0.01)
    assert all(np.isnan(compare.mean_ci(np.array([]))))


def test_paired_statistics_agree_with_scipy_on_aligned_questions():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(60)]
    a = pd.Series(rng.random(60), index=qids)
    b = (a - rng.normal(0.05, 0.1, 60)).clip(0, 1)
    b.iloc[:10] = a.iloc[:10]  # ten ties
    b = b.drop(qids[-5:]).iloc[::-1]  # other order, five questions missing from b
    a.iloc[20] = np.nan  # and one question without a score in a
    p = compare.paired(a, b)
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    d = both.iloc[:, 0] - both.iloc[:, 1]
    assert p["n"] == len(d) == 54
    assert (p["win"], p["tie"], p["loss"]) == ((d > 1e-9).sum(), (d.abs() <= 1e-9).sum(),
                                               (d < -1e-9).sum())
    assert p["tie"] == 10
    assert p["mean_diff"] == pytest.approx(d.mean())
    ref = stats.wilcoxon(d[d.abs() > 1e-12], zero_method="wilcox")
    assert p["pvalue"] == pytest.approx(ref.pvalue) and p["statistic"] == ref.statistic
    assert p["lo"] < p["mean_diff"] < p["hi"]
    same = compare.paired(a, a)
    assert same["pvalue"] is None and same["tie"] == 59


def test_pairwise_columns_holm_adjusts_over_the_pairs():
    rng = np.random.default_rng(5)
    m = pd.DataFrame({"x": rng.random(40)})
    m["y"], m["z"] = m["x"] - 0.2 * rng.random(40), m["x"] - 0.01 * rng.random(40) + 0.005
    out = compare.pairwise_columns(m, [("x", "y"), ("x", "z")])
    raw = [stats.wilcoxon(m["x"] - m[c]).pvalue for c in ("y", "z")]
    assert out["pvalue"].tolist() == pytest.approx(raw)
    assert out["p_holm"].tolist() == pytest.approx(compare.holm(raw))
    assert list(out.columns) == compare.PAIR_COLUMNS
    # the single-run helpers give the same numbers as before on the matrix they build
    ir = pd.DataFrame({"qid": list(m.index) * 2, "retriever": ["x"] * 40 + ["y"] * 40,
                       "budget": 100, "score": [*m["x"], *m["y"]]})
    assert compare.win_tie_loss(ir, "x", "y", 100) == {k: out.iloc[0][k] for k in
                                                       ("win", "tie", "loss", "n")}
    assert compare.paired_test(ir, "x", "y", 100)["pvalue"] == pytest.approx(raw[0])


# --- several runs -----------------------------------------------------------------------------


def test_runs_of_different_datasets_are_refused(root):
    with pytest.raises(lb.NotComparable, match="different datasets") as exc:
        lb.compare_runs(runs_of(root, "alpha", "other"))
    assert "another.jsonl" in str(exc.value) and "qa.jsonl" in str(exc.value)
    assert "cdcdcdcd" in str(exc.value)  # the hash that differs is named


def test_runs_without_scores_or_shared_questions_are_refused(root, tmp_path):
    empty = Run(tmp_path / "empty").create({"name": "empty"})
    with pytest.raises(lb.NotComparable, match="no retrieval scores"):
        lb.compare_runs({"alpha": Run(root / "runs" / "alpha"), "empty": empty})
    moved = tmp_path / "moved"
    make_run(moved, n_questions=4, seed=9, llm=False, retrievers=("bm25",), budgets=(100,))
    ir = Run(moved).read("ir_scores")
    Run(moved).write("ir_scores", ir.assign(qid="z" + ir["qid"]))
    _source(moved)
    with pytest.raises(lb.NotComparable, match="share no question"):
        lb.compare_runs({"alpha": Run(root / "runs" / "alpha"), "moved": Run(moved)})
    with pytest.raises(lb.NotComparable, match="at least one"):
        lb.compare_runs({})
    # same dataset hash, other gold parts (e.g. parts found by other evidence settings)
    other_parts = tmp_path / "other-parts"
    make_run(other_parts, n_questions=12, seed=7, llm=False, retrievers=("bm25",),
             budgets=(100, 200, 400))
    _source(other_parts)
    with pytest.raises(lb.NotComparable, match="different relevant parts for 12 of the 12"):
        lb.compare_runs({"alpha": Run(root / "runs" / "alpha"), "o": Run(other_parts)})


def test_comparison_keeps_shared_questions_and_budgets_and_says_so(root):
    comp = lb.compare_runs(runs_of(root, "alpha", "beta", "short"))
    assert len(comp.qids) == 9 and comp.budgets == (100, 400)
    assert any("9 questions every run scored" in n for n in comp.notes)
    assert any("budgets every run scored: 100, 400" in n for n in comp.notes)
    assert comp.entries["run"].tolist() == ["alpha"] * 2 + ["beta"] * 2 + ["short"]
    assert set(comp.entries["entry"]) == {"alpha::bm25", "alpha::sim", "beta::sim",
                                          "beta::bm25", "short::bm25"}
    assert comp.name("beta::sim") == "beta · SIM"
    assert set(comp.scores["qid"]) == set(comp.qids)
    assert set(comp.scores["budget"]) == {100, 400}


def test_leaderboard_ranks_by_mean_score_with_its_interval(root):
    runs = runs_of(root, "alpha", "beta")
    comp = lb.compare_runs(runs)
    board = lb.leaderboard(comp, 400)
    assert list(board.columns) == lb.BOARD_COLUMNS
    assert board["score"].is_monotonic_decreasing and board["rank"].iloc[0] == 1
    assert board["gap"].iloc[0] == 0 and (board["gap"] <= 0).all()
    for row in board.itertuples():
        run, ret = lb.split_entry(row.entry)
        ir = frames.at_budget(runs[run].read("ir_scores"), 400)
        assert row.score == pytest.approx(ir.loc[ir["retriever"] == ret, "score"].mean())
        assert row.lo <= row.score <= row.hi and row.n == 12
    # the interval is the band of curves.mean_curves at that budget
    bands = curves.mean_curves(comp.scores)
    at = bands[bands["budget"] == 400].set_index("retriever")
    assert board.set_index("entry")["lo"].to_dict() == pytest.approx(at["lo"].to_dict())
    # AUC from the mean curve over the common budgets
    top = bands[bands["retriever"] == board["entry"].iloc[0]]
    assert board["auc"].iloc[0] == pytest.approx(curve_area(top["budget"], top["mean"]))
    # judged correct only where the LLM stages ran, computed on the shared questions
    alpha = board[board["run"] == "alpha"].set_index("retriever")
    j = Run(root / "runs" / "alpha").read("judgments")
    j = j[j["system"] == "bm25"].dropna(subset=["score"])
    assert alpha.loc["bm25", "judged_correct"] == pytest.approx((j["score"] == 5).mean())
    assert board.loc[board["run"] == "beta", "judged_correct"].isna().all()
    assert (board["context_tokens"] <= 400).all()
    with pytest.raises(ValueError, match="not a budget every run scored"):
        lb.leaderboard(comp, 300)


def test_equal_scores_share_a_rank_and_the_verdict_names_the_margin(root, tmp_path):
    twin = tmp_path / "twin"
    make_run(twin, n_questions=12, seed=1, llm=False, retrievers=("bm25", "sim"),
             budgets=(100, 200, 400))  # alpha's retrieval again, without LLM files
    _source(twin)
    runs = {"alpha": Run(root / "runs" / "alpha"), "twin": Run(twin)}
    comp = lb.compare_runs(runs)
    board = lb.leaderboard(comp, 400)
    assert board["rank"].tolist() == [1, 1, 3, 3]
    v = lb.verdict(comp, board, 400)
    assert "tie" in v["headline"] and not v["significant"]
    # a real lead: a retriever against a weaker copy of itself
    comp2 = lb.compare_runs(runs_of(root, "alpha"))
    board2 = lb.leaderboard(comp2, 400)
    v2 = lb.verdict(comp2, board2, 400)
    assert v2["leader"] == board2["entry"].iloc[0]
    assert f"{v2['pair']['mean_diff']:+.3f}" in v2["headline"]
    text = lb.format_board(comp2, board2, 400)
    assert "alpha · BM25" in text and "Score_IR@400" in text
    vs = lb.versus_leader(comp2, board2, 400)
    assert vs["a"].unique().tolist() == [board2["entry"].iloc[0]] and len(vs) == 1


def test_catalogue_describes_each_run(root):
    cat = lb.catalogue(runs_of(root, "alpha", "other"))
    a = cat.set_index("run").loc["alpha"]
    assert a["dataset"] == "qa.jsonl" and a["sha256"] == SHA[:8]
    assert a["retrievers"] == "bm25, sim" and a["budgets"] == "100, 200, 400"
    assert a["chunker"] == "none" and a["scored"]
    assert a["size_mb"] > 0
    assert cat.set_index("run").loc["other", "llm"] == "no"
    assert lb.budgets_text([100, 200, 300]) == "100:300:100"
    assert lb.budgets_text([100, 500, 1000]) == "100, 500, 1000"
    groups = lb.group_by_dataset(runs_of(root, "alpha", "other", "beta"))
    assert [list(g) for g in groups.values()] == [["alpha", "beta"], ["other"]]


# --- the page ---------------------------------------------------------------------------------


@pytest.fixture
def app_env(root, monkeypatch):
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(root / "no-demo"))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(root / "runs"))


def open_runs_page(**params) -> AppTest:
    return open_app("runs", timeout=90, **params)


def test_runs_page_ranks_runs_from_the_url(root, app_env):
    keys = [str(root / "runs" / "alpha"), str(root / "runs" / "beta")]
    at = open_runs_page(rn_runs=keys, rn_n="400")
    assert [s.value for s in at.subheader][:2] == ["Who wins at N = 400", "Leaderboard"]
    labels = {m.label: m.value for m in at.metric}
    assert labels["Questions compared"] == "12"
    assert labels["Significant?"] in ("yes", "no")
    tables = [d.value for d in at.dataframe]
    board = next(t for t in tables if "ci" in getattr(t, "columns", []))
    assert len(board) == 4 and board["rank"].iloc[0] == 1
    assert at.query_params["rn_runs"] == keys  # the view stays in the URL
    over_all = next(m.value for m in at.markdown
                    if m.value.startswith("**Over all budgets:**")).replace("\\", "")
    assert "area under its Score_IR curve" in over_all or \
        "are not told apart overall: areas under their Score_IR curves" in over_all
    assert "alpha" in over_all or "beta" in over_all  # entries named run · retriever


def test_runs_page_refuses_runs_of_different_datasets(root, app_env):
    at = open_runs_page(rn_runs=[str(root / "runs" / "alpha"), str(root / "runs" / "other")])
    assert len(at.error) == 1
    assert "cannot be compared" in at.error[0].value
    assert "different datasets" in at.error[0].value
    assert not at.subheader  # no leaderboard drawn


def test_adding_a_run_adds_its_curves(root, app_env):
    alpha, beta = str(root / "runs" / "alpha"), str(root / "runs" / "beta")
    at = open_runs_page(rn_runs=[alpha])
    assert {lb.split_entry(e)[0] for e in at.multiselect(key="rn_show").value} == {alpha}
    at.multiselect(key="rn_runs").set_value([alpha, beta]).run()
    assert not at.exception, [e.value for e in at.exception]
    drawn = at.multiselect(key="rn_show").value
    assert {lb.split_entry(e)[0] for e in drawn} == {alpha, beta}, drawn


def test_leaderboard_headers_fit_their_columns(root, app_env):
    """Every leaderboard column has a width that holds its header (none cut to 'Ju…')."""
    at = open_runs_page(rn_runs=[str(root / "runs" / "alpha"), str(root / "runs" / "beta")])
    board = next(d for d in at.dataframe if "ci" in getattr(d.value, "columns", []))
    assert clipped_headers(board) == []


def test_leaderboard_on_every_signal_dashes_a_run_without_answers(root, app_env):
    """alpha has answers and judgments, beta none: beta's pairs show Score_IR and a dash for
    every answer signal (not 0); the agreement then falls back to Score_IR as the reference."""
    alpha, beta = str(root / "runs" / "alpha"), str(root / "runs" / "beta")
    at = open_runs_page(rn_runs=[alpha, beta], rn_n="400")
    assert "Leaderboard on every signal" in [s.value for s in at.subheader]
    table = next(d.value for d in at.dataframe if "LLM judge" in getattr(d.value, "columns", []))
    rows = table.set_index("system")
    beta_rows = [r for r in rows.index if r.startswith("beta")]
    assert len(beta_rows) == 2 and (rows.loc[beta_rows, "LLM judge"] == "–").all()
    assert rows.loc[beta_rows, "Score_IR (reference)"].str.match(r"\d\.\d{3} \[").all()
    assert rows.loc["alpha · LLM only", "Score_IR (reference)"] == "–"
    assert rows.loc["alpha · BM25", "LLM judge"] != "–"
    assert any(i.value.replace("\\", "").startswith("Against Score_IR, ") for i in at.info)


def test_signal_board_of_runs_matches_the_single_run(root):
    """One run through RunsView gives the means RunView gives (the same frame, the same seed)."""
    from ragdash.view import RunsView, RunView

    alpha = Run(root / "runs" / "alpha")
    one = RunView(alpha).signal_board(400)
    many = RunsView({"a": alpha}).signal_board(400)
    assert many.summary.headline == one.summary.headline
    assert many.means["mean"].tolist() == pytest.approx(one.means["mean"].tolist(),
                                                         nan_ok=True)
    assert many.means["system"].iloc[0] == "a::llm_only"


def test_the_sweeps_leaderboard_prints_every_signal(root):
    """`ragdash sweep`'s leaderboard: the table of every signal (a dash for the run without
    answers) and the orders with tau, the same numbers as the page's."""
    from ragdash.analysis.system_means import format_board
    from ragdash.sweep import print_leaderboard
    from ragdash.view import RunsView

    said: list[str] = []
    runs = [Run(root / "runs" / "alpha"), Run(root / "runs" / "beta")]
    print_leaderboard(runs, 400, say=said.append)
    text = "\n".join(said)
    assert "Every signal per system: mean [95% CI" in text
    judge = next(line for line in text.splitlines() if line.startswith("LLM judge"))
    assert len(re.findall(r"(?<=\s)–(?=\s|$)", judge)) == 2  # beta's two were never judged
    assert "Kendall's tau-b with Score_IR" in text and "Against Score_IR, " in text
    comp_runs = {str(r.path): r for r in runs}
    board = RunsView(comp_runs).signal_board(400)
    assert format_board(board, name=RunsView(comp_runs).comparison().name) in text
    quiet: list[str] = []
    print_leaderboard([runs[1]], 400, say=quiet.append)  # no answers: Score_IR only, no table
    assert not any("Every signal" in s for s in quiet)
