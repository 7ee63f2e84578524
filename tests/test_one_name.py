"""One quantity, one name and one verdict on every page: "best" only when told apart, the
pair verdict under the Overview's policy (Holm over the budgets), Compare retrievers opening
where retrievers differ, the judge's share named "judged 5" (never "actual"), and no number
for an estimate the Overview calls degenerate."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from ragdash.analysis import area
from ragdash.constants import PROJECT_ROOT

BUDGETS = (100, 200, 300, 400, 500)


def ir_table(diff_at: dict[int, np.ndarray], n: int = 40, seed: int = 0) -> pd.DataFrame:
    """Score_IR of retrievers a and b on n questions: b = a + diff_at[budget] (0 elsewhere)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.6, n)
    rows = []
    for budget in BUDGETS:
        d = diff_at.get(budget, np.zeros(n))
        for i in range(n):
            rows += [{"qid": f"q{i}", "retriever": "a", "budget": budget, "score": base[i]},
                     {"qid": f"q{i}", "retriever": "b", "budget": budget,
                      "score": base[i] + d[i]}]
    return pd.DataFrame(rows)


def test_a_tie_is_never_crowned_best():
    title, value, caption = area.leader_card(area.headline(ir_table({})))
    assert title == "Largest area over all budgets"
    assert "≈" in value and caption.startswith("tie: difference +0.000")
    clear = area.headline(ir_table({b: np.full(40, 0.2) for b in BUDGETS}))
    title, value, caption = area.leader_card(clear)
    assert (title, value) == ("Best retriever over all budgets", "b")
    # the same lead on all 40 questions: a clear lead, still with a width (40 questions alike do
    # not prove the 41st will be)
    lo, hi = map(float, re.search(r"\+0\.200 \[([-+.\d]+), ([-+.\d]+)\] vs a", caption).groups())
    assert 0 < lo < 0.2 < hi < 0.3


def test_the_pair_verdict_uses_the_holm_adjustment_of_the_overview():
    """A difference with p < 0.05 at one budget of five is not significant after Holm."""
    rng = np.random.default_rng(2)
    diffs = {b: rng.normal(0.0, 0.1, 40) for b in BUDGETS}
    diffs[300] = rng.normal(0.045, 0.12, 40)
    ir = ir_table(diffs)
    raw = area.lead_by_budget(ir, "b", "a")
    row = raw[raw["budget"] == 300].iloc[0]
    assert row["pvalue"] < 0.05 <= row["p_holm"]  # the case the issue saw
    said = area.pair_verdict(ir, "a", "b", 300)
    assert said.startswith("No significant difference at N = 300")
    assert "Holm-adjusted over the run's 5 budgets" in said
    strong = area.pair_verdict(ir_table({300: np.full(40, 0.3)}), "a", "b", 300)
    assert strong.startswith("**b retrieves significantly more")


def test_compare_opens_where_the_retrievers_differ_most():
    ir = ir_table({200: np.full(40, 0.05), 400: np.full(40, -0.2)})
    assert area.separating_budget(ir, "a", "b") == 400
    assert area.separating_budget(ir_table({}), "a", "b") == 100  # all tie: the first


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A copy of the SQuAD demo run, read (never written) by the tests that take it: one copy,
    so what the pages' memo keeps for it serves them all."""
    src = PROJECT_ROOT / "data" / "demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    return shutil.copytree(src, tmp_path_factory.mktemp("squad") / "demo")


def view(path):
    """The run's view as the pages read it (`ragdash.ui.state.view`): the models, the report
    and the renders here share what it keeps."""
    from ragdash.rundir import Run
    from ragdash.ui import state

    return state.view(Run(path))


def test_the_judges_share_is_named_judged_5_on_the_overview_and_in_the_report(demo):
    from ragdash.html_report import build_report
    from ragdash.view.overview import overview
    from ragdash.viz.colors import label

    page = overview(view(demo), name=label)  # the Overview's tiles (it lays them out as such)
    tiles = [*page.tiles, *(page.prediction.tiles if page.prediction else [])]
    labels = [t.label for t in tiles]
    assert "Judged 5 (RAG answers)" in labels
    assert not [x for x in labels if "actual" in x.lower()]
    assert not [t.value for t in tiles if "actual" in str(t.value).lower()]
    html = build_report(demo, view(demo))
    assert "vs actual" not in html and "actual correct" not in html.lower()


def test_partly_correct_is_not_correct_for_the_signals_panel_either():
    """The signals panel's truth is the share correct's: "partly correct" is not correct."""
    from ragdash.analysis.signals import answer_signals, signal_agreement

    ref = pd.DataFrame({"qid": [f"q{i}" for i in range(8)], "system": "bm25",
                        "contains": [1.0, 0, 1, 0, 1, 0, 1, 0]})
    labels = pd.DataFrame({"qid": [f"q{i}" for i in range(8)], "system": "bm25",
                           "score": [3.0, 1, 3, 1, 3, 1, 3, 1], "labeller": "ana"})
    df, truth, signals, cut = answer_signals(ref, labels=labels)
    assert truth == "human labels" and df["truth"].max() == 0.0
    row = signal_agreement(df, signals, "truth", correct_at=cut, n_boot=50).iloc[0]
    assert np.isnan(row["auc"]) and row["verdict"].startswith("cannot tell")


def test_beyond_the_paper_never_restates_the_rule_at_another_k(demo):
    """The h/k rule's over/underestimate is said once, at the sliders' k (k = 0.3 here): on the
    page, and in the Thresholds model with the facts' verdicts below it (at k = 0 too)."""
    from fixtures.apptest import open_app

    from ragdash.view import thresholds as model
    from ragdash.viz.colors import label

    at = open_app("thresholds", run=str(demo), thr_k="0.3", thr_h="0")
    said = [c.value for c in at.caption] + [m.value for m in at.markdown]
    bias = [t for t in said if "estimates correct answers by" in t]
    assert len(bias) == 1, bias

    def sentences(k: float) -> list[str]:
        """What the Thresholds page says at (h = 0, k): the panel's captions and markdown, and
        the evidence and "Beyond the paper" verdicts of the run's facts."""
        v = view(demo)
        p = model.panel(v, model.start(v).n, 0.0, k, name=label)
        facts = v.facts(label)
        ev = facts.evidence or {}
        return [p.basis or "", p.fit, ": ".join(x for x in p.bias or () if x), p.order or "",
                *p.confusion, facts.estimator_verdict, ev.get("verdict", ""),
                ev.get("refusal_verdict", "")]

    assert len([t for t in sentences(0.3) if "estimates correct answers by" in t]) == 1
    # at k = 0 the rule gives no estimate, said once, with no share beside it (issue 49)
    said = sentences(0.0)
    assert [t for t in said if t.startswith("The h/k rule gives no estimate here: k = 0.000 "
                                            "sits at the end of its range")] != []
    assert not [t for t in said if "estimates correct answers by" in t or "% estimated vs" in t]


def test_the_judge_audit_matches_long_answers_by_rouge_not_containment():
    """Long true answers in people's words are never contained in an answer: a judge that reads
    the answers passes, the check names the metric it used."""
    from ragdash.analysis import judge_audit as ja

    n = 30
    gold = [f"The river rises in the northern hills and flows {i} miles to the sea" for i in
            range(n)]
    examples = pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "answer": gold})
    rows, scores = [], []
    for i in range(n):
        good = i % 2 == 0
        text = (f"It rises in the northern hills and flows {i} miles to the sea." if good
                else "It is a mountain in Asia known for its snow.")
        rows.append({"qid": f"q{i}", "system": "bm25", "budget": 1000, "answer": text})
        scores.append(5 if good else 1)
    answers = pd.DataFrame(rows).astype({"budget": "Int64"})
    judged = answers[["qid", "system", "budget"]].assign(
        score=pd.array(scores, dtype="Int64"), position=pd.array([None] * n, dtype="Int64"))
    check = ja.reference_match(judged, answers, examples)
    assert check.status == "ok" and check.value > 0.9
    assert "ROUGE-L" in check.finding


def test_the_report_leads_with_the_labelled_share_and_shows_no_server_path(demo):
    from ragdash.html_report import build_report

    html = build_report(demo, view(demo))
    start = html.index('<div class="cards">')
    cards = html[start:html.index("<h2>", start)]
    assert "% correct" in cards and "labelled" in cards and "150 stand-in labels" in cards
    assert "not people" in cards  # the demo's labels are a reference metric's, said so
    manifest = html[html.index("<h2>Run manifest</h2>"):]
    assert str(PROJECT_ROOT) not in manifest and "/tmp/" not in manifest


@pytest.mark.parametrize("header", ["Ticket", "Ticket No", "Case", "UUID", "Record"])
def test_an_id_column_named_like_a_ticket_is_guessed(header):
    from ragdash.data.columns import guess

    assert guess([header, "Question", "Answer"]) == {"question": "Question", "answer": "Answer",
                                                      "id": header}


def test_piped_cli_progress_is_plain_lines_not_bars(capsys):
    from ragdash.cli.progress import Bars

    with Bars(quiet=False) as bars:  # pytest's captured stderr is not a terminal
        for done in range(0, 101):
            bars("scoring: budgets", done, 100)
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b[" not in err
    lines = err.splitlines()
    assert lines[0] == "scoring: budgets: 0 of 100" and lines[-1] == "scoring: budgets: 100 of 100"
    assert len(lines) == 11  # each tenth once


def test_a_stage_count_without_a_value_is_left_out_not_none():
    from ragdash.rundir.records import _counts_text

    assert _counts_text({"examples": 60, "scores": None, "parts": {"a": 1}, "mae": 0.12345}) \
        == "examples: 60, mae: 0.123"


# --- issue 49: the judge's two shares, the label planner, display names ------------------------


def test_the_judges_share_over_every_answer_is_named_apart_from_the_rag_answers():
    """"The judge alone" over every answer (LLM only included) and "Judged 5 (RAG answers)" are
    two quantities: the sentence names its answers, so the two never read as one."""
    from ragdash.labels import headline

    entry = {"estimate": 0.40, "ci": [0.30, 0.50], "labels": 60, "answers": 60, "method": "m",
             "reason": "", "bounds": None, "to_target": 190}
    system = {"estimate": None, "ci": None, "labels": 30, "answers": 30, "method": "m"}
    share = {"estimand": "these answers", "estimand_text": "t", "level": 0.95, "pooled": entry,
             "systems": {"llm_only": system, "bm25": system}, "cannot_tell": 0,
             "judge": {"pooled": 0.38}}
    said = headline.sentences(share, {"outside_sample": 0, "stale": 0})[1]
    assert said.startswith("The judge alone gives 5 to 38 % of these 60 answers (LLM-only "
                           "answers included): 2 points below")
    rag = headline.sentences(share | {"systems": {"bm25": system}},
                             {"outside_sample": 0, "stale": 0})[1]
    assert rag.startswith("The judge alone gives 5 to 38 % of these 60 answers: ")


def test_a_systems_label_need_is_never_below_the_labels_its_interval_needs():
    """"≈15 for ±10" beside intervals shown only from 20 labels was a promise the page broke:
    the need said is at least MIN_SYSTEM_LABELS, and a system of fewer answers is promised no
    interval (all 12 labelled still gave none)."""
    from ragdash.calibration.survey import MIN_SYSTEM_LABELS
    from ragdash.labels import headline

    def system(labels: int, need: int, answers: int = 60) -> dict:
        return {"estimate": 0.5, "ci": None, "labels": labels, "answers": answers,
                "to_target": need, "target": 10.0}

    share = {"pooled": {"ci": None, "reason": "no interval yet", "labels": 12},
             "systems": {"llm_only": system(10, 15), "bm25": system(1, 150),
                         "sim": system(5, 9, answers=12)}}
    line = headline.intervals_now(share, name=str.upper)
    assert f"LLM_ONLY: 10 labels (≈{MIN_SYSTEM_LABELS} for ±10)" in line
    assert "BM25: 1 label (≈60 for ±10)" in line  # never more than its 60 answers
    # a system of 12 answers: labelling all 12 gives no interval, so none is promised
    assert f"SIM: 5 labels (12 answers: no interval below {MIN_SYSTEM_LABELS} labels)" in line


def test_the_reports_share_table_names_systems_as_every_page_does(tmp_path, monkeypatch):
    """No raw `llm_only`, `bm25`, `sim` in the report's share table, no config key on the
    stakeholder pages' share section, and counts said in the singular when there is one."""
    from fixtures.apptest import open_app
    from fixtures.make_run import make_run

    from ragdash import labels
    from ragdash.html_report import build_report
    from ragdash.labels import store
    from ragdash.rundir import Run

    run = Run(make_run(tmp_path / "named", n_questions=20, seed=2, retrievers=("bm25", "sim")))
    store.draw_sample(run, 12)
    for i, item in enumerate(store.sample_items(run)):
        store.add_label(run, item.qid, item.system, "correct" if i % 2 else "wrong", "ana")
    labels.refresh(run)
    html = build_report(run.path, view(run.path))  # the pages below share what it computed
    shares = html[html.index("<h2>Share correct, checked against labels</h2>"):]
    shares = shares[:shares.index("</table>")]
    assert "<td>LLM only</td>" in shares and "<td>BM25</td>" in shares
    assert not re.search(r"<td>(llm_only|bm25|sim)</td>", shares)
    assert "issue(s)" not in html and re.search(r"\b2 issues:", html)
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run.path))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    for page in (None, "llm"):
        at = open_app(page, run=str(run.path))
        said = "\n".join(str(c.value) for c in [*at.caption, *at.markdown])
        assert "calibration.estimand" not in said and "issue(s)" not in said, page
        assert not re.search(r"\b1 (answers|labels|questions|issues)\b", said), page


def test_the_label_page_suggests_no_answer(tmp_path, monkeypatch):
    """The four label buttons look alike: none is the highlighted primary one."""
    from fixtures.apptest import open_app
    from fixtures.make_run import make_run

    from ragdash.labels import store
    from ragdash.rundir import Run

    run = Run(make_run(tmp_path / "nudge", n_questions=12, seed=2, retrievers=("bm25",)))
    store.draw_sample(run, 6)
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run.path))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    at = open_app("label", run=str(run.path), lb_name="ana")
    kinds = {at.button(key=f"lb_{k}").proto.type for k in "1234"}
    assert kinds == {"secondary"}, kinds
