"""The share section a run's labels give (`ragdash.labels.findings.share_section`): only the
sample's labels enter it, "cannot tell" bounds it, a pooled interval needs labels in every
system, the estimand comes from the config, and `ragdash label status --json` prints what the
Overview shows. Every run written is a copy of the SQuAD demo in tmp_path."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ragdash import labels
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.labels.store import label_row, labelable, save_labels
from ragdash.rundir import Run

DEMO = PROJECT_ROOT / "data" / "demo_squad"


@pytest.fixture
def run(tmp_path) -> Run:
    if not (DEMO / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    copy = Run(shutil.copytree(DEMO, tmp_path / "demo"))
    for name in ("labels", "label_sample", "calibration"):
        copy.file(name).unlink(missing_ok=True)
    return copy


def label_all(run: Run, items, label: str = "correct", who: str = "ana") -> None:
    save_labels(run, [label_row(it.qid, it.system, label, who, "", sha)
                      for it, sha in items])


def sample_with_sha(run: Run):
    answers = labelable(run).set_index(["qid", "system"])["answer_sha"]
    return [(it, answers[(it.qid, it.system)]) for it in labels.sample_items(run)]


def outside(run: Run, n: int):
    """`n` answers that are not in the sample, with their hashes."""
    sample = {(it.qid, it.system) for it in labels.sample_items(run)}
    rows = labelable(run)
    rows = rows[[(q, s) not in sample for q, s in zip(rows["qid"], rows["system"],
                                                      strict=True)]].head(n)

    class It:  # the fields label_row needs
        def __init__(self, q, s):
            self.qid, self.system = q, s

    return [(It(q, s), sha) for q, s, sha in zip(rows["qid"], rows["system"],
                                                 rows["answer_sha"], strict=True)]


def test_labels_outside_the_sample_never_enter_an_estimate(run):
    labels.draw_sample(run, 60, seed=1)
    label_all(run, sample_with_sha(run)[:30], "wrong")
    before = labels.evaluate(run)["share"]
    label_all(run, outside(run, 40), "correct")  # 40 hand-picked "correct" answers
    after = labels.evaluate(run)
    assert after["share"]["pooled"] == before["pooled"]
    assert after["labels"]["outside_sample"] == 40
    assert after["agreement"]["labels"]["n"] == 70  # agreement may use every label
    assert after["ppi"]["pooled"]["n_labelled"] == 30


def test_labels_from_one_system_give_no_pooled_interval(run):
    labels.draw_sample(run, 60, rule="stratified", seed=0)
    bm25 = [x for x in sample_with_sha(run) if x[0].system == "bm25"]
    label_all(run, bm25[:9])
    share = labels.evaluate(run)["share"]
    assert share["covers"] == [1, 6]
    assert share["pooled"]["ci"] is None
    assert share["pooled"]["reason"].startswith("the labels cover 1 of 6 systems")
    assert share["pooled"]["estimate"] is None  # one system's labels say nothing of the pool
    assert all(e["ci"] is None for e in share["systems"].values())


def test_cannot_tell_answers_bound_the_pooled_estimate(run):
    labels.draw_sample(run, 80, seed=2)
    items = sample_with_sha(run)
    label_all(run, items[:60], "correct")
    label_all(run, items[60:70], "cannot tell")
    share = labels.evaluate(run)["share"]
    pooled = share["pooled"]
    assert share["cannot_tell"] == 10 and pooled["labels"] == 60
    lo, hi = pooled["bounds"]
    assert lo < pooled["estimate"] <= hi and pooled["ci"][0] <= lo


def test_the_estimand_comes_from_the_config_and_is_named(run):
    labels.draw_sample(run, 100, seed=0)
    label_all(run, sample_with_sha(run)[:50], "correct")
    label_all(run, sample_with_sha(run)[50:], "wrong")
    these = labels.evaluate(run)["share"]
    assert these["estimand"] == "these answers"
    assert these["estimand_text"] == "the share over this run's answers"
    manifest = run.path / "run.json"
    meta = json.loads(manifest.read_text())
    meta["config"]["calibration"]["estimand"] = "new questions"
    manifest.write_text(json.dumps(meta))
    new = labels.evaluate(Run(run.path))["share"]
    assert new["estimand"] == "new questions"
    assert new["pooled"]["estimate"] == these["pooled"]["estimate"]  # one estimator
    new_ci, these_ci = new["pooled"]["ci"], these["pooled"]["ci"]
    assert new_ci[1] - new_ci[0] > these_ci[1] - these_ci[0]  # no finite-population correction


def test_label_status_json_prints_what_the_overview_shows(run, capsys):
    assert main(["label", "import", "--run-dir", str(run.path), "--from-reference",
                 "contains", "--n", "150"]) == 0
    capsys.readouterr()
    assert main(["label", "status", "--run-dir", str(run.path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    shown = labels.current(run)["share"]
    assert got["estimand"] == "these answers"
    assert got["pooled"]["ci"] == shown["pooled"]["ci"] and got["pooled"]["labels"] == 150
    assert 0 < got["pooled"]["ci"][0] < got["pooled"]["estimate"] < got["pooled"]["ci"][1] < 1
    # about ±5 points from 150 labels, and the planner agrees with the interval shown: it asks
    # for more labels exactly when the half-width is above 5 points
    half = (got["pooled"]["ci"][1] - got["pooled"]["ci"][0]) / 2
    assert half <= 0.06
    need = shown["pooled"]["to_target"]
    assert (need > 150) == (half > 0.05), (need, half)
    assert set(got["systems"]) == set(shown["systems"])
    for name, entry in got["systems"].items():
        assert entry["labels"] >= 24 and entry["ci"] is not None, name


def test_export_draws_the_default_sample_by_the_judges_verdict(run, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["label", "export", "--run-dir", str(run.path), "--n", "30", "--seed", "5",
                 "-o", str(out)]) == 0
    sample = labels.read_sample(run)
    assert len(sample) == 30 and set(sample["rule"]) == {"judge"} and \
        set(sample["seed"]) == {5}
    assert "sample rule judge, seed 5" in capsys.readouterr().out


@pytest.mark.parametrize("label", ["wrong", "reference"])
def test_label_status_never_states_a_width_its_interval_does_not_have(run, capsys, label):
    """150 labels all wrong once printed "interval 0–13 %" beside "within ±5 points"; every
    width `ragdash label status` states is the interval's it prints."""
    import re

    if label == "reference":
        assert main(["label", "import", "--run-dir", str(run.path), "--from-reference",
                     "contains", "--n", "150"]) == 0
    else:
        labels.draw_sample(run, 150, seed=0)
        label_all(run, sample_with_sha(run), "wrong")
    capsys.readouterr()
    assert main(["label", "status", "--run-dir", str(run.path)]) == 0
    text = capsys.readouterr().out
    assert main(["label", "status", "--run-dir", str(run.path), "--json"]) == 0
    lo, hi = json.loads(capsys.readouterr().out)["pooled"]["ci"]
    assert f"interval {lo * 100:.0f}–{hi * 100:.0f} %" in text
    for said in re.findall(r"within ±([\d.]+) points", text):
        assert (hi - lo) / 2 <= float(said) / 100, (said, lo, hi)
    for said in re.findall(r"is ±([\d.]+) points", text):
        assert float(said) == pytest.approx((hi - lo) * 50, abs=0.05)
    if label == "wrong":
        assert hi < 0.04 and "within ±5 points" in text  # 0/150: Clopper–Pearson's 2.4 %


def test_extending_a_sample_after_the_judge_changed_keeps_the_draws_strata(run, tmp_path,
                                                                          monkeypatch):
    """Issue 50 item 4: 40 of the judge's 5s change between a 30- and a 60-answer sample. The
    60 are still the first 60 of the order drawn at first (as drawing 60 at once before the
    change), every answer keeps the stratum it was drawn in, the estimate is the one those
    strata give, and the share section says how many verdicts changed. (The regression
    estimate's predictor reads the judge's scores now, as any auxiliary known of every answer:
    that keeps it unbiased, so the strata are compared through the stratified estimate.)"""
    monkeypatch.setattr("ragdash.calibration.assisted.cross_fitted",
                        lambda *a, **k: "the strata alone")
    before = Run(shutil.copytree(run.path, tmp_path / "before"))
    labels.draw_sample(run, 30, seed=4)
    first = labels.read_sample(run)
    judgments = run.read("judgments")
    fives = judgments.index[judgments["score"] == 5][:40]
    run.write("judgments", judgments.assign(score=judgments["score"].where(
        ~judgments.index.isin(fives), 4)))
    labels.draw_sample(run, 60, seed=4)
    got = labels.read_sample(run)
    labels.draw_sample(before, 60, seed=4)
    fresh = labels.read_sample(before)
    key = ["qid", "system"]
    assert got[key].iloc[:30].equals(first[key])
    assert got[key].equals(fresh[key])
    for copy in (run, before):
        items = sample_with_sha(copy)
        label_all(copy, [x for i, x in enumerate(items) if i % 3], "correct")
        label_all(copy, [x for i, x in enumerate(items) if not i % 3], "wrong")
    changed, same = labels.evaluate(run)["share"], labels.evaluate(before)["share"]
    assert changed["pooled"] == same["pooled"]
    assert changed["systems"] == same["systems"]
    assert changed["strata_changed"] == 40 and same["strata_changed"] == 0


def test_the_share_is_the_regression_estimate_on_the_runs_auxiliaries(run):
    """Labels that follow a reference metric the run has: the share section's predictor
    (cross-fitted on the judge, Score_IR and the reference metrics) leaves residuals near 0,
    so its interval is narrower than the stratified one on the judge's verdict alone, and
    still holds the truth; every label alike (no predictor to fit): the stratified one."""
    from ragdash.calibration import assisted, survey
    from ragdash.labels.findings import answer_table, auxiliaries, judge_scores, share_section

    assert main(["label", "import", "--run-dir", str(run.path), "--from-reference",
                 "contains", "--n", "80"]) == 0
    got = labels.evaluate(run)["share"]["pooled"]
    assert got["method"].startswith("regression estimate")
    judge = judge_scores(run)
    frame = auxiliaries(run, answer_table(run, labels.read_labels(run).iloc[:0], judge,
                                          labelable(run)), judge)
    assert {"judge", "ir", "contains", "f1"} <= set(frame.columns)
    truth = frame["contains"].mean()
    sampled = labels.read_labels(run)
    y = frame[["qid", "system"]].merge(sampled.assign(y=(sampled["score"] == 5) * 1.0),
                                       how="left")["y"].to_numpy(float)
    plain = survey.share(frame, y, min_labels=survey.MIN_POOLED_LABELS)
    assert got["ci"][0] <= truth <= got["ci"][1]
    assert got["ci"][1] - got["ci"][0] < 0.8 * (plain.ci[1] - plain.ci[0])
    alike = sampled.assign(score=1)
    section = share_section(frame, alike, "these answers", sorted(frame["system"].unique()))
    assert section["pooled"]["method"] == survey.share(
        frame, np.where(np.isnan(y), np.nan, 0.0), min_labels=10).method
    assert isinstance(assisted.cross_fitted(frame, np.where(np.isnan(y), np.nan, 0.0)), str)


@pytest.mark.parametrize("demo", ["demo_squad", "demo_run"])
def test_the_bundled_demos_keep_their_labels_sections_current(demo, tmp_path):
    """A bundled demo's calibration.json holds the labels sections of today's method: one of
    another version (demo_run's had none) is worked out anew on every read of every page. After
    a method change: `findings.refresh(Run("data/<demo>"))` and commit the file."""
    import shutil

    from ragdash.constants import PROJECT_ROOT
    from ragdash.labels import findings

    copy = tmp_path / demo
    shutil.copytree(PROJECT_ROOT / "data" / demo, copy)
    assert not findings.refresh(Run(copy))
