"""Typed reading of a run: the calibration record, stage records and their one table, the
pluggable reader with the dashboard's cached one (which cannot go stale), the memo that keeps
answers while the files they read are unchanged, and the runs root's shared places."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from fixtures.make_run import make_run

from ragdash.calibration import Calibration
from ragdash.constants import PROJECT_ROOT
from ragdash.rundir import FILES, Memo, Run, StageRecord, stage_table, write_json, write_table
from ragdash.rundir.reader import PLAIN, Recorder
from ragdash.rundir.root import RunsRoot
from ragdash.view import RunView

DEMOS = [PROJECT_ROOT / "data" / d for d in ("demo_squad", "demo_run")]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "r", n_questions=12)


@pytest.fixture
def run_dir(made, tmp_path) -> Path:
    return Path(shutil.copytree(made, tmp_path / "r"))


# --- the calibration record -------------------------------------------------------------------


@pytest.mark.parametrize("demo", DEMOS, ids=lambda p: p.name)
def test_a_demos_calibration_reads_typed_and_writes_back_byte_for_byte(demo):
    cal = Run(demo).calibration()
    assert isinstance(cal, Calibration)
    assert cal.generation_budget == cal.budget and cal.per_retriever["n"].sum() == cal.n
    assert cal.estimator_verdict == json.loads(
        (demo / "calibration.json").read_text())["estimators"]["verdict"] != ""
    text = json.dumps(cal.to_dict(), indent=2, ensure_ascii=False, default=str)
    assert text == (demo / "calibration.json").read_text()


def test_a_calibration_without_the_stage_sections_leaves_them_out(run_dir):
    bare = Run(run_dir).calibration()  # make_run writes calibrate()'s dict only
    assert bare.scores is None and bare.labels is None and bare.estimator_verdict == ""
    assert set(bare.to_dict()) == set(json.loads((run_dir / "calibration.json").read_text()))
    assert bare.fits_on("substring") and bare.fits_on("semantic")  # nothing says otherwise


def test_a_calibration_says_which_scores_it_was_fitted_on(run_dir):
    run = Run(run_dir)
    data = {**run.read_json("calibration"), "scores": "semantic"}
    run.write_json("calibration", data)
    cal = run.calibration()
    assert cal.fits_on("semantic") and not cal.fits_on("substring")


def test_a_malformed_calibration_is_refused_naming_the_file(run_dir):
    run = Run(run_dir)
    run.write_json("calibration", {"h": 0.2})
    with pytest.raises(ValueError, match=r"calibration\.json cannot be read \(not a "
                                         "calibration written by"):
        run.calibration()
    (run_dir / "calibration.json").unlink()
    assert run.calibration() is None


# --- stage records and the stage table ----------------------------------------------------------


def test_stage_records_are_typed_in_their_order_and_waiting_without_a_record(tmp_path):
    run = Run(tmp_path / "r")
    assert run.stages() == {} and run.stages(["ingest"])["ingest"].status == "waiting"
    run.create({})
    run.set_stage("ingest", status="done", seconds=1.26, finished="t1",
                  counts={"examples": 4, "share": 0.12345, "nested": {"a": 1}}, future="kept out")
    run.set_stage("chunk", status="running")
    stages = run.stages()
    assert list(stages) == ["ingest", "chunk"]
    ingest = stages["ingest"]
    assert ingest.done and ingest.seconds == 1.26 and ingest.counts["examples"] == 4
    assert list(run.stages(["score", "ingest"])) == ["score", "ingest"]
    table = stage_table(run.stages(["ingest", "chunk", "score"]).values())
    assert table.astype(object).where(table.notna(), None).to_dict(orient="records") == [
        {"stage": "ingest", "status": "done", "mark": "✓", "seconds": 1.3, "finished": "t1",
         "counts": "examples: 4, share: 0.123"},
        {"stage": "chunk", "status": "running", "mark": "…", "seconds": None, "finished": None,
         "counts": ""},
        {"stage": "score", "status": "waiting", "mark": "?", "seconds": None,
         "finished": None, "counts": ""}]
    assert stage_table([]).columns.tolist() == ["stage", "status", "mark", "seconds",
                                                "finished", "counts"]
    assert StageRecord.from_dict("x", None) == StageRecord("x")


def test_the_pages_build_their_stage_tables_with_stage_table():
    for f in ("app_pages/overview.py", "ragdash/view/build.py", "ragdash/ui/jobs.py"):
        text = (PROJECT_ROOT / f).read_text()
        assert "stage_table(" in text and '.get("stages"' not in text, f


# --- the reader: plain, recording, the dashboard's ------------------------------------------


def _rewrite_examples(run: Run, question: str) -> None:
    """Rewrite examples.parquet atomically with every question replaced (same length)."""
    ex = PLAIN.table(run.file("examples"), FILES["examples"])
    write_table(run.file("examples"), ex.assign(question=question))


def test_the_dashboard_reader_cannot_go_stale(run_dir):
    from ragdash.ui import state

    run = Run(run_dir, state.READER)
    first = run.read("examples")
    assert run.read("examples").equals(first)  # read twice, the same table
    for question in ("aaaa", "bbbb", "cccc"):  # same size, rewritten at once: inode changes
        _rewrite_examples(run, question)
        assert set(run.read("examples")["question"]) == {question}
    run.update(note="first")
    assert run.manifest["note"] == "first"
    run.update(note="other")  # same size again
    assert run.manifest["note"] == "other"
    (run_dir / "examples.parquet").unlink()
    assert run.table("examples") is None and not run.has("examples")


def test_a_kept_table_is_a_copy(run_dir):
    from ragdash.ui import state

    run = Run(run_dir, state.READER)
    df = run.read("examples")
    df["question"] = "changed by a page"
    assert "changed by a page" not in set(run.read("examples")["question"])


def test_a_recorder_notes_every_file_looked_at_even_a_missing_one(run_dir):
    rec = Recorder(PLAIN)
    run = Run(run_dir, rec)
    _ = run.manifest
    assert run.table("labels") is None
    run.read("ir_scores")
    assert set(rec.seen) == {run_dir / "run.json", run_dir / "labels.parquet",
                             run_dir / "ir_scores.parquet"}
    assert rec.seen[run_dir / "labels.parquet"] is None


# --- the memo ---------------------------------------------------------------------------------


def test_the_memo_keeps_an_answer_until_a_file_it_read_changes(run_dir):
    memo, calls = Memo(), []

    def questions(reader) -> set[str]:
        calls.append(1)
        return set(Run(run_dir, reader).read("examples")["question"])

    first = memo.get("q", questions)
    assert memo.get("q", questions) == first and len(calls) == 1  # kept
    _rewrite_examples(Run(run_dir), "zzzz")
    assert memo.get("q", questions) == {"zzzz"} and len(calls) == 2


def test_the_memo_follows_a_file_that_was_missing(run_dir):
    memo = Memo()
    (run_dir / "labels.parquet").unlink(missing_ok=True)
    assert memo.get("labels", lambda r: Run(run_dir, r).table("labels")) is None
    write_table(run_dir / "labels.parquet", pd.DataFrame({"qid": ["q"], "system": ["s"]}))
    assert len(memo.get("labels", lambda r: Run(run_dir, r).table("labels"))) == 1


def test_an_answer_built_on_a_kept_one_follows_its_files_too(run_dir):
    memo = Memo()

    def inner(reader) -> int:
        return len(Run(run_dir, reader).read("examples"))

    def outer(reader) -> int:
        return memo.get("inner", inner) * 10

    n = memo.get("inner", inner)  # kept first: the outer answer finds it kept
    assert memo.get("outer", outer) == n * 10
    ex = PLAIN.table(run_dir / "examples.parquet", FILES["examples"])
    write_table(run_dir / "examples.parquet", ex.head(3))
    assert memo.get("outer", outer) == 30


def test_a_view_with_a_memo_answers_as_one_without(run_dir):
    memo = Memo()
    kept, plain = RunView(run_dir, memo=memo), RunView(run_dir)
    assert kept.summary().equals(plain.summary())
    assert kept.bands().equals(plain.bands())
    assert kept.thresholds(100).fit_k == plain.thresholds(100).fit_k
    before = kept.summary()
    ir = PLAIN.table(run_dir / "ir_scores.parquet", FILES["ir_scores"])
    write_table(run_dir / "ir_scores.parquet", ir.assign(score=0.0))
    assert not kept.summary().equals(before) and (kept.summary() == 0).all().all()


def test_a_view_rebinds_the_runs_of_a_kept_value_to_the_memos_reader(run_dir, tmp_path):
    from ragdash.view import RunsView

    other = Path(shutil.copytree(run_dir, tmp_path / "other"))
    memo = Memo()
    runs = {"a": Run(run_dir), "b": Run(other)}
    first = RunsView(runs, memo=memo).comparison()
    again = RunsView(runs, memo=memo).comparison()  # from the memo, unpickled
    assert again.qids == first.qids
    assert all(r.reader is memo.reader for r in again.runs.values())


# --- the runs root ----------------------------------------------------------------------------


def test_the_runs_root_keeps_its_shared_places_where_they_were(tmp_path):
    root = RunsRoot(tmp_path)
    assert (root.llm_cache, root.index_cache, root.embedding_cache, root.uploads,
            root.datasets) == tuple(tmp_path / n for n in (
                "_llm_cache.sqlite", "_index_cache", "_embedding_cache.sqlite", "_uploads",
                "_datasets"))
    assert RunsRoot(str(tmp_path)) == root


def test_the_runs_root_lists_its_runs_and_its_sweeps_runs(made, tmp_path):
    shutil.copytree(made, tmp_path / "one")
    shutil.copytree(made, tmp_path / "sweep" / "a")
    shutil.copytree(made, tmp_path / "_datasets" / "not-a-run")
    names = [r.path.relative_to(tmp_path).as_posix() for r in RunsRoot(tmp_path).runs()]
    assert sorted(names) == ["one", "sweep/a"]
    assert RunsRoot(tmp_path / "absent").runs() == []


def test_only_the_runs_root_names_its_shared_places():
    names = ("_llm_cache.sqlite", "_index_cache", "_embedding_cache.sqlite", "_uploads",
             "_datasets")
    for path in [*(PROJECT_ROOT / "ragdash").rglob("*.py"),
                 *(PROJECT_ROOT / "app_pages").glob("*.py")]:
        if path.name in ("root.py", "constants.py"):
            continue
        for name in names:
            assert not re.search(rf"[\"'/]{re.escape(name)}[\"']", path.read_text()), \
                (path, name)


def test_write_json_then_typed_read(tmp_path):
    run = Run(tmp_path / "r")
    write_json(run.file("manifest"), {"id": "x", "stages": {"ingest": {"status": "failed",
                                                                       "error": "boom"}}})
    assert run.stages()["ingest"] == StageRecord("ingest", "failed", error="boom")
