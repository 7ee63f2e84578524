"""Renaming and deleting runs from the dashboard, a killed writer's stage, and job ETAs."""

import pytest

from ragdash.rundir import Run
from ragdash.rundir.manage import delete_run, rename_run


def _run(root, name="a"):
    run = Run(root / name).create({"name": name})
    run.set_stage("ingest", status="done", key="k")
    return run


def test_rename_moves_the_run_and_records_its_new_id(tmp_path):
    moved = rename_run(_run(tmp_path), "b", tmp_path)
    assert moved.path == tmp_path / "b" and moved.id == "b" and not (tmp_path / "a").exists()
    assert moved.stage("ingest")["status"] == "done"  # nothing lost


@pytest.mark.parametrize("name", ["", "../x", ".hidden", "a/b", "x" * 65, "-dash"])
def test_rename_refuses_bad_names(tmp_path, name):
    with pytest.raises(ValueError, match="not a valid run name"):
        rename_run(_run(tmp_path), name, tmp_path)
    assert (tmp_path / "a" / "run.json").exists()


def test_rename_never_overwrites(tmp_path):
    _run(tmp_path, "b")
    with pytest.raises(ValueError, match="already exists"):
        rename_run(_run(tmp_path), "b", tmp_path)


def test_delete_removes_only_a_run_under_the_root(tmp_path):
    outside = _run(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="not a run directory under"):
        delete_run(outside, tmp_path / "root")
    (tmp_path / "root" / "plain").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a run directory"):
        delete_run(Run(tmp_path / "root" / "plain"), tmp_path / "root")
    delete_run(_run(tmp_path / "root", "x"), tmp_path / "root")
    assert not (tmp_path / "root" / "x").exists() and outside.exists()


def test_a_stage_left_running_by_a_killed_writer_is_marked_interrupted(tmp_path):
    run = _run(tmp_path)
    run.set_stage("chunk", status="running", key="k2")  # as kill -9 leaves it
    run.create({"name": "a"})
    assert run.stage("chunk")["status"] == "interrupted"
    assert run.stage("ingest")["status"] == "done"


def test_a_full_disk_does_not_hide_the_stage_error(tmp_path, monkeypatch):
    import errno

    import ragdash.rundir.run as run_module

    run = _run(tmp_path)

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with pytest.raises(RuntimeError, match="the stage's own error"), run.running("chunk", "k"):
        monkeypatch.setattr(run_module, "write_json", full)  # the manifest can't be saved
        raise RuntimeError("the stage's own error")


def test_the_eta_is_said_in_words():
    """The panel's words for a job's time left (a process job's ETA itself: `Reporter`,
    tests/test_job_plan.py)."""
    from ragdash.ui.jobs import eta_text

    assert eta_text(None) == ""
    assert eta_text(40) == "under a minute left" and eta_text(600) == "about 10 min left"
    assert eta_text(6 * 3600) == "about 6.0 h left"
    assert eta_text(600, ("judge",)) == "about 10 min left, judging included"
