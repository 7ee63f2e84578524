"""Every signal's mean per system with its CI and the rank agreement between the signals' orders
(`ragdash.analysis.system_means`), on hand-made frames whose Kendall's tau is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ragdash.analysis.system_means import (
    VERDICTS,
    cell,
    format_board,
    kendall,
    means_table,
    order_text,
    rank_agreement,
    signal_board,
    system_means,
    tau_intervals,
)

SYSTEMS = ["a", "b", "c", "d"]


def _frame(columns: dict[str, list[float]], per_system: int = 10, seed: int = 0
           ) -> pd.DataFrame:
    """`per_system` questions per system; signal `s` of system i is columns[s][i] plus a little
    noise around it (mean exactly columns[s][i])."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, system in enumerate(SYSTEMS):
        noise = rng.normal(0, 0.05, per_system)
        noise -= noise.mean()
        for q in range(per_system):
            rows.append({"qid": f"q{q}", "system": system,
                         **{s: v[i] + noise[q] if not np.isnan(v[i]) else np.nan
                            for s, v in columns.items()}})
    return pd.DataFrame(rows)


def test_kendall_known_values():
    ref = pd.Series([0.9, 0.7, 0.5, 0.3], index=SYSTEMS)
    same = kendall(pd.Series([4.0, 3, 2, 1], index=SYSTEMS), ref)
    assert same.tau == pytest.approx(1.0) and same.same and same.disagree == 0
    rev = kendall(pd.Series([1.0, 2, 3, 4], index=SYSTEMS), ref)
    assert rev.tau == pytest.approx(-1.0) and rev.disagree == 6 and not rev.same
    swap = kendall(pd.Series([0.9, 0.7, 0.3, 0.5], index=SYSTEMS), ref)  # one adjacent swap
    assert swap.tau == pytest.approx(2 / 3) and (swap.agree, swap.disagree) == (5, 1)


def test_kendall_on_the_systems_both_have_and_ties():
    ref = pd.Series([0.9, 0.7, 0.5, 0.3], index=SYSTEMS)
    missing = kendall(pd.Series([np.nan, 3, 2, 1], index=SYSTEMS), ref)  # 'a' has no value
    assert missing.systems == 3 and missing.tau == pytest.approx(1.0)
    tied = kendall(pd.Series([4.0, 3, 3, 1], index=SYSTEMS), ref)
    assert tied.split == 1 and tied.disagree == 0 and not tied.same
    assert 0 < tied.tau < 1  # tau-b: a tie on one side only costs agreement
    both = kendall(pd.Series([4.0, 3, 3, 1], index=SYSTEMS),
                   pd.Series([0.9, 0.5, 0.5, 0.3], index=SYSTEMS))
    assert both.same and both.tau == pytest.approx(1.0)  # tied in both orders: agree
    one = kendall(pd.Series([1.0], index=["a"]), ref)
    assert one.systems == 1 and np.isnan(one.tau) and not one.same
    flat = kendall(pd.Series([2.0, 2, 2, 2], index=SYSTEMS), ref)
    assert np.isnan(flat.tau)


def test_means_with_intervals_n_and_nan():
    df = _frame({"good": [0.8, 0.6, 0.4, 0.2], "partial": [np.nan, 0.5, 0.5, 0.1]})
    df.loc[(df["system"] == "b") & (df["qid"].isin(["q0", "q1"])), "partial"] = np.nan
    m = system_means(df, ["good", "partial"]).set_index(["system", "signal"])
    assert m.loc[("a", "good"), "mean"] == pytest.approx(0.8)
    assert m.loc[("a", "good"), "lo"] < 0.8 < m.loc[("a", "good"), "hi"]
    assert m.loc[("a", "partial"), "n"] == 0 and np.isnan(m.loc[("a", "partial"), "mean"])
    assert m.loc[("b", "partial"), "n"] == 8  # NaN questions left out, not counted as 0
    table = means_table(system_means(df, ["good", "partial"])).set_index("system")
    assert table.loc["a", "partial"] == "–"
    assert table.loc["b", "partial"].endswith("· n=8") and table.loc["b", "questions"] == 10
    with pytest.raises(ValueError, match="bleu"):
        system_means(df, ["bleu"])


def test_cell_and_order_text():
    assert cell(0.7123, 0.65, 0.779, 60) == "0.712 [0.650–0.779]"
    assert cell(np.nan, np.nan, np.nan, 0) == "–"
    assert cell(0.5, 0.4, 0.6, 40, 60) == "0.500 [0.400–0.600] · n=40"
    order = order_text(pd.Series({"llm_only": 0.1, "bm25": 0.6, "sim": 0.6, "mlq": np.nan}))
    assert order == "BM25 = SIM > LLM only"


def test_board_orders_and_summary():
    df = _frame({"gold": [0.9, 0.7, 0.5, 0.3], "same": [0.8, 0.6, 0.4, 0.2],
                 "swapped": [0.8, 0.6, 0.2, 0.4], "reversed": [0.1, 0.2, 0.3, 0.4],
                 "ir": [np.nan, 0.9, 0.5, 0.1], "flat": [0.5] * 4,
                 "alone": [0.4, np.nan, np.nan, np.nan]})
    board = signal_board(df, ["same", "swapped", "reversed", "ir", "flat", "alone"], "gold",
                         n_boot=100, reference_name="the truth")
    ag = board.agreement.set_index("signal")
    assert list(board.agreement["signal"]) == ["same", "ir", "swapped", "reversed", "flat",
                                                "alone"]
    assert ag.loc["swapped", "tau"] == pytest.approx(2 / 3)
    assert ag.loc["reversed", "tau"] == pytest.approx(-1.0)
    assert ag.loc["ir", "systems"] == 3 and ag.loc["ir", "order"] == "b > c > d"
    assert board.summary.headline == "Against the truth, 4 systems:"
    assert dict(board.summary.groups) == {
        VERDICTS["same"]: ("same", "ir (3 of the 4 systems)"),
        VERDICTS["partly"]: ("swapped (1 of 6 pairs reversed, tau 0.67)",),
        VERDICTS["contrary"]: ("reversed (6 of 6 pairs reversed, tau -1.00)",),
        VERDICTS["none"]: ("flat", "alone (fewer than 2 systems with a value)")}
    assert str(board.summary).splitlines()[1] == f"- {VERDICTS['same']}: same, ir (3 of the 4 " \
        "systems)"
    text = format_board(board)
    assert "gold (reference)" in text and "tau -1.00" in text
    assert board.table().columns[2] == "gold (reference)"


def test_board_with_one_system_or_no_other_signal():
    df = _frame({"truth": [0.9, 0.7, 0.5, 0.3], "judge": [0.5, 0.4, 0.3, 0.2]})
    one = signal_board(df, ["judge"], "truth", systems=["b"], n_boot=20)
    assert one.systems == ("b",) and "One system only" in str(one.summary)
    assert np.isnan(one.agreement["tau"].iloc[0])
    alone = signal_board(df, [], "truth", n_boot=20)
    assert alone.agreement.empty and "No signal besides" in str(alone.summary)
    with pytest.raises(ValueError, match="no reference"):
        rank_agreement(system_means(df, ["judge"]), ["judge"], "truth")


def test_a_runs_human_labels_are_the_reference(tmp_path):
    """With human labels the truth is their mean (not `contains`), named 'human labels'; a run
    without answers has Score_IR alone, its own reference, and no order to compare."""
    from fixtures.make_run import make_run

    from ragdash.rundir import Run
    from ragdash.view import RunView

    run = Run(make_run(tmp_path / "r", n_questions=10, seed=3, retrievers=("bm25", "sim"),
                       budgets=(100, 200)))
    answers = run.read("answers")
    labels = answers[["qid", "system"]].drop_duplicates().assign(
        score=lambda d: np.where(d["system"] == "sim", 5, 1), labeller="ana", label="",
        time="", comment="")
    run.write("labels", labels)
    board = RunView(run).signal_board(200, n_boot=50)
    assert board.reference == "truth" and board.reference_name == "human labels"
    truth = board.means[board.means["signal"] == "truth"].set_index("system")["mean"]
    assert truth["sim"] == 1.0 and truth["bm25"] == 0.0 and truth["llm_only"] == 0.0
    assert board.summary.headline.startswith("Against human labels,")
    bare = Run(make_run(tmp_path / "bare", n_questions=10, seed=3, llm=False,
                        retrievers=("bm25", "sim"), budgets=(100, 200)))
    alone = RunView(bare).signal_board(200, n_boot=50)
    assert alone.signals == ("score_ir",) and alone.agreement.empty
    assert "No signal besides Score_IR" in str(alone.summary)


def test_tau_interval_is_tau_b_and_widens_with_noise():
    """One question per system: every draw is the same, so the interval is the point tau-b
    (scipy's, ties included); far-apart systems keep tau 1 in every draw; close noisy ones
    do not; a system missing on one side leaves its pairs out; one system has no interval."""
    from scipy.stats import kendalltau

    x, y = [0.9, 0.5, 0.5, 0.2, 0.4], [0.8, 0.7, 0.3, 0.3, 0.1]
    one = pd.DataFrame({"qid": "q0", "system": list("abcde"), "x": x, "y": y})
    lo, hi = tau_intervals(one, ["x"], "y", list("abcde"), n_boot=20)["x"]
    assert lo == pytest.approx(kendalltau(x, y).statistic) == hi
    far = _frame({"truth": [0.9, 0.7, 0.5, 0.3], "same": [0.8, 0.6, 0.4, 0.2],
                  "reversed": [0.1, 0.2, 0.3, 0.4]})
    got = tau_intervals(far, ["same", "reversed"], "truth", SYSTEMS, n_boot=200)
    assert got["same"] == (1.0, 1.0) and got["reversed"] == (-1.0, -1.0)
    rng = np.random.default_rng(5)
    close = _frame({"truth": [0.52, 0.51, 0.50, 0.49], "noisy": [0.5, 0.5, 0.5, 0.5]})
    close["noisy"] = rng.random(len(close))
    lo, hi = tau_intervals(close, ["noisy"], "truth", SYSTEMS, n_boot=300)["noisy"]
    assert lo < 0 < hi  # unrelated orders: the interval holds 0
    missing = _frame({"truth": [0.9, 0.7, 0.5, 0.3], "ir": [np.nan, 0.6, 0.4, 0.2]})
    assert tau_intervals(missing, ["ir"], "truth", SYSTEMS, n_boot=100)["ir"] == (1.0, 1.0)
    assert all(np.isnan(tau_intervals(missing, ["ir"], "truth", ["b"])["ir"]))
    board = signal_board(far, ["same", "reversed"], "truth", n_boot=100)
    assert "+1.00 [1.00, 1.00]" in format_board(board)
    assert board.summary.noise == ("Beyond the noise for reversed: its tau's 95 % interval "
                                   "stays below 1 (the questions resampled).")
    swap = _frame({"truth": [0.51, 0.50, 0.2, 0.1], "top_swapped": [0.50, 0.51, 0.2, 0.1]})
    noisy = signal_board(swap, ["top_swapped"], "truth", n_boot=200)
    assert "top_swapped (1 of 6 pairs reversed" in str(noisy.summary)
    assert noisy.summary.noise == ("Within the noise: each tau of a signal that reverses a "
                                   "pair has a 95 % interval that reaches 1 (the questions "
                                   "resampled).")
    tied = _frame({"truth": [0.9, 0.7, 0.5, 0.3], "coarse": [1.0, 1.0, 0.0, 0.0]})
    coarse = signal_board(tied, ["coarse"], "truth", n_boot=100)
    assert coarse.summary.noise == ""  # ties reverse nothing: no word on noise
    assert coarse.summary.groups == (
        (VERDICTS["ties"], ("coarse (2 pairs tied in one order only, tau 0.82)",)),)


def test_a_lower_is_better_metric_is_read_in_its_direction():
    """Hallucination (a share of wrong claims) that falls as the truth rises orders the systems
    as the truth does (tau 1) and ranks correct answers first (AUC 1), and says it is lower is
    better wherever it is named."""
    from ragdash.analysis.signals import direction, signal_agreement, signal_label

    rows = [{"qid": f"q{i}", "system": s, "truth": t, "hallucination": 1 - t}
            for i in range(6) for s, t in (("a", 1.0), ("b", 0.0 if i % 2 else 1.0),
                                           ("c", 0.0))]
    frame = pd.DataFrame(rows)
    board = signal_board(frame, ["hallucination"], "truth", n_boot=50)
    row = board.agreement.iloc[0]
    assert row["tau"] == pytest.approx(1.0) and row["order"] == "a > b > c"
    table = signal_agreement(frame, ["hallucination"], "truth", n_boot=50)
    assert table.iloc[0]["auc"] == pytest.approx(1.0)
    assert direction("hallucination") == -1 and direction("faithfulness") == 1
    assert signal_label("hallucination") == "RAGChecker hallucination (lower is better)"
    assert signal_label("faithfulness") == "RAGAS faithfulness"


def test_a_system_at_an_end_of_the_range_on_every_question_keeps_a_width():
    """All 20 questions at 0 (no exact match) or at -1 (truthfulness: every answer wrong): a
    percentile interval had no width; this one reaches about Clopper-Pearson's bound for 0 of
    20 (0.168 of the range, a little more), and a signal spread over its questions has an
    interval inside its values."""
    from ragdash.analysis.curves import mean_curves

    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(20)], "system": "a",
                          "em": 0.0, "truthfulness": -1.0, "f1": np.linspace(0.2, 0.8, 20)})
    means = system_means(frame, ["em", "truthfulness", "f1"]).set_index("signal")
    reach = 1 - 0.025 ** (1 / 20)
    assert (means.loc["em", "lo"], means.loc["em", "mean"]) == (0.0, 0.0)
    assert reach <= means.loc["em", "hi"] < 1.1 * reach
    assert means.loc["truthfulness", "hi"] == pytest.approx(-1 + 2 * means.loc["em", "hi"])
    assert 0.2 < means.loc["f1", "lo"] < 0.5 < means.loc["f1", "hi"] < 0.8
    assert cell(*means.loc["em", ["mean", "lo", "hi", "n"]]) == "0.000 [0.000–0.176]"
    ir = pd.DataFrame({"retriever": "bm25", "qid": np.repeat([f"q{i}" for i in range(20)], 2),
                       "budget": np.tile([100, 200], 20),
                       "score": np.tile([1.0, 1.0], 20)})
    band = mean_curves(ir).set_index("budget")
    assert band.loc[100, "hi"] == 1.0
    assert band.loc[100, "lo"] == pytest.approx(1 - reach)  # the exact bound for 20 of 20

