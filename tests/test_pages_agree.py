"""Pages that never contradict themselves, on fixture runs that provoke the hard cases: an exact tie
between the retrievers (no "best", no "significant", no largest difference to open, on the Overview,
Compare retrievers and the report), a fully labelled sample (the share correct is the share itself,
said the same on the Overview, the CLI and the report; every label wrong: test_trust_model), every
answer a refusal (no h/k estimate, no "best" on answer quality, no judge check failed by a judge
that is right), long answers in other words (no judge check failed by construction) and k at either
end of its range (no estimate on the Overview or in the report; the Thresholds page says the rule's
direction once, as its numbers show it). Across the pages of each run the share judged 5 has one
value and one name, "actual" names nothing, and "significant" only stands beside a p-value at or
under 0.05."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from fixtures.apptest import open_app
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
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.html_report import build_report
from ragdash.viz.colors import label


def _texts(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "title",
                                  "header", "subheader") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


@pytest.fixture(scope="module")
def tie_run(tmp_path_factory):
    """Two retrievers with the very same Score_IR on every question and budget."""
    run = make_run(tmp_path_factory.mktemp("tie") / "tie", n_questions=30, seed=4,
                   retrievers=("bm25", "sim"))
    ir = pd.read_parquet(run / "ir_scores.parquet")
    twin = ir[ir["retriever"] == "bm25"].assign(retriever="sim")
    pd.concat([ir[ir["retriever"] == "bm25"], twin]).to_parquet(run / "ir_scores.parquet")
    return run


def models(run):
    """The run's view, its Overview model and its Thresholds panel as the page opens
    (`ragdash.view`): what the pages show, built without a page. The view reads and keeps its
    answers where the dashboard's do (`ragdash.ui.state.view`), so a page drawn on the same
    run computes nothing twice."""
    from ragdash.rundir import Run
    from ragdash.ui import state
    from ragdash.view import thresholds as thr
    from ragdash.view.overview import overview

    view = state.view(Run(run))
    start = thr.start(view)
    return view, overview(view, name=label), thr.panel(view, start.n, start.h, start.k,
                                                       name=label)


def said_by(model) -> str:
    """Every sentence, label, value and table header a page model holds, one a line, as a page
    shows them (not the tiles' help, a tooltip; not the Thresholds panel's data and numbers,
    `data` and `result`; of an evidence dict, its verdict, the sentence the page shows)."""
    import dataclasses

    out: list[str] = []

    def walk(x) -> None:
        if isinstance(x, str):
            out.append(x)
        elif dataclasses.is_dataclass(x):
            for f in dataclasses.fields(x):
                value = getattr(x, f.name)
                if f.name in ("bias", "note") and value:  # (lead-in, the rest): one line
                    out.append(": ".join(p for p in value if p))
                elif f.name not in ("data", "result", "help"):
                    walk(value)
        elif isinstance(x, pd.DataFrame):
            out.append(" ".join(map(str, x.columns)))
        elif isinstance(x, list | tuple):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            walk(x.get("verdict"))

    walk(model)
    return "\n".join(out)


def tile(page, name: str):
    """The Overview model's tile called `name` (its prediction section's first)."""
    return next(t for t in [*page.prediction.tiles, *page.tiles] if t.label == name)


def shown(monkeypatch, run) -> None:
    """The dashboard opens on `run` (its demo) and may read its folder."""
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(run.parent))


def test_a_tie_is_a_tie_on_every_page(tie_run):
    _, ov, _ = models(tie_run)
    assert ov.title == "Run tie"
    titles = [t.label for t in ov.tiles]
    assert "Largest area over all budgets" in titles
    assert not [t for t in titles if t.startswith("Best retriever")]
    card = next(t for t in ov.tiles if t.label == "Largest area over all budgets")
    assert "≈" in card.value  # its caption under it, whole (a delta is cut short)
    assert card.caption.startswith("tie: difference +0.000")
    assert "significantly" not in said_by(ov)
    # Compare retrievers as it opens (its model: the page lays it out, test_app_pages)
    from ragdash.analysis import area
    from ragdash.view import compare_retrievers as cmp

    view = models(tie_run)[0]
    n = area.separating_budget(view.ir_scores(), "bm25", "sim")
    detail = cmp.pair(view, "bm25", "sim", n, name=label)
    big = cmp.largest(detail, "tie", n, view.budgets)
    said = " ".join([detail.title, detail.verdict, big.note,
                     *(f"{t.label} {t.value} {t.help}" for t in detail.tiles)])
    assert "significantly" not in said
    assert "Every question ties" in said and "no test: all 30 questions tie" in said
    assert big.top is None and big.top_label == ""  # no largest difference to open
    html = build_report(tie_run)
    assert "Best retriever" not in html and "best retriever" not in html
    assert "largest area over all budgets" in html


def test_a_fully_labelled_sample_gives_the_share_itself_everywhere(tmp_path, capsys,
                                                                  monkeypatch):
    src = PROJECT_ROOT / "data" / "demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    run = shutil.copytree(src, tmp_path / "demo")
    for name in ("labels.parquet", "label_sample.parquet"):
        (run / name).unlink()
    assert main(["label", "import", "--run-dir", str(run), "--from-reference", "contains",
                 "--n", "360"]) == 0
    capsys.readouterr()
    assert main(["label", "status", "--run-dir", str(run), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["pooled"]
    from ragdash.rundir import Run

    share = labels.current(Run(run))["share"]["pooled"]
    assert got["ci"] == [got["estimate"], got["estimate"]] == share["ci"]
    pct = f"{got['estimate'] * 100:.0f} %"
    # a census of these answers: the share itself, said as exact, with no interval or planner,
    # in the trust section's model (ragdash.view.trust) ...
    from ragdash.ui import widgets
    from ragdash.view import RunView, trust

    section = trust.summary(RunView(run).label_findings(), name=label, md=widgets.md)
    said = "\n".join([section.stand_in, section.headline, section.intervals, section.verdict,
                      *section.notes, *(f"{t.label} {t.value} {t.caption} {t.help}"
                                        for t in section.tiles)])
    assert section.headline.startswith(f"**{pct} of these 360 answers are correct** (every "
                                       "answer labelled: exact")
    assert "360 labels" in said  # this copy's labels, not the bundled demo's 150
    assert "interval 52–52" not in said and "within ±5 points" not in said
    assert "more) bring" not in said and "too few" not in said
    # ... which the Overview lays out: the headline, a tile per system, the notes
    shown(monkeypatch, run)
    at = open_app(run=str(run))
    assert section.headline in [m.value for m in at.markdown]
    metrics = [(m.label, m.value) for m in at.metric]
    assert section.tiles and all((t.label, t.value) in metrics for t in section.tiles)
    captions = [c.value for c in at.caption]
    assert all(c in captions for c in (section.intervals, *section.notes,
                                       *(t.caption for t in section.tiles)))
    assert f"{pct} correct" in build_report(run)


# --- every answer a refusal, long answers, k at the ends of its range ---------------------------



def _all_text(at) -> str:
    """What a page says: its texts, metric labels, values and deltas, and table headers."""
    metrics = [f"{m.label} {m.value} {m.delta or ''}" for m in at.metric]
    heads = [" ".join(map(str, d.value.columns)) for d in at.dataframe]
    return "\n".join([_texts(at), *metrics, *heads]).replace("\\", "")


def _judged5_overview(page) -> float:
    """The Overview model's share judged 5 (%)."""
    return float(tile(page, "Judged 5 (RAG answers)").value.removesuffix("%").strip())


def _judged5_llm(at) -> float:
    """The RAG answers' share judged 5 (%) from the LLM page's Table 3.3, pooled by count."""
    t = next(d.value for d in at.dataframe if {"judged", "errors"} <= set(d.value.columns))
    rag = t[t.index != "LLM only"]
    return float((rag["5"] * rag["judged"]).sum() / rag["judged"].sum() * 100)


def _judged5_report(html_: str) -> tuple[str, float, float]:
    """The report's h/k card value and its judged 5 (%), and the judged 5 row of the table
    of shares judged correct."""
    card = re.search(r'<div class="v">([^<]*) vs ([0-9.]+)%</div><div class="l">estimated '
                     r"\(h/k rule\) vs judged 5", html_)
    row = re.search(r"<td>judged 5</td>\s*<td>([0-9.]+)</td>", html_)
    assert card and row, "the report shows no share judged 5"
    return card.group(1), float(card.group(2)), float(row.group(1))


@pytest.fixture(scope="module")
def refusal_run(tmp_path_factory):
    """Every answer of every system (LLM only too) the refusal sentence, scored 1 by the rule."""
    run = make_run(tmp_path_factory.mktemp("refuse") / "refuse", n_questions=30, seed=4,
                   retrievers=("bm25", "sim"))
    return rejudge(run, lambda j: np.ones(len(j), int), lambda a, s: [REFUSAL] * len(a))


def test_all_refusals_give_no_estimate_no_best_and_no_false_alarm(refusal_run, monkeypatch,
                                                                   capsys):
    from ragdash.cli.summary import print_summary
    from ragdash.rundir import Run

    _, ov, _ = models(refusal_run)
    card = tile(ov, "Estimated by the h/k rule")
    assert (card.value, card.delta) == ("no estimate", "degenerate fit")
    said = said_by(ov)
    assert "The h/k rule gives no estimate here: Not measurable: no answer was judged correct " \
           "(5), so nothing separates correct from wrong answers here." in said
    assert ".." not in said and "estimates correct answers by" not in said
    # no estimator gives an estimate here: nothing "avoided next time" is offered
    assert not [t.label for t in ov.prediction.tiles if "avoided" in t.label]
    shown(monkeypatch, refusal_run)
    at = {p: open_app(p, run=str(refusal_run)) for p in ("thresholds", "llm", "compare")}
    # nothing is "best" on answer quality: every system's answers are the same refusal
    thr = _texts(at["thresholds"])
    assert "No order by estimated correct answers: the h/k rule gives no estimate at this k. " \
           "By the judge: BM25 = SIM." in thr
    assert "is arbitrary: with a single judge class there is nothing for k to separate" in thr
    board = next(d.value for d in at["compare"].dataframe if "order" in d.value.columns)
    assert board.set_index("signal").loc["LLM judge", "order"] == "LLM only = BM25 = SIM"
    # refusals the rule scored never reached the judge: nothing to audit, no alarm
    for page in ("thresholds", "llm"):
        assert not [w.value for w in at[page].warning if "unreliable" in w.value or
                    "agrees with the true answer" in w.value], page
    assert ":gray-badge[not applicable] **Agrees with the true answer**" in _texts(at["llm"])
    assert ":gray-badge[not applicable] **Scores vary**" in _texts(at["llm"])
    # the share judged 5: 0 % on the Overview, the LLM page and the report alike
    html_ = build_report(refusal_run)
    estimate, card5, row5 = _judged5_report(html_)
    assert _judged5_overview(ov) == _judged5_llm(at["llm"]) == card5 == row5 == 0.0
    assert estimate == "no estimate"
    assert re.search(r"<td>h/k rule</td>\s*<td>no estimate</td>", html_)
    text = report_text(html_)
    assert "% estimated vs" not in text and "0.0 (0.0–0.0)" not in text
    assert "The h/k rule gives no estimate here" in text and "est_5 and mae: no estimate" in text
    assert "best retriever" not in text.replace("best retriever over all budgets (area under "
                                                "the Score_IR curve)", "")
    assert "the scores ignore the true answer" not in text
    print_summary(Run(refusal_run))  # what `ragdash run` prints at its end
    cli = capsys.readouterr().out
    assert "Judged 5 (RAG answers): 0.0 %" in cli and "h/k rule no estimate (" in cli
    for said in (said_by(ov), *(_all_text(a) for a in at.values()), text, cli):
        one_name_checks(said)


CLOSE_WORDS = ("After the storm of {y} the harbour of Entity {i} was rebuilt: stone quays "
               "replaced the old wooden piers so that larger ships could unload grain and "
               "timber. A tax on every cargo paid the town council for the work, and for fifty "
               "years the new port made the town the main trading centre of the valley.")
@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """Gold answers of 60+ words; the answers judged 5 say them again in other words."""
    from ragdash.rundir import Run

    run = make_run(tmp_path_factory.mktemp("long") / "long", n_questions=30, seed=5,
                   retrievers=("bm25", "sim"))
    r = Run(run)
    ex = r.read("examples")
    gold = [LONG_GOLD.format(i=i, y=1850 + i) for i in range(len(ex))]
    r.write("examples", ex.assign(answer=gold, answers=[[g] for g in gold]))
    rng = np.random.default_rng(5)
    judged = r.read("judgments")["score"]
    return rejudge(run, lambda j: judged.fillna(pd.Series(rng.integers(1, 6, len(j)))),
                    lambda a, s: long_texts(OTHER_WORDS, a, s))


def test_long_answers_in_other_words_do_not_fail_the_judge_by_construction(long_run,
                                                                          monkeypatch):
    from ragdash.analysis import judge_audit as ja
    from ragdash.analysis.reference import rouge_l
    from ragdash.rundir import Run

    r = Run(long_run)
    ex, answers, judgments = r.read("examples"), r.read("answers"), r.read("judgments")
    assert ex["answer"].str.split().str.len().min() >= 40
    said5 = answers.loc[answers["answer"].str.startswith("Following"), "answer"]
    assert len(said5) > 20 and said5.str.split().str.len().min() >= 40
    assert rouge_l(said5.iloc[0], ex["answer"].iloc[0]) < 0.5  # other words: nothing matches
    check = ja.reference_match(judgments, answers, ex)
    assert check.status == "n/a" and "ROUGE-L" in check.finding
    # the same judge on answers close to the gold's words passes: the check still checks
    s = judgments.set_index(["qid", "system"])["score"]
    close = answers.assign(answer=long_texts(CLOSE_WORDS, answers, np.array(
        [s[(q, x)] for q, x in zip(answers["qid"], answers["system"], strict=True)])))
    assert ja.reference_match(judgments, close, ex).status == "ok"
    view, ov, _ = models(long_run)
    assert not [c.title for c in view.audit() if c.status == "warn"]  # no page's warning
    shown(monkeypatch, long_run)
    at = {p: open_app(p, run=str(long_run)) for p in ("thresholds", "llm", "compare")}
    for page, app in at.items():
        assert not [w.value for w in app.warning if "unreliable" in w.value], page
    assert ":orange-badge" not in _texts(at["llm"])  # no judge check fails
    html_ = build_report(long_run)
    text = report_text(html_)
    assert "the scores ignore the true answer" not in text and "too lenient" not in text
    assert "cannot check the judge here" in text
    _, card5, row5 = _judged5_report(html_)
    assert _judged5_overview(ov) == round(_judged5_llm(at["llm"]), 1) == card5 == row5
    for said in (said_by(ov), *(_all_text(a) for a in at.values()), text):
        one_name_checks(said)


def _judged_at_random(share5: float) -> Callable[[pd.DataFrame], np.ndarray]:
    """A judge that gives 5 with probability `share5` and 3 otherwise, whatever the retrieval:
    no threshold on Score_IR beats calling every answer correct (or none)."""
    return lambda j: np.where(np.random.default_rng(7).random(len(j)) < share5, 5, 3)


@pytest.fixture(scope="module", params=["k0", "k0 by hand", "k1"])
def end_k_run(request, tmp_path_factory):
    """A calibration whose k sits at an end: fitted below every Score_IR (every judged answer
    above it, as k = 0), written by hand as k = 0, and fitted at k = 1."""
    from ragdash.rundir import Run

    run = make_run(tmp_path_factory.mktemp("endk") / "endk", n_questions=30, seed=4,
                   retrievers=("bm25", "sim"))
    gold = Run(run).read("examples").set_index("qid")["answer"]

    def texts(a: pd.DataFrame, s: np.ndarray) -> list[str]:  # the gold when judged 5
        return [f"{gold[q]}." if v == 5 else "Probably a river, 1900."
                for q, v in zip(a["qid"], s, strict=True)]

    if request.param == "k0 by hand":
        d = json.loads((run / "calibration.json").read_text())
        d["k"] = 0.0
        (run / "calibration.json").write_text(json.dumps(d))
        return request.param, run
    return request.param, rejudge(run, _judged_at_random(0.85 if request.param == "k0"
                                                          else 0.1), texts)


def test_k_at_an_end_of_its_range_gives_no_estimate_and_one_direction(end_k_run, monkeypatch):
    case, run = end_k_run
    from ragdash.analysis import frames
    from ragdash.rundir import Run
    from ragdash.view import thresholds as thr_model

    k = Run(run).calibration().k
    assert (k == 1.0) if case == "k1" else k < Run(run).read("ir_scores")["score"].min()
    view, ov, fit = models(run)
    assert tile(ov, "Estimated by the h/k rule").value == "no estimate"
    head, no_estimate = ov.prediction.note
    assert not head and no_estimate.startswith("The h/k rule gives no estimate here")
    # at the fitted k the panel says what the Overview says, in its words, and gives no number
    assert fit.bias == ("", no_estimate)
    shown(monkeypatch, run)
    thr = open_app("thresholds", run=str(run))  # the page lays that panel out
    assert thr.slider(key="thr_k").value == pytest.approx(round(k, 3))
    said = _all_text(thr)
    assert no_estimate in said.split("\n")
    assert not re.search(r"estimates correct answers by|matches the judge|within noise|"
                         r"% estimated vs", said)
    if case != "k0 by hand":  # the page says why the fitted k carries no information
        assert "No k beats predicting that" in said
    # "Beyond the paper": the verdict its button gives, in the words the facts allow
    facts = view.facts(label)
    saved, told = view.cross_validate(frames.default_budget(view.budgets))
    verdict = facts.estimator_verdict or facts.cv_verdict(told, saved)
    assert verdict and not re.search(r"estimates correct answers by|matches the judge|"
                                     r"within noise|% estimated vs", verdict)
    # the sliders moved inside the scores: the rule gives a number, its direction said once
    ir = Run(run).read("ir_scores")
    at = np.unique(ir.loc[ir["budget"] == Run(run).calibration().budget, "score"].round(3))
    inside = float(at[len(at) // 2 - 1] + at[len(at) // 2]) / 2  # between two scores
    start = thr_model.start(view)
    moved = said_by(thr_model.panel(view, start.n, start.h, round(inside, 3), name=label))
    bias = [t for t in moved.split("\n") if re.search(r"estimates correct answers by|matches "
                                                       r"the judge|within noise", t)]
    assert len(bias) == 1, bias
    est, act = map(float, re.search(r"([0-9.]+) % estimated vs ([0-9.]+) % judged 5",
                                    bias[0]).groups())
    assert 0 < est < 100 and act == _judged5_overview(ov)
    assert f"Score_IR > k = {round(inside, 3):.3f}" in bias[0]
    html_ = build_report(run)
    estimate, card5, row5 = _judged5_report(html_)
    assert estimate == "no estimate" and card5 == row5 == act
    text = report_text(html_)
    assert "% estimated vs" not in text and "The h/k rule gives no estimate here" in text
    for s in (said_by(ov), said, verdict, text):
        one_name_checks(s)


# --- every Score_IR the same: nothing to rank, no estimate, no zero-width result -------------


@pytest.fixture(scope="module")
def same_ir_run(tmp_path_factory):
    """Every Score_IR exactly 1.0 (each retriever finds all the evidence at every budget), the
    calibration fitted again on them."""
    from ragdash.calibration import calibrate
    from ragdash.rundir import Run

    run = make_run(tmp_path_factory.mktemp("same") / "same", n_questions=30, seed=4,
                   retrievers=("bm25", "sim"))
    r = Run(run)
    r.write("ir_scores", r.read("ir_scores").assign(score=1.0))
    cal = calibrate(r.read("ir_scores"), r.read("judgments"), budget=1000, n_boot=50)
    r.write_json("calibration", cal.to_dict())
    return run


ZERO_WIDTH = re.compile(r"\[(-?[0-9.]+), \1\]|\((-?[0-9.]+)[–-]\2\)|CI (-?[0-9.]+)[–-]\3\b")


def test_every_score_ir_alike_is_not_measurable_and_the_rule_gives_no_estimate(same_ir_run,
                                                                              monkeypatch):
    """With every Score_IR 1.0 retrieval cannot separate anything: "not measurable", never
    "Weak: AUC 0.50 [0.50, 0.50]"; the h/k rule gives no estimate, said in the same words on
    the Overview and the Thresholds page (which shows no estimated share for it)."""
    _, ov, _ = models(same_ir_run)
    shown(monkeypatch, same_ir_run)
    thr = open_app("thresholds", run=str(same_ir_run))
    said_ov, said_thr = said_by(ov), _all_text(thr)
    for said in (said_ov, said_thr):
        assert "Weak:" not in said and "AUC 0.50" not in said
        assert not ZERO_WIDTH.search(said), ZERO_WIDTH.search(said)
    verdict = "every answer has the same Score_IR (1.00), so retrieval cannot separate"
    assert verdict in said_ov
    assert tile(ov, "Estimated by the h/k rule").value == "no estimate"
    model = tile(ov, "Estimated by a logistic model")
    assert (model.value, model.delta) == ("no estimate", "Score_IR all alike")
    assert not [t.label for t in ov.prediction.tiles if "avoided" in t.label]
    line = ov.prediction.note[1]
    assert line.startswith("The h/k rule gives no estimate here")
    assert line in said_thr.split("\n")
    assert "% estimated vs" not in said_thr and "estimates correct answers by" not in said_thr
    text = report_text(build_report(same_ir_run))
    assert "Weak:" not in text and "AUC 0.50 [0.50, 0.50]" not in text
    assert "The h/k rule gives no estimate here" in text
