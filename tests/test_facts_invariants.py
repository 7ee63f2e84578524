"""One set of facts per run, checked as invariants (issue 49): on fixture runs that provoke the
hard cases (every Score_IR 1.0, the h/k rule's k at 0 and at 1, every answer a refusal, every
label wrong, a fully labelled sample, long answers in other words, an exact tie between the
retrievers, labels written while the pages are open), every surface — the Overview, the
Thresholds panel and Compare retrievers through their models, the trust section's sentences,
the HTML report and the CLI summary — states each quantity with one value, no verdict that the
numbers beside it contradict, no zero-width interval as a result, and no raw identifier or
server path.

The runs are one synthetic run (no LLM) copied and edited per case, so the whole file stays
well under a minute."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.make_run import make_run
from fixtures.page_cases import (
    LONG_GOLD,
    OTHER_WORDS,
    REFUSAL,
    long_texts,
    one_name_checks,
    rejudge,
    report_text,
)

from ragdash import labels
from ragdash.html_report import _labels_html, build_report
from ragdash.labels import headline
from ragdash.labels.store import draw_sample, label_row, labelable, save_labels
from ragdash.rundir import Memo, Run
from ragdash.view import RunView
from ragdash.view import compare_retrievers as cmp_model
from ragdash.view import thresholds as thr_model
from ragdash.view.facts import HK, NO_ESTIMATE
from ragdash.view.overview import overview
from ragdash.viz.colors import label

CASES = ("tie", "same_ir", "k0", "k1", "refusals", "labels_wrong", "fully_labelled", "long")
ZERO_WIDTH = re.compile(r"\[([-+−]?[0-9.]+), \1\]|\(([-+−]?[0-9.]+)[–-]\2\)|CI ([-+−]?[0-9.]+)"
                        r"[–-]\3\b|(?<![-+−0-9.])([-+−]?[0-9.]+) to \4\b|(?<![-+−0-9.])([0-9.]+)–"
                        r"\5 ?%")
"""An interval whose two ends are one number ([0.50, 0.50], (0.0–0.0), CI 1.000–1.000, +0.000
to +0.000, 52.5–52.5 %)."""
RAW = re.compile(r"\b(llm_only|bm25|sim)\b")
CONTRADICTED_BY_A_CONSTANT = re.compile(r"\bWeak\b|\bweak\b|AUC 0\.50\b|0\.500 \(|"
                                        r"overestimates|underestimates|MAE\)? [0-9]|is best")
NO_RULE_ESTIMATE = re.compile(r"estimates correct answers by|matches the judge|within noise of "
                              r"the judge|% estimated vs")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A small run (20 questions, BM25 and SIM, three budgets) with answers and judgments."""
    run = make_run(tmp_path_factory.mktemp("facts") / "base", n_questions=20, seed=4,
                   retrievers=("bm25", "sim"), budgets=(200, 500, 1000))
    manifest = json.loads((run / "run.json").read_text())
    manifest["config"]["generation"] = {"budget": 1000}  # where the answers' Score_IR is read
    (run / "run.json").write_text(json.dumps(manifest))
    _calibrated(run)
    return run


def _calibrate_again(run: Path) -> None:
    from ragdash.calibration import calibrate

    r = Run(run)
    cal = calibrate(r.read("ir_scores"), r.read("judgments"), budget=1000, n_boot=50)
    r.write_json("calibration", cal.to_dict())


def _k_by_hand(run: Path, k: float) -> None:
    d = json.loads((run / "calibration.json").read_text())
    d["k"] = k
    (run / "calibration.json").write_text(json.dumps(d))


def _label_every_answer(run: Path, verdict) -> None:
    """A sample of every labelable answer, each labelled `verdict(qid, system)`."""
    r = Run(run)
    items = labelable(r)
    draw_sample(r, len(items))
    save_labels(r, [label_row(q, s, verdict(q, s), "ana", "", sha) for q, s, sha in
                    zip(items["qid"], items["system"], items["answer_sha"], strict=True)])
    labels.refresh(r)


def _calibrated(run: Path) -> None:
    """calibration.json's label sections worked out, as the calibrate stage leaves them."""
    assert labels.refresh(Run(run))


def _make_case(case: str, base: Path, where: Path) -> Path:
    run = shutil.copytree(base, where / case)
    r = Run(run)
    if case == "tie":  # SIM scores exactly what BM25 scores, everywhere
        ir = r.read("ir_scores")
        bm25 = ir[ir["retriever"] == "bm25"]
        r.write("ir_scores", pd.concat([bm25, bm25.assign(retriever="sim")]))
    elif case == "same_ir":
        r.write("ir_scores", r.read("ir_scores").assign(score=1.0))
        _calibrate_again(run)
    elif case in ("k0", "k1"):
        _k_by_hand(run, 0.0 if case == "k0" else 1.0)
    elif case == "refusals":
        rejudge(run, lambda j: np.ones(len(j), int), lambda a, s: [REFUSAL] * len(a))
    elif case == "labels_wrong":
        _label_every_answer(run, lambda q, s: "wrong")
    elif case == "fully_labelled":
        judged = r.read("judgments").set_index(["qid", "system"])["score"]
        _label_every_answer(run, lambda q, s: "correct" if judged.get((q, s)) == 5 else "wrong")
    elif case == "long":
        ex = r.read("examples")
        gold = [LONG_GOLD.format(i=i, y=1850 + i) for i in range(len(ex))]
        r.write("examples", ex.assign(answer=gold, answers=[[g] for g in gold]))
        judged = r.read("judgments")["score"]
        rejudge(run, lambda j: judged.fillna(3).to_numpy(int),
                 lambda a, s: long_texts(OTHER_WORDS, a, s))
    if case in ("same_ir", "refusals", "long"):
        _calibrated(run)
    return run


@pytest.fixture(scope="module")
def cases(base, tmp_path_factory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("cases")
    return {c: _make_case(c, base, where) for c in CASES}


def _tile_texts(tiles) -> list[str]:
    return [" ".join(str(x) for x in (t.label, t.value, t.delta, t.caption) if x)
            for t in tiles]


def surfaces(run: Path) -> tuple[dict[str, str], RunView]:
    """What each surface of `run` says, as plain text: the Overview (its model), the Thresholds
    panel where it opens, Compare retrievers at that N, the report and the CLI summary, and
    apart from them the labels' sections of all three (the trust section's sentences, the
    report's and the CLI's "Is the judge right?" and share tables: `labels`); and the
    dashboard's view (a memo, as `ui.state.view`)."""
    from ragdash.cli.summary import print_summary

    view = RunView(run, memo=Memo())
    ov = overview(view, name=label)
    said = [ov.title, *_tile_texts(ov.tiles), ov.curve_sentences]
    if (p := ov.prediction) is not None:
        said += [p.title, p.basis or "", (p.verdict or {}).get("verdict", ""),
                 *_tile_texts(p.tiles), " ".join(p.note or ())]
    trust = []
    found = view.label_findings()
    if found and found["labels"]["n"]:
        lab = found["labels"]
        trust += headline.sentences(found["share"], lab, (lab.get("sample") or {}).get("rule"))
    start = thr_model.start(view)
    panel = thr_model.panel(view, start.n, start.h, start.k, name=label)
    thr = [panel.basis or "", panel.fit, *panel.diagnosis, *_tile_texts(panel.tiles),
           " ".join(panel.bias or ()), panel.order or "", *panel.confusion,
           view.facts(label).estimator_verdict]
    pair = cmp_model.pair(view, "bm25", "sim", start.n, name=label)
    cmp = [pair.title, *_tile_texts(pair.tiles), pair.verdict]
    html_ = build_report(run, view)  # the report states the facts the pages were given
    html_ = html_[:html_.index("<h2>Run manifest</h2>")]
    labelled = "\n".join(p for p in _labels_html(view) if p)
    card = re.search(r'<div class="card"><div class="v">[^<]* correct</div>.*?</div></div>',
                     html_)
    trust += [report_text(labelled), card.group(0) if card else ""]
    html_ = html_.replace(labelled, "").replace(card.group(0) if card else "\0", "")
    report = " ".join(report_text(html_).split())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_summary(Run(run))
    cli = re.split(r"\nInput issues:|\nRun directory:", out.getvalue())[0]  # local paths
    cli, _, cli_trust = cli.partition("\nIs the judge right?")
    return ({"overview": "\n".join(said), "thresholds": "\n".join(thr),
             "compare": "\n".join(cmp), "report": report, "cli": cli,
             "labels": " ".join("\n".join(trust).split()), "cli_labels": cli_trust}, view)


@pytest.fixture(scope="module")
def said(cases) -> dict[str, tuple[dict[str, str], RunView]]:
    return {c: surfaces(run) for c, run in cases.items()}


@pytest.mark.parametrize("case", CASES)
def test_one_value_per_quantity(case, said):
    texts, view = said[case]
    f = view.facts(label)
    ov, report, cli = texts["overview"], texts["report"], texts["cli"]
    # the leader: the Overview's card and the report's, one title and one value
    assert f.leader is not None
    assert f"{f.leader.title} {f.leader.value} {f.leader.caption}" in ov
    assert f"{f.leader.value} {f.leader.title.lower()}" in report
    # the share judged 5 and the h/k rule's estimate (or its absence), the same everywhere
    j5 = f.judged5.pct
    assert f"Judged 5 (RAG answers) {j5:.1f} %" in ov
    assert f"Judged 5 (RAG answers): {j5:.1f} %" in cli
    hk = f.estimate(HK)
    card = re.search(r"(no estimate|[0-9.]+%) vs ([0-9.]+)% estimated \(h/k rule\) vs judged 5",
                     report)
    assert card and float(card.group(2)) == round(j5, 1), card
    row = re.search(r"share judged 5 % 95 % CI judged 5 ([0-9.]+) \S+ h/k rule "
                    r"(no estimate|[0-9.]+)", report)
    assert row and float(row.group(1)) == round(j5, 1)
    if hk.share is None:
        assert card.group(1) == row.group(2) == NO_ESTIMATE
        assert f"Estimated by the h/k rule no estimate {hk.short}" in ov
        assert f"h/k rule no estimate ({hk.reason})" in cli
        # the Thresholds panel at the fit says the Overview's sentence, and shows no share
        assert hk.sentence in texts["thresholds"] and hk.sentence in ov and hk.sentence in report
        for where in ("overview", "thresholds", "report", "cli"):
            assert not NO_RULE_ESTIMATE.search(texts[where]), (where, NO_RULE_ESTIMATE.search(
                texts[where]))
        assert "Share error (MAE) no estimate" in texts["thresholds"]
    else:
        assert card.group(1) == f"{hk.share.pct:.1f}%" and row.group(2) == f"{hk.share.pct:.1f}"
        assert f"Estimated by the h/k rule {hk.share.pct:.1f} %" in ov
        assert f"h/k rule {hk.share.pct:.1f} %" in cli
        assert f"{hk.share.pct:.1f} % estimated vs {j5:.1f} % judged 5" in texts["thresholds"]
    # people's labels: one share correct on the Overview, in the report and in its card
    found = view.label_findings()
    pooled = (found or {}).get("share", {}).get("pooled", {})
    if pooled.get("ci"):
        pct = f"{pooled['estimate'] * 100:.0f} %"
        about = "" if pooled["ci"][1] - pooled["ci"][0] < 1e-9 else "About "  # a census: exact
        assert f"**{about}{pct} of" in texts["labels"] and f"{pct} correct" in texts["labels"]


@pytest.mark.parametrize("case", ["k0", "refusals", "labels_wrong", "fully_labelled"])
def test_the_labels_sections_show_no_zero_width_interval(case, said):
    """The judge's agreement with a reference it matches on every answer is '100 % [82, 100]'
    (the interval of a share over questions), never '100 % [100, 100]'; a census of these
    answers (every one labelled) is their share, 'every answer labelled: exact', never
    '95% interval 44–44 %'; an estimator's cell of values all alike is its estimate with a
    note, never '0.0 [0.0, 0.0]'."""
    texts, _ = said[case]
    for where in ("labels", "cli_labels"):
        assert not ZERO_WIDTH.search(texts[where]), (where, ZERO_WIDTH.search(texts[where]))
    if case in ("labels_wrong", "fully_labelled"):  # every answer labelled
        assert "every answer labelled: exact" in texts["labels"]


@pytest.mark.parametrize("case", CASES)
def test_no_verdict_the_numbers_contradict(case, said):
    texts, view = said[case]
    f = view.facts(label)
    for where, text in texts.items():
        one_name_checks(text)  # "significant" only beside p ≤ 0.05; "actual" names nothing
        if not f.leader.title.startswith("Best"):  # a tie is crowned nowhere
            assert "best retriever" not in text.lower().replace(
                "best retriever over all budgets (area", ""), where
        if f.blind:  # every Score_IR alike: no AUC, no 'weak', no estimator ranked
            assert not CONTRADICTED_BY_A_CONSTANT.search(text), (
                where, CONTRADICTED_BY_A_CONSTANT.search(text))
            assert "not measurable" in text.lower() or where in ("compare", "labels",
                                                                 "cli_labels"), where


@pytest.mark.parametrize("case", CASES)
def test_no_zero_width_interval_no_raw_name_no_path(case, said, cases, base):
    texts, _ = said[case]
    for where, text in texts.items():
        if where not in ("labels", "cli_labels"):  # the labels' sections: the test below
            assert not ZERO_WIDTH.search(text), (where, ZERO_WIDTH.search(text))
        if where not in ("cli", "cli_labels"):  # the CLI speaks the config's names
            assert not RAW.search(text), (where, RAW.search(text), text[max(
                0, RAW.search(text).start() - 80):RAW.search(text).end() + 80])
        assert str(cases[case]) not in text and str(base) not in text, where


def test_a_tie_shows_no_interval_beside_every_question_ties(said):
    texts, view = said["tie"]
    f = view.facts(label)
    assert f.leader.title == "Largest area over all budgets"
    assert f.leader.caption == "tie: difference +0.000, every question ties at every budget"
    assert "score the same on every question at every budget" in texts["overview"]
    for where in ("overview", "report"):
        tie = [s for s in texts[where].split(". ") if "every question" in s]
        assert tie and not [s for s in tie if "CI" in s or "[" in s], (where, tie)
    assert "no test: all 20 questions tie" in texts["compare"]
    diff = view.difference("bm25", "sim")  # Compare retrievers' curve: no band on a tie
    assert (diff["mean"] == 0).all() and diff["lo"].isna().all() and diff["hi"].isna().all()


def test_every_score_ir_alike_has_no_auc_and_bands_that_hold_the_scores(said, cases):
    from ragdash.analysis.signals import answer_signals  # noqa: F401  (the report's table)

    texts, view = said["same_ir"]
    assert "0.500 (" not in texts["report"]
    agreement = view.signal_agreement()[0].set_index("signal")
    assert np.isnan(agreement.loc["score_ir", "auc"])
    assert agreement.loc["score_ir", "verdict"].startswith("not measurable: every answer has "
                                                           "the same value (1.00)")
    bands = view.bands()
    # 20 questions all at 1.0: the exact bound (0.025 ** (1 / 20) = 0.832), never zero width
    assert (bands["hi"] == 1.0).all()
    assert np.allclose(bands["lo"], 0.025 ** (1 / 20), atol=1e-6)
    assert f"{view.facts(label).estimator_verdict}".startswith("Not measurable") or \
        not view.facts(label).estimator_verdict


def test_the_thresholds_chart_shows_no_share_where_the_rule_gives_no_estimate(said):
    from ragdash.viz import calibration

    _, view = said["k0"]
    start = thr_model.start(view)
    assert start.k == 0.0
    panel = thr_model.panel(view, start.n, start.h, start.k, name=label)
    assert panel.no_estimate and panel.result["estimated"]["est_5"].isna().all()
    fig = calibration.threshold_curves(panel.data, panel.result["estimated"], start.h, start.k)
    notes = [a.text for a in fig.layout.annotations if a.name == "share:5"]
    assert notes and all(n.startswith("<b>no estimate</b>") for n in notes), notes
    assert not [n for n in notes if "100.0%" in n]
    assert not {"est. correct", "MAE (pp)"} & set(panel.table.columns)  # left out, not "None"
    assert "judged 5" in panel.table.columns


def test_labels_written_while_the_pages_are_open_reach_every_fact(cases, tmp_path):
    """The dashboard's kept view before and after labels are written: the new share on the
    Overview's sentences and in the report alike, with no restart (a fresh view agrees)."""
    run = shutil.copytree(cases["k0"], tmp_path / "live")
    r = Run(run)
    items = labelable(r)
    draw_sample(r, len(items))
    memo = Memo()
    before = RunView(run, memo=memo).label_findings()
    assert before["labels"]["n"] == 0
    save_labels(r, [label_row(q, s, "correct" if i % 3 else "wrong", "ana", "", sha)
                    for i, (q, s, sha) in enumerate(zip(
                        items["qid"], items["system"], items["answer_sha"], strict=True))])
    kept = RunView(run, memo=memo).label_findings()
    fresh = RunView(run).label_findings()
    assert kept["labels"]["n"] == fresh["labels"]["n"] == len(items)
    assert kept["share"]["pooled"] == fresh["share"]["pooled"]
    pct = f"{kept['share']['pooled']['estimate'] * 100:.0f} %"
    assert f"{pct} correct" in report_text(build_report(run))


def test_the_llm_pages_figures_keep_their_words_whole():
    """"all systems" was cut to "ll systems" by the estimators chart's left margin, and the
    judge scores' legend lay on its axis title."""
    from ragdash.viz import llm as llm_viz
    from ragdash.viz import trust as trust_viz

    entry = {"pct": 40.0, "ci": [30.0, 50.0], "n_labelled": 12}
    ppi = {s: {k: entry for k in ("labels_only", "judge_only", "ppi_judge", "ppi_retrieval")}
           for s in ("llm_only", "bm25", "pooled")}
    fig = trust_viz.intervals(ppi)
    assert list(fig.layout.yaxis.ticktext) == ["LLM only", "BM25", "all systems"]
    assert fig.layout.margin.l >= 8 * len("all systems")  # about 7 px a character at 13 px
    dist = pd.DataFrame([{"system": s, "score": k, "count": 1, "share": 0.2, "n_valid": 5,
                          "n_errors": 0} for s in ("llm_only", "bm25", "sim")
                         for k in range(1, 6)])
    fig = llm_viz.judge_stacked(dist, ["llm_only", "bm25", "sim"])
    plot = fig.layout.height - (fig.layout.margin.t or 70) - fig.layout.margin.b
    assert fig.layout.legend.yanchor == "top" and fig.layout.legend.y * plot <= -55


def test_the_thresholds_page_draws_no_error_bar_for_a_rule_that_gives_no_estimate(
        cases, tmp_path, monkeypatch):
    """At a degenerate fit (k = 0) the Thresholds page's cross-validation chart has the other
    estimators' bars and none of the h/k rule, whose verdict says it gives no estimate."""
    from fixtures.apptest import open_app

    from ragdash.calibration.model import LOGIT_IR

    run = shutil.copytree(cases["k0"], tmp_path / "cv")
    rows = [{"scheme": "held-out questions", "fold": f, "method": m, "retriever": r, "n": 4,
             "mae": 10.0 + f} for f in range(3) for m in (HK, LOGIT_IR) for r in ("bm25", "sim")]
    Run(run).write("estimator_cv", pd.DataFrame(rows))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run))
    at = open_app("thresholds")
    specs = [json.dumps(json.loads(c.proto.spec), ensure_ascii=False)
             for c in at.get("plotly_chart")]  # "h\u002fk rule" read back as "h/k rule"
    bars = [s for s in specs if LOGIT_IR in s]
    assert len(bars) == 1 and HK not in bars[0]
