"""Human labels: the sample, labels.parquet (several labellers at once), CSV export and import
with located errors, stand-in labels, the judge's agreement (kappa on hand fixtures), and the
labels, agreement and ppi sections in calibration.json, the CLI and the HTML report. Every run
written is a copy of the SQuAD demo in tmp_path."""

from __future__ import annotations

import multiprocessing
import shutil

import numpy as np
import pandas as pd
import pytest

from ragdash import labels
from ragdash.calibration import agreement as A
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.run_spec import run_spec
from ragdash.rundir import Run

DEMO = PROJECT_ROOT / "data" / "demo_squad"


@pytest.fixture
def run(tmp_path) -> Run:
    if not (DEMO / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    copy = Run(shutil.copytree(DEMO, tmp_path / "demo"))
    for name in ("labels", "label_sample"):  # the demo's stand-in set: start unlabelled
        copy.file(name).unlink(missing_ok=True)
    return copy


def test_the_demo_ships_stand_in_labels_named_as_such():
    from ragdash.labels import read_labels, read_sample

    demo = read_labels(Run(DEMO))
    assert len(demo) == 150 and set(demo["labeller"]) == {"stand-in: contains a gold answer"}
    assert set(read_sample(Run(DEMO))["rule"]) == {"judge"}  # the default draw


def first_answer(run: Run) -> tuple[str, str]:
    a = labels.labelable(run).iloc[0]
    return a["qid"], a["system"]


# --- agreement on hand fixtures -------------------------------------------------------------

def test_kappa_on_a_hand_fixture():
    # 50 answers: 20 both yes, 15 both no, 5 yes/no, 10 no/yes: po = 0.7, pe = 0.5, κ = 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert A.kappa(a, b, labels=[0, 1]) == pytest.approx(0.4)
    # quadratic weights on 3 ordered levels: one step apart counts 1, two steps 4
    x, y = [1, 1, 3, 5, 5, 5], [1, 3, 3, 5, 5, 1]
    # observed Σw·O = (1 + 4) / 6; expected from the margins (x: 2,1,3; y: 2,2,2) / 6
    expected = sum(((i - j) ** 2) * mx * my for i, mx in enumerate((2, 1, 3))
                   for j, my in enumerate((2, 2, 2))) / 36
    assert A.kappa(x, y, labels=[1, 3, 5], weights="quadratic") == pytest.approx(
        1 - (5 / 6) / expected)
    assert A.kappa([1, 1], [1, 1], labels=[0, 1]) is None  # undefined: one class only


def test_kappa_matches_scikit_learn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    for w in (None, "quadratic"):
        assert A.kappa(a, b, labels=[0, 1, 2], weights=w) == pytest.approx(
            cohen_kappa_score(a, b, weights=w))


def test_judge_vs_labels_counts_the_disagreements_and_says_which_way():
    table = pd.DataFrame({
        "qid": ["q1", "q2", "q3", "q4", "q5", "q6"], "system": "bm25",
        "label": ["correct", "correct", "wrong", "wrong", "partly correct", "wrong"],
        "judge": [5, 5, 5, 5, 3, 1]})
    out = A.judge_vs_labels(table, n_boot=50)
    assert out["n"] == 6 and out["accuracy"]["value"] == pytest.approx(4 / 6, abs=1e-4)
    assert out["disagreements"] == {"n": 2, "lenient": 2, "strict": 0}
    assert out["confusion"]["counts"] == [[0, 0, 0, 0, 2], [0, 0, 1, 0, 0], [1, 0, 0, 0, 2]]
    # on the labels' scale the judge's 3 is "partly correct", its 1 "wrong"
    assert out["weighted_kappa"]["value"] == pytest.approx(A.kappa(
        [5, 5, 1, 1, 3, 1], [5, 5, 5, 5, 3, 1], labels=[1, 3, 5], weights="quadratic"),
        abs=1e-4)
    line = A.verdict({"labels": out})
    assert line.startswith("The judge agrees with your labels on 67 %")
    assert "too lenient: 2 of 2 disagreements are answers judged 5" in line
    assert "stand-in labels (contains a gold answer; not human)" in A.verdict(
        {"labels": out}, stand_in="contains a gold answer")


def test_inter_annotator_kappa_on_shared_answers():
    rows = [("q1", "correct", "correct"), ("q2", "wrong", "wrong"), ("q3", "correct", "wrong"),
            ("q4", "partly correct", "partly correct")]
    table = pd.DataFrame([(q, "bm25", lab, who) for q, a, b in rows
                          for lab, who in ((a, "ana"), (b, "bo"))],
                         columns=["qid", "system", "label", "labeller"])
    table = pd.concat([table, pd.DataFrame([("q9", "bm25", "wrong", "ana")],
                                           columns=table.columns)])  # only ana: not a pair
    [pair] = A.inter_annotator(table)
    assert pair["labellers"] == ["ana", "bo"] and pair["n"] == 4
    assert pair["agreement"] == 0.75
    assert pair["kappa"] == pytest.approx(A.kappa([r[1] for r in rows], [r[2] for r in rows],
                                                  labels=list(A.LABEL_ROWS)), abs=1e-4)


# --- labels on disk ----------------------------------------------------------------------------

def test_add_replace_and_undo_labels(run):
    qid, system = first_answer(run)
    row = labels.add_label(run, qid, system, " Correct ", "ana", "clear")
    assert row["label"] == "correct" and row["score"] == 5.0
    labels.add_label(run, qid, system, "wrong", "ana")  # ana changes her mind: replaced
    labels.add_label(run, qid, system, "cannot tell", "bo")
    got = labels.read_labels(run).set_index("labeller")
    assert len(got) == 2 and got.loc["ana", "label"] == "wrong"
    assert np.isnan(got.loc["bo", "score"])  # cannot tell: no score
    assert labels.undo_last(run, "ana")["label"] == "wrong"
    assert labels.read_labels(run)["labeller"].tolist() == ["bo"]
    assert labels.undo_last(run, "ana") is None


@pytest.mark.parametrize(("args", "message"), [
    (("nope", "bm25", "correct", "ana"), "unknown qid 'nope'"),
    ((None, "bm99", "correct", "ana"), "unknown system 'bm99'"),
    ((None, None, "yes", "ana"), "label 'yes' is not one of 'correct', 'partly correct'"),
    ((None, None, "correct", "  "), "give the labeller's name"),
    ((None, None, "correct", "x" * 101), "over the limit of 100"),
])
def test_add_label_refuses_bad_input_saying_where(run, args, message):
    qid, system = first_answer(run)
    qid_, system_, label, labeller = args
    with pytest.raises(ValueError, match="label of qid") as info:
        labels.add_label(run, qid_ or qid, system_ or system, label, labeller)
    assert message in str(info.value)
    assert not run.has("labels")  # nothing written


def _label_many(path: str, labeller: str, pairs: list[tuple[str, str]]) -> None:
    r = Run(path)
    for qid, system in pairs:
        labels.add_label(r, qid, system, "correct", labeller)


def test_several_labellers_writing_at_once_lose_nothing(run):
    pairs = [tuple(p) for p in labels.labelable(run)[["qid", "system"]].head(8).to_numpy()]
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_label_many, args=(str(run.path), f"l{i}", pairs))
             for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    got = labels.read_labels(run)
    assert len(got) == 24 and got.groupby("labeller").size().tolist() == [8, 8, 8]


def test_a_label_of_an_answer_generated_again_is_stale(run):
    qid, system = first_answer(run)
    labels.add_label(run, qid, system, "correct", "ana")
    answers = run.read("answers")
    hit = (answers["qid"].astype(str) == qid) & (answers["system"] == system)
    run.write("answers", answers.assign(answer=answers["answer"].where(~hit, "a new answer")))
    current, stale = labels.current_labels(run)
    assert current.empty and stale == 1
    assert labels.evaluate(run)["labels"]["stale"] == 1


# --- the sample -------------------------------------------------------------------------------

def test_the_sample_is_drawn_once_extended_in_order_and_resumed(run):
    first = labels.draw_sample(run, 10, "uniform", seed=4)
    assert first["position"].tolist() == list(range(1, 11))
    again = Run(run.path)  # another session, days later
    assert labels.read_sample(again)[["qid", "system"]].equals(first[["qid", "system"]])
    more = labels.draw_sample(again, 25, "uniform", seed=4)
    assert len(more) == 25 and more.head(10)[["qid", "system"]].equals(first[["qid", "system"]])
    assert not more.duplicated(["qid", "system"]).any()
    assert len(labels.draw_sample(again, 5, "uniform", seed=4)) == 25  # never shrinks
    other = labels.draw_sample(again, 10, "uniform", seed=5)  # nothing labelled: replaced
    assert not other[["qid", "system"]].equals(first[["qid", "system"]])
    labels.add_label(again, other["qid"][0], other["system"][0], "wrong", "ana")
    with pytest.raises(ValueError, match="drawn by rule 'uniform' with seed 5 and 1 of its"):
        labels.draw_sample(again, 10, "stratified", seed=5)


def test_a_stratified_sample_takes_each_system_in_turn(run):
    sample = labels.draw_sample(run, 60, "stratified", seed=0)
    assert sample.groupby("system").size().tolist() == [10] * 6
    assert sample.head(6)["system"].nunique() == 6
    with pytest.raises(ValueError,
                       match="rule 'random' is not one of judge, neyman, uniform, stratified"):
        labels.draw_sample(run, 5, "random")
    with pytest.raises(ValueError, match="positive whole number"):
        labels.draw_sample(run, 0)


def test_next_to_label_walks_the_sample_and_progress_counts(run):
    labels.draw_sample(run, 5, seed=1)
    items = labels.sample_items(run)
    assert [i.position for i in items] == [1, 2, 3, 4, 5]
    assert not hasattr(items[0], "judge") and items[0].question and items[0].gold_answers
    for it in items[:2]:
        labels.add_label(run, it.qid, it.system, "correct", "ana")
    assert labels.next_to_label(run, "ana") == items[2]
    assert labels.next_to_label(run, "bo") == items[0]  # bo starts at the beginning
    assert labels.next_to_label(run, "bo", skip_labelled_by_others=True) == items[2]
    assert labels.progress(run, "ana") == {"sample": 5, "labelled": 2, "by_labeller": {"ana": 2}}
    for it in items[2:]:
        labels.add_label(run, it.qid, it.system, "cannot tell", "ana")
    assert labels.next_to_label(run, "ana") is None


# --- CSV export and import ------------------------------------------------------------------

def test_export_import_round_trip(run, tmp_path):
    out = tmp_path / "to_label.csv"
    assert main(["label", "export", "--run-dir", str(run.path), "--n", "12", "--seed", "3",
                 "-o", str(out)]) == 0
    sheet = pd.read_csv(out, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    assert sheet.columns.tolist() == list(labels.exchange.EXPORT_COLUMNS)
    assert "score" not in " ".join(sheet.columns) and len(sheet) == 12
    choice = ["correct", "partly correct", "wrong", "cannot tell"]
    sheet["label"] = [choice[i % 4] for i in range(12)]
    sheet.loc[11, "label"] = ""  # not labelled yet: skipped
    sheet["comment"] = "checked"
    sheet.to_csv(out, index=False)
    assert main(["label", "import", "--run-dir", str(run.path), str(out),
                 "--labeller", "ana"]) == 0
    got = labels.read_labels(run)
    assert len(got) == 11 and set(got["labeller"]) == {"ana"}
    want = sheet.iloc[:11].set_index(["qid", "system"])["label"]
    assert got.set_index(["qid", "system"])["label"].to_dict() == want.to_dict()
    done = labels.import_csv(run, out, labeller="ana")  # the same file again: replaced
    assert (done.added, done.replaced, done.unlabelled) == (0, 11, 1)
    assert len(labels.read_labels(run)) == 11


def test_import_reports_every_problem_by_row_and_field_and_imports_nothing(run, tmp_path,
                                                                         capsys):
    qid, system = first_answer(run)
    path = tmp_path / "labels.csv"
    pd.DataFrame([
        {"qid": qid, "system": system, "label": "correct", "labeller": "ana"},
        {"qid": "nope", "system": system, "label": "wrong", "labeller": "ana"},
        {"qid": qid, "system": "bm99", "label": "wrong", "labeller": "ana"},
        {"qid": qid, "system": system, "label": "yes", "labeller": "bo"},
        {"qid": qid, "system": system, "label": "Wrong", "labeller": "ana"},
        {"qid": qid, "system": system, "label": "wrong", "labeller": ""},
    ]).to_csv(path, index=False)
    with pytest.raises(labels.LabelFileError) as info:
        labels.import_csv(run, path)
    assert [(i.record, i.field) for i in info.value.issues] == [
        ("row 3", "qid"), ("row 4", "system"), ("row 5", "label"), ("row 6", "label"),
        ("row 7", "labeller")]
    text = str(info.value)
    assert "unknown qid 'nope'" in text and "unknown system 'bm99'" in text
    assert "duplicate: row 2 already labels" in text and "pass --labeller" in text
    assert not run.has("labels")
    assert main(["label", "import", "--run-dir", str(run.path), str(path)]) == 2
    err = capsys.readouterr().err
    assert "5 problem(s), nothing imported" in err and "record row 5, field 'label'" in err


def test_import_needs_the_columns_and_reads_semicolons(run, tmp_path):
    qid, system = first_answer(run)
    bad = tmp_path / "bad.csv"
    bad.write_text("qid,system,verdict\nq,s,correct\n")
    with pytest.raises(labels.LabelFileError, match="field 'label': missing column"):
        labels.import_csv(run, bad)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(labels.LabelFileError, match="empty: it needs a header row"):
        labels.import_csv(run, empty)
    semi = tmp_path / "excel.csv"
    semi.write_text(f"\ufeffqid;system;label;labeller\n{qid};{system};partly correct;ana\n",
                    encoding="utf-8")
    assert labels.import_csv(run, semi).added == 1
    assert labels.read_labels(run)["score"].tolist() == [3.0]


def test_export_keeps_spreadsheets_from_running_formulas(run, tmp_path):
    qid, system = first_answer(run)
    answers = run.read("answers")
    hit = (answers["qid"].astype(str) == qid) & (answers["system"] == system)
    run.write("answers", answers.assign(answer=answers["answer"].where(
        ~hit, '=HYPERLINK("http://x")')))
    labels.draw_sample(run, len(labels.labelable(run)))
    labels.export_csv(run, tmp_path / "s.csv")
    sheet = pd.read_csv(tmp_path / "s.csv", dtype=str, keep_default_na=False)
    assert "'=HYPERLINK(\"http://x\")" in sheet["answer"].tolist()


def test_stand_in_labels_are_named_as_such(run):
    done = labels.from_reference(run, "contains")
    assert done.added == labels.DEFAULT_SAMPLE
    got = labels.read_labels(run)
    assert set(got["labeller"]) == {"stand-in: contains a gold answer"}
    from ragdash.view import RunView

    ref = RunView(run).reference().astype({"qid": str}).set_index(["qid", "system"])
    for r in got.itertuples():
        assert (r.label == "correct") == bool(ref.loc[(r.qid, r.system), "contains"])
    with pytest.raises(ValueError, match="reference metric 'bleu' is not one of"):
        labels.from_reference(run, "bleu")


# --- what the labels say, stored and shown ------------------------------------------------------

def test_calibration_json_of_a_run_with_labels_has_agreement_and_ppi(run, capsys):
    from ragdash.stages import STAGES
    from ragdash.stages.base import StageContext

    labels.from_reference(run, "contains", n=60)
    items = labels.sample_items(run)
    for it in items[:20]:  # a person labels a third of the sample too
        labels.add_label(run, it.qid, it.system, "correct", "ana")
    STAGES["calibrate"].run(StageContext(run, run_spec(run), "key"))
    cal = run.calibration()
    assert cal.h is not None  # the fit is still there
    agree = cal.agreement
    assert agree["labels"]["n"] == 80 and agree["labels"]["answers"] == 60
    assert set(agree["labels"]) >= {"accuracy", "kappa", "weighted_kappa", "confusion"}
    assert agree["labels"]["accuracy"]["ci"] and agree["labels"]["kappa"]["n"] == 80
    contains = agree["reference"]["contains"]
    assert contains["n"] == 360 and 0 < contains["kappa"]["value"] < 1
    [pair] = agree["annotators"]
    assert pair["labellers"] == ["ana", "stand-in: contains a gold answer"] and pair["n"] == 20
    assert agree["verdict"].startswith("The judge agrees with your labels")
    ppi = cal.ppi
    assert list(ppi)[-1] == "pooled" and "llm_only" in ppi
    pooled = ppi["pooled"]
    assert pooled["n_labelled"] == 60 and pooled["n_unlabelled"] == 300
    for key in ("labels_only", "judge_only", "ppi_judge", "ppi_retrieval"):
        assert pooled[key]["pct"] is not None and len(pooled[key]["ci"]) == 2, key
    assert "fitted on the judge" in pooled["ppi_retrieval"]["method"]
    assert "no retrieval" in ppi["llm_only"]["ppi_retrieval"]["reason"]
    assert cal.labels["stand_in"] == ["stand-in: contains a gold answer"]
    assert not labels.refresh(run)  # up to date
    labels.add_label(run, items[30].qid, items[30].system, "wrong", "bo")
    assert labels.refresh(run)
    assert run.calibration().agreement["labels"]["n"] == 81
    # the rest of calibration.json is kept
    def rest(c):
        return {k: v for k, v in c.to_dict().items()
                if k not in ("labels", "agreement", "ppi", "share")}

    assert rest(run.calibration()) == rest(cal)
    from ragdash.cli.labels import print_trust

    print_trust(run)
    out = capsys.readouterr().out
    assert "Is the judge right? The judge agrees with your labels" in out
    assert "PPI retrieval" in out and "pooled" in out


def test_a_run_without_judge_gets_cross_ppi_from_labels_and_retrieval(run, capsys):
    run.file("judgments").unlink()
    run.file("calibration").unlink()
    labels.from_reference(run, "contains", n=60)
    assert main(["label", "status", "--run-dir", str(run.path)]) == 0
    out = capsys.readouterr().out
    assert "No judge in this run" in out and "not human labels" in out
    pooled = labels.current(run)["ppi"]["pooled"]
    assert pooled["ppi_retrieval"]["method"].startswith("cross-PPI")
    assert pooled["judge_only"]["pct"] is None


def test_the_report_shows_agreement_and_ppi_and_escapes_names(run):
    from ragdash.html_report import build_report

    labels.from_reference(run, "contains", n=30)
    items = labels.sample_items(run)
    for it in items[:3]:
        labels.add_label(run, it.qid, it.system, "wrong", "<script>alert(1)</script>")
    html = build_report(run)
    assert "Is the judge right? Agreement with labels and gold answers" in html
    assert "Share correct, checked against labels" in html
    section = html[html.index("Share correct, checked against labels"):]
    assert "About " in section and "of these 360 answers are correct" in section
    assert "too few for an interval" in section  # 5 labels per system: no per-system range
    assert "Other estimators" in section and "PPI retrieval" in section and "pooled" in section
    assert "Stand-in labels from a reference metric, not human labels" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_the_package_names_are_the_functions_after_their_modules_load():
    """A lazily exported function must not be shadowed by a submodule of the same name."""
    import importlib

    for module in ("findings", "exchange", "store"):
        importlib.import_module(f"ragdash.labels.{module}")
    assert callable(labels.evaluate) and callable(labels.current) and \
        callable(labels.draw_sample)


def test_the_label_page_shows_agreement_between_two_labellers(run, monkeypatch):
    from fixtures.apptest import open_app

    labels.draw_sample(run, 4, seed=1)
    items = labels.sample_items(run)
    for labeller, said in (("ana", ["correct", "wrong", "correct", "wrong"]),
                           ("bo", ["correct", "wrong", "wrong", "cannot tell"])):
        for it, label in zip(items, said, strict=True):
            labels.add_label(run, it.qid, it.system, label, labeller)
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run.path))
    at = open_app("label", run=None, timeout=90, lb_name="ana")
    table = next(d.value for d in at.dataframe if "same label" in d.value.columns)
    # three answers both labelled ("cannot tell" left out), two of them alike
    assert table.iloc[0]["labellers"] == "ana & bo" and table.iloc[0]["n"] == 3
    assert table.iloc[0]["same label"] == pytest.approx(2 / 3, abs=1e-3)
