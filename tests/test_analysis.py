"""ragdash.analysis, ragdash.viz and the plain-Python UI helpers: evidence positions agree with
Score_IR, paired statistics, bootstrap bands, threshold panel numbers agree with
ragdash.calibration, HTML escaping, and the report."""

import html

import numpy as np
import pandas as pd
import pytest
from fixtures.make_run import HOSTILE, make_run, synthetic_scores

from ragdash.analysis import compare, curves, frames, judging, matching, threshold_panel
from ragdash.constants import SCORES
from ragdash.rundir import Run
from ragdash.scoring import part_scores
from ragdash.scoring.contexts import contexts
from ragdash.ui import evidence
from ragdash.viz import calibration, llm, retrieval
from ragdash.viz.colors import RETRIEVER_COLORS, RETRIEVER_SYMBOLS, color_map, color_of, symbol_of


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return Run(make_run(tmp_path_factory.mktemp("runs") / "fx", n_questions=24, seed=3))


def test_part_matches_lengths_equal_part_scores_random():
    rng = np.random.default_rng(0)
    for _ in range(300):
        alphabet = "ab c" if rng.random() < 0.5 else "abcdefgh "
        ctx = "".join(rng.choice(list(alphabet), size=int(rng.integers(0, 80))))
        parts = ["".join(rng.choice(list(alphabet), size=int(rng.integers(1, 15))))
                 for _ in range(int(rng.integers(1, 4)))]
        cut = int(rng.integers(0, len(ctx) + 1))
        expected = part_scores(parts, ctx, [cut])[0] * np.array([len(p) for p in parts])
        got = matching.part_matches(parts, ctx, cut)
        assert [m.length for m in got] == [round(x) for x in expected]
        for m, p in zip(got, parts, strict=True):
            assert m.end <= cut
            if m.length:
                assert ctx[m.start:m.end] in p


def test_part_matches_on_real_contexts(run):
    ir = run.read("ir_scores")
    ex = run.read("examples").set_index("qid")
    ctx = contexts(run)
    for row in ctx.head(40).itertuples():
        stored = ir[(ir["qid"] == row.qid) & (ir["retriever"] == row.retriever)]
        for s in stored.itertuples():
            parts = list(ex.loc[row.qid, "parts"])
            got = matching.part_matches(parts, row.context, s.cut)
            assert np.allclose([m.length / len(p) for m, p in zip(got, parts, strict=True)],
                               s.part_scores)


def test_question_chunks_rebuild_the_scored_context(run):
    ctx = contexts(run).set_index(["qid", "retriever"])["context"]
    by_ret = matching.question_chunks(run.read("retrieved"), run.read("chunks"), "q004")
    assert set(by_ret) == {"bm25", "sim", "mmr", "reo", "mlq"}
    for ret, chunks in by_ret.items():
        assert list(chunks["rank"]) == sorted(chunks["rank"])
        assert " ".join(chunks["text"]) == ctx[("q004", ret)]


@pytest.mark.parametrize("n", [2, 5, 9, 13, 14, 20])
def test_the_signed_rank_test_is_scipys_with_tied_differences_too(n):
    """With tied |differences| below 14 SciPy enumerates every sign pattern, one call each (4.6 s
    at 13): `wilcoxon_test` gives its statistic and p-value exactly, vectorised."""
    from scipy.stats import wilcoxon

    rng = np.random.default_rng(n)
    for d in (rng.choice([-0.3, -0.1, 0.1, 0.2, 0.3], size=n), rng.normal(size=n)):
        ref = wilcoxon(d, zero_method="wilcox")
        got = compare.wilcoxon_test(d)
        assert (got["statistic"], got["pvalue"]) == (float(ref.statistic), float(ref.pvalue))


def test_paired_statistics(run):
    from scipy.stats import wilcoxon

    ir = run.read("ir_scores")
    w = compare.win_tie_loss(ir, "bm25", "reo", 1000)
    assert w["win"] + w["tie"] + w["loss"] == w["n"] == 24
    t = compare.paired_test(ir, "bm25", "reo", 1000)
    m = frames.score_matrix(ir, 1000)
    d = (m["bm25"] - m["reo"]).to_numpy()
    assert t["mean_diff"] == pytest.approx(d.mean())
    assert t["pvalue"] == pytest.approx(wilcoxon(d[d != 0]).pvalue)
    same = compare.paired_test(ir, "bm25", "bm25", 1000)
    assert same["pvalue"] is None and same["n_nonzero"] == 0
    pw = compare.pairwise(ir, ["bm25", "sim", "reo"], 1000)
    assert len(pw) == 3
    assert all(h >= p for h, p in zip(pw["p_holm"], pw["pvalue"], strict=True))
    big = compare.largest_differences(ir, run.read("examples"), "bm25", "reo", 1000, n=5)
    assert list(big["diff"].abs()) == sorted(big["diff"].abs(), reverse=True)


def test_holm():
    assert compare.holm([0.01, 0.04, None, 0.03]) == [0.03, 0.06, None, 0.06]


def test_mean_bands_hold_the_mean(run):
    ir = run.read("ir_scores")
    bands = curves.mean_curves(ir)
    assert len(bands) == 5 * 10
    assert (bands["lo"] <= bands["mean"] + 1e-12).all()
    assert (bands["mean"] <= bands["hi"] + 1e-12).all()
    table = curves.summary_table(ir)
    for r in bands.itertuples():
        assert r.mean == pytest.approx(table.loc[r.budget, r.retriever])
    diff = compare.difference_curve(ir, "bm25", "sim")
    assert (diff["lo"] <= diff["hi"]).all() and len(diff) == 10


def test_threshold_panel_matches_calibrate(run):
    from ragdash import calibration as cal

    ir, judgments = run.read("ir_scores"), run.read("judgments")
    data = threshold_panel.threshold_data(ir, judgments, 1000)
    for h, k in ((0.1, 0.6), (0.3, 0.2), (0.0, 1.0), (0.5, 0.5)):
        res = threshold_panel.panel(data, h, k)
        est = cal.estimate(ir, h, k, 1000).set_index("retriever")
        mine = res["estimated"].set_index("retriever")
        for c in ("est_1", "est_2_4", "est_5"):
            assert np.allclose(mine.loc[est.index, c] * 100, est[c])
        p, _ = cal.pairs(ir, judgments, 1000)
        ref = cal.compare(p, h, k).set_index("retriever")
        got = res["compare"].set_index("retriever").loc[ref.index]
        for c in ("est_5", "act_5", "err_2_4", "mae"):
            assert np.allclose(got[c], ref[c])
        assert (res["confusion"].to_numpy() == cal.confusion(p, h, k).to_numpy()).all()


def test_threshold_data_without_judgments(run):
    data = threshold_panel.threshold_data(run.read("ir_scores"), None, 500)
    assert not data.has_judgments and data.fit_k is None
    res = threshold_panel.panel(data, 0.105, 0.67)
    assert set(res) == {"estimated"}
    assert np.allclose(res["estimated"][["est_1", "est_2_4", "est_5"]].sum(axis=1), 1)


def test_large_panel_is_cheap():
    ir, judgments = synthetic_scores(2000)
    data = threshold_panel.threshold_data(ir, judgments, 1000)
    assert len(data.pairs) == 10_000
    idx, vals = curves.downsample_sorted(data.sorted_ir["bm25"], 400)
    assert len(idx) <= 400 and idx[0] == 0 and idx[-1] == 1999
    assert (np.diff(vals) >= 0).all()


def test_judge_tables(run):
    j = run.read("judgments")
    t = judging.table_3_3(j)
    assert list(t.index)[0] == "llm_only"
    shares = t[[str(s) for s in SCORES]]
    assert np.allclose(shares.sum(axis=1), 1)
    assert (t["errors"] == j.groupby("system")["score"].apply(lambda s: s.isna().sum())
            .reindex(t.index)).all()
    gain = judging.rag_gain(j)
    assert set(gain["system"]) == {"bm25", "sim", "mmr", "reo", "mlq"}
    ct = judging.llm_vs_rag(j, "bm25")
    assert ct.shape == (5, 5)
    errs = judging.errors_table(run.read("answers"), j)
    assert set(errs["stage"]) <= {"generation", "judging"} and len(errs) > 0
    cost = judging.costs(run.read("answers"), j)
    assert set(cost["stage"]) == {"generation", "judging"}


def test_primary_rows_of_a_budget_sweep():
    j = pd.DataFrame({"qid": ["a"] * 3 + ["b"] * 3, "system": ["llm_only", "bm25", "bm25"] * 2,
                      "budget": [None, 100, 1000] * 2, "score": [1, 2, 5, 4, 5, 5],
                      "judge_model": "m"})
    one = frames.primary(j, 1000)
    assert not one.duplicated(["qid", "system"]).any() and set(one["budget"].dropna()) == {1000}
    assert set(frames.primary(j, 100)["budget"].dropna()) == {100}
    assert frames.primary(j.iloc[[0, 2]], 1000).equals(j.iloc[[0, 2]])
    sweep = judging.sweep_distribution(j)
    assert set(sweep["budget"]) == {100, 1000} and set(sweep["system"]) == {"bm25"}
    assert sweep.groupby("budget")["share"].sum().round(6).eq(1).all()
    two_judges = pd.concat([j.assign(judge_model="m"), j.iloc[:2].assign(judge_model="z")])
    assert set(frames.primary(two_judges)["judge_model"]) == {"m"}


def test_per_question_and_breakdown(run):
    ir, ex, j = run.read("ir_scores"), run.read("examples"), run.read("judgments")
    t = frames.per_question(ex, ir, 1000, j, ["bm25", "sim", "mmr", "reo", "mlq"])
    assert len(t) == 24 and "ir:bm25" in t and "judge:llm_only" in t
    assert frames.metadata_columns(ex) == ["type", "level", "source"]
    b = curves.breakdown(ir, ex, "type", 1000)
    assert set(b["group"]) == {"bridge", "comparison"}
    long = frames.long_scores(ir, j)
    assert len(long) == len(ir) and "judge" in long


def test_highlight_escapes_and_marks():
    text = HOSTILE + " more text"
    parts = ["<script>alert", "more"]
    matches = matching.part_matches(parts, text, len(text))
    out = evidence.highlight(text, 0, matches, ["#ff0", "#0ff"], cut=len(HOSTILE), cut_label="N")
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert 'class="rd-cut"' in out and 'class="rd-after"' in out
    assert out.count("<mark") == 2
    legend = evidence.parts_legend(["<b>x</b>"], [0.5])
    assert "&lt;b&gt;x&lt;/b&gt;" in legend and "50%" in legend
    chunks = pd.DataFrame({"rank": [0, 1], "chunk_id": ["<i>c</i>", "d#1"],
                           "title": ["<img src=x onerror=alert(1)>", "t"],
                           "text": [HOSTILE, "tail"], "score": [2.0, 1.0]})
    page = evidence.context_html(chunks, [], len(HOSTILE) + 3, 100)
    assert "<img" not in page and "<i>" not in page and html.escape("<i>c</i>") in page


def test_a_context_shorter_than_n_is_not_marked_as_cut():
    chunks = pd.DataFrame({"rank": [0, 1], "chunk_id": ["a", "b"], "title": ["", ""],
                           "text": ["First chunk.", "Second."], "score": [2.0, 1.0]})
    end = len("First chunk. Second.")
    cut_at_end = evidence.context_html(chunks, [], end, 1000)
    assert "✂ N = 1000" in cut_at_end  # the N-th token ends exactly there
    whole = evidence.context_html(chunks, [], end, 1000, whole=True)
    assert "✂" not in whole and "end of context (shorter than N = 1000)" in whole


def test_one_colour_per_retriever():
    assert color_of("bm25") == RETRIEVER_COLORS["bm25"]
    assert len(set(RETRIEVER_COLORS.values())) == len(RETRIEVER_COLORS)
    assert len(set(RETRIEVER_SYMBOLS.values())) == len(RETRIEVER_SYMBOLS) == \
        len(RETRIEVER_COLORS)
    assert symbol_of("my-retriever") == symbol_of("my-retriever")
    assert color_of("my-retriever") == color_of("my-retriever")
    assert color_map(["sim", "x"])["sim"] == RETRIEVER_COLORS["sim"]


def test_charts_are_titled_and_labelled(run):
    ir = run.read("ir_scores")
    order = ["bm25", "sim", "mmr", "reo", "mlq"]
    data = threshold_panel.threshold_data(ir, run.read("judgments"), 1000)
    res = threshold_panel.panel(data, 0.1, 0.6)
    figs = [retrieval.score_curves(curves.mean_curves(ir), order),
            retrieval.score_distribution(frames.at_budget(ir, 1000), order, 1000),
            calibration.threshold_curves(data, res["estimated"], 0.1, 0.6),
            calibration.ir_by_judge(data, 0.1, 0.6), calibration.objective(data, 0.1, 0.6),
            calibration.confusion(res["confusion"]),
            calibration.estimated_vs_actual(res["compare"]),
            llm.judge_stacked(judging.judge_distribution(run.read("judgments")),
                              ["llm_only", *order])]
    for fig in figs:
        assert fig.layout.title.text
        assert fig.layout.xaxis.title.text or fig.layout.yaxis.title.text
    curve = figs[0]
    lines = [t for t in curve.data if t.mode == "lines+markers"]
    assert {t.name: t.line.color for t in lines}["BM25"] == RETRIEVER_COLORS["bm25"]
    # curves that coincide (every retriever saturated) still show each one: a symbol apiece
    assert len({t.marker.symbol for t in lines}) == len(order)
    # the judge groups' legend under the plot, the x-axis title inside the figure
    by_judge = figs[3].layout
    assert by_judge.legend.orientation == "h" and by_judge.legend.y < 0
    assert by_judge.margin.b >= 120


def test_report_is_self_contained_and_escaped(run, tmp_path):
    from ragdash.html_report import build_report, figure_html, figures, write_report

    out = build_report(run)
    assert out.startswith("<!doctype html>")
    assert out.count("plotly.js v") <= 2  # the library is inlined once
    assert "<script src=" not in out and '<link rel="stylesheet" href="http' not in out
    assert "<script>alert" not in out and "<img src=x" not in out
    assert "Table 3.1" in out and "Table 3.3" in out and "Can the judge be trusted?" in out
    assert "Agrees with the true answer" in out
    from ragdash.analysis import area
    from ragdash.viz.colors import label

    head = area.headline(run.read("ir_scores"))  # the budget-free headline, as on the page
    assert "area under the Score_IR curve" in out and \
        ("best retriever over all budgets" in out or "largest area over all budgets" in out)
    assert html.escape(area.sentences(head, name=label)[0]) in out
    figs = figures(run)
    assert {"score_ir_curves", "thresholds_sorted_scores", "judge_scores"} <= set(figs)
    assert "<html>" in figure_html(figs["ir_metrics"], "<x>") and "&lt;x&gt;" in figure_html(
        figs["ir_metrics"], "<x>")
    path = write_report(run, tmp_path / "r.html")
    assert path.stat().st_size > 100_000


def _pairs_data(ir, judge) -> threshold_panel.ThresholdData:
    ir_scores = pd.DataFrame({"qid": [f"q{i}" for i in range(len(ir))], "retriever": "bm25",
                              "budget": 1000, "score": ir})
    judgments = pd.DataFrame({"qid": [f"q{i}" for i in range(len(ir))], "system": "bm25",
                              "score": pd.array(judge, dtype="Int64")})
    return threshold_panel.threshold_data(ir_scores, judgments, 1000)


def test_fit_diagnosis_explains_fits_that_carry_no_information():
    rng = np.random.default_rng(0)
    ir = rng.uniform(0.3, 1.0, 60)
    # correct answers at the lowest Score_IR, no judge 1 at all: both fits are empty
    flat = _pairs_data(ir, np.where(ir < np.quantile(ir, 0.25), 5, 4))
    notes = threshold_panel.fit_diagnosis(flat)
    assert len(notes) == 2
    assert notes[0].startswith("No k beats predicting") and "does not separate" in notes[0]
    assert notes[1].startswith("No answer was judged lacking information (1)")
    # a judge that follows IR: nothing to explain
    clear = _pairs_data(ir, np.where(ir > 0.8, 5, np.where(ir < 0.4, 1, 4)))
    assert 0.75 < clear.fit_k < 0.85 and threshold_panel.fit_diagnosis(clear) == []
    every = threshold_panel.fit_diagnosis(_pairs_data(ir, np.ones(60, dtype=int)))
    assert any(n.startswith("Every answer was judged lacking information (1)") for n in every)
    empty = threshold_panel.ThresholdData(1000, [], {}, None, None, None, None, None)
    assert threshold_panel.fit_diagnosis(empty) == []


def test_best_retriever_names_every_retriever_of_a_tie():
    ir = pd.DataFrame({"qid": ["a", "b"] * 3, "retriever": ["bm25"] * 2 + ["sim"] * 2 + ["reo"] * 2,
                       "budget": 100, "score": [1.0, 0.5, 0.5, 1.0, 0.2, 0.2]})
    assert curves.best_retriever(ir, 100) == (["bm25", "sim"], 0.75)
    assert curves.best_retriever(ir[ir["retriever"] != "sim"], 100) == (["bm25"], 0.75)


def test_the_configured_order_wins_over_the_papers():
    from ragdash.analysis.frames import order_systems

    assert order_systems(["bm25", "sim", "mlq", "llm_only", "zz"], ["sim", "bm25"]) == [
        "llm_only", "sim", "bm25", "mlq", "zz"]


def test_the_score_curves_legend_sits_below_the_plot():
    import pandas as pd

    from ragdash.viz.retrieval import score_curves

    bands = pd.DataFrame({"retriever": ["bm25", "sim"], "budget": [100, 100], "mean": [0.5, 0.6],
                          "lo": [0.4, 0.5], "hi": [0.6, 0.7], "n": [10, 10]})
    legend = score_curves(bands, ["bm25", "sim"]).layout.legend
    assert legend.orientation == "h" and legend.y < 0  # a side legend squeezed Figure 3.1


def test_a_rule_that_agrees_with_the_judge_everywhere_has_a_bias_interval_with_width():
    """The h/k rule's bias against the judge: on 20 questions where it agrees with every
    judgment, no resample moves the difference, so the percentile interval was 0.0–0.0 pp;
    it is ± Clopper-Pearson's bound for no disagreement in 20 questions (16.8 pp). One
    disagreement keeps the percentile interval."""
    from ragdash.analysis.threshold_panel import rule_bias

    ir = np.linspace(0.05, 0.95, 40)
    pairs = pd.DataFrame({"qid": np.repeat([f"q{i}" for i in range(20)], 2),
                          "retriever": np.tile(["bm25", "sim"], 20), "ir": ir,
                          "judge": np.where(ir > 0.5, 5, 1)})
    agree = rule_bias(pairs, 0.5, 500, n_boot=200)
    reach = 100 * (1 - 0.025 ** (1 / 20))
    assert agree["diff_pp"] == 0 and agree["ci"] == pytest.approx([-reach, reach])
    one = rule_bias(pairs.assign(judge=np.where(np.arange(40) == 0, 5, pairs["judge"])), 0.5,
                    500, n_boot=200)
    assert one["under"] == 1 and one["ci"][0] < one["diff_pp"] <= one["ci"][1] < reach
