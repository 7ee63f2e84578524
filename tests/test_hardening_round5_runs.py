"""Issue 46, round five, items 2 and 3, and issue 48's migration bug: a run.json that cannot be
read (a list, 100,000 levels deep, a field of the wrong type, 200 MB, a spec_version this ragdash
does not read) is refused by name and reason in one place (`rundir.manifest.read_manifest`),
takes no dashboard page down and is listed as unreadable; a stage command touches no file of
such a run; and every reader of a saved config (`run_spec`, `ragdash run --run-dir R`, a
stage command, a job) migrates a version-0 config as `saved_spec` does."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run

from ragdash import jobs
from ragdash.cli import main
from ragdash.config import RunSpec, saved_spec
from ragdash.run_spec import run_spec
from ragdash.rundir import MANIFEST, Run
from ragdash.rundir.manifest import MAX_DEPTH, MAX_MANIFEST_BYTES, MAX_RUN_JSON_BYTES, ManifestError
from ragdash.rundir.reader import CachedReader, json_at, manifest_at, table_at
from ragdash.rundir.root import RunsRoot
from ragdash.ui.navigation import PAGES
from ragdash.ui.state import run_key

V0 = Path(__file__).parent / "fixtures" / "run_json" / "v0-with-answers.json"
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"  # 200 KB, 100,000 levels

BAD: dict[str, tuple[str | bytes | None, str]] = {
    # name: (run.json's text, None for a sparse 200 MB file; what the refusal says)
    "list": ("[1, 2]", "the top level is a list, not an object"),
    "text": ('"run"', "the top level is a string, not an object"),
    "deep": (DEEP, f"it nests deeper than {MAX_DEPTH} levels"),
    "deep-65": ('{"a": ' + "[" * 70 + "]" * 70 + "}", f"deeper than {MAX_DEPTH} levels"),
    "huge": (None, "it is 200.0 MiB, over the 4 MiB a run.json may hold"),
    "not-json": ('{"id": "x",', "it is not valid JSON"),
    "not-utf8": (b'{"id": "\xff\xfe\xfa"}', "it is not valid JSON"),
    "stages-text": ('{"stages": "x"}', 'stages is "x", not an object'),
    "stage-text": ('{"stages": {"ingest": "done"}}', 'stages.ingest is "done", not an object'),
    "seconds-text": ('{"stages": {"ingest": {"status": "done", "seconds": "x"}}}',
                     'stages.ingest.seconds is "x", not a number'),
    "warnings-ints": ('{"stages": {"retrieve": {"warnings": [1, 2]}}}',
                      "stages.retrieve.warnings is a list, not a list of objects"),
    "id-number": ('{"id": 5}', "id is 5, not a string"),
    "updated-list": ('{"updated": []}', "updated is a list, not a string"),
    "config-list": ('{"config": [1, 2]}', "config is a list, not an object"),
    "version-999": ('{"config": {}, "spec_version": 999}',
                    "spec_version 999: this ragdash reads versions 0 to 1; the run was made by a "
                    "newer ragdash"),
    "version-minus-1": ('{"config": {}, "spec_version": -1}', "spec_version -1: versions start "
                        "at 0"),
    "version-abc": ('{"config": {}, "spec_version": "abc"}',
                    'spec_version is "abc", not a whole number'),
    "version-list": ('{"config": {}, "spec_version": [1]}',
                     "spec_version is a list, not a whole number"),
    "version-1.9": ('{"config": {}, "spec_version": 1.9}',
                    "spec_version is 1.9, not a whole number"),
    "version-true": ('{"config": {}, "spec_version": true}',
                     "spec_version is true, not a whole number"),
}


def write_bad(run_dir: Path, name: str) -> Path:
    """A run folder whose run.json is BAD[name]'s."""
    run_dir.mkdir(parents=True, exist_ok=True)
    text = BAD[name][0]
    f = run_dir / MANIFEST
    if text is None:
        with open(f, "wb") as out:
            out.truncate(200 * 2**20)  # sparse: 200 MB on paper, nothing on disk
    else:
        f.write_bytes(text if isinstance(text, bytes) else text.encode())
    return run_dir


# --- one reader, one refusal ---------------------------------------------------------------------


@pytest.mark.parametrize("name", BAD)
def test_a_bad_run_json_is_refused_by_name_and_reason(tmp_path, name):
    run = Run(write_bad(tmp_path / name, name))
    with pytest.raises(ManifestError) as err:
        _ = run.manifest
    assert str(err.value).startswith(f"{run.path / MANIFEST} cannot be read: ")
    assert BAD[name][1] in str(err.value)
    assert run.problem() == str(err.value)
    with pytest.raises(ManifestError):  # every reader of the run goes through it
        run_spec(run)
    with pytest.raises(ManifestError):
        run.stages()
    cached = Run(run.path, CachedReader(table_at, json_at))
    assert cached.problem() == run.problem()


def test_a_run_json_over_the_limit_is_refused_unread(tmp_path):
    run = Run(write_bad(tmp_path / "huge", "huge"))
    tracemalloc.start()
    start = time.perf_counter()
    assert "over the 4 MiB" in run.problem()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 0.5 and peak < 2**20  # refused from its size: not read into memory
    assert MAX_MANIFEST_BYTES == 4 * 2**20


def test_a_deep_run_json_is_refused_quickly(tmp_path):
    run = Run(write_bad(tmp_path / "deep", "deep"))
    start = time.perf_counter()
    assert "nests deeper" in run.problem()
    assert time.perf_counter() - start < 0.5


def test_a_run_json_nests_at_most_max_depth_levels(tmp_path):
    from ragdash.rundir.manifest import check_manifest

    deepest = {"a": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))}
    assert check_manifest(deepest) is deepest  # the object and 63 lists: 64 levels
    with pytest.raises(ManifestError, match=f"deeper than {MAX_DEPTH} levels"):
        check_manifest({"a": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)})


def test_the_demos_and_a_fresh_run_read_as_before(tmp_path):
    from ragdash.constants import PROJECT_ROOT

    for demo in ("demo_run", "demo_squad"):
        run = Run(PROJECT_ROOT / "data" / demo)
        assert run.problem() is None and run_spec(run).compared and run.stages()["score"].done
    run = Run(make_run(tmp_path / "ok", n_questions=4, llm=False, retrievers=("bm25",),
                       budgets=(100,)))
    assert run.problem() is None and run_spec(run).compared == ["bm25"]


def test_the_cache_keeps_the_refusal_and_reads_the_file_again_once_it_changes(tmp_path):
    run_dir = write_bad(tmp_path / "r", "list")
    reads: list[str] = []

    def counted(path: str, stamp_):
        reads.append(path)
        return manifest_at(path, stamp_)

    run = Run(run_dir, CachedReader(table_at, json_at, functools.lru_cache(counted)))
    assert isinstance(manifest_at(str(run_dir / MANIFEST), None), ManifestError)
    for _ in range(3):
        assert "top level is a list" in run.problem()
    assert len(reads) == 1
    (run_dir / MANIFEST).write_text('{"id": "fixed"}')
    assert run.problem() is None and run.id == "fixed"


def test_listing_runs_puts_a_bad_run_last_and_keeps_the_others(tmp_path):
    root = tmp_path / "runs"
    make_run(root / "good", n_questions=4, llm=False, retrievers=("bm25",), budgets=(100,))
    for name in ("list", "deep", "stages-text", "huge", "version-999"):
        write_bad(root / name, name)
    runs = RunsRoot(root).runs()
    assert runs[0].path.name == "good" and runs[0].problem() is None
    assert {r.path.name for r in runs[1:]} == {"list", "deep", "stages-text", "huge",
                                               "version-999"}
    assert all(r.problem() for r in runs[1:])


def test_a_bad_run_cannot_be_renamed_but_can_be_deleted(tmp_path):
    from ragdash.rundir.manage import delete_run, rename_run

    root = tmp_path / "runs"
    run = Run(write_bad(root / "bad", "config-list"))
    with pytest.raises(ManifestError, match="config is a list"):
        rename_run(run, "other", root)
    assert run.path.is_dir() and not (root / "other").exists()  # nothing moved
    delete_run(run, root)
    assert not run.path.exists()


# --- the dashboard: every page with bad runs beside good ones -------------------------------------


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A demo run and, under the runs root, a good run beside a run of each bad kind of the
    issue (a list, 100,000 levels, stages "x", 200 MB, config [1, 2], spec_version 999), and
    one whose config no longer reads as a specification (a retriever that does not exist)."""
    base = tmp_path_factory.mktemp("round5-runs")
    demo = make_run(base / "demo", n_questions=8, seed=3)
    make_run(base / "runs" / "good", n_questions=8, seed=4)
    for name in ("list", "deep", "stages-text", "huge", "config-list", "version-999"):
        write_bad(base / "runs" / f"bad-{name}", name)
    (base / "runs" / "bad-spec").mkdir()
    (base / "runs" / "bad-spec" / MANIFEST).write_text(
        '{"config": {"retrievers": {"use": ["nope"]}}, "spec_version": 1}')
    old = {k: os.environ.get(k) for k in ("RAGDASH_DEMO_RUN", "RAGDASH_RUNS_ROOT")}
    os.environ["RAGDASH_DEMO_RUN"] = str(demo)
    os.environ["RAGDASH_RUNS_ROOT"] = str(base / "runs")
    yield base
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _listed(at) -> str:
    """What the sidebar says about the runs that cannot be read."""
    boxes = [e for e in at.sidebar.expander if "cannot be read" in e.label]
    assert len(boxes) == 1, [e.label for e in at.sidebar.expander]
    assert boxes[0].label == "7 runs cannot be read"
    return "\n".join(m.value for m in boxes[0].markdown)


@pytest.mark.parametrize("page", list(dict.fromkeys(p.name for p in PAGES)))
def test_every_page_renders_beside_bad_runs_and_lists_them(root, page):
    at = open_app(page)  # asserts no exception box
    listed = _listed(at).replace("\\", "")
    for name, why in (("list", "the top level is a list"), ("deep", "nests deeper"),
                      ("stages-text", 'stages is "x"'), ("huge", "200.0 MiB"),
                      ("config-list", "config is a list"), ("version-999", "spec_version 999"),
                      ("spec", "retrievers.use: unknown ['nope']")):
        assert f"bad-{name}" in listed and why in listed, (name, listed)
    picker = at.sidebar.selectbox(key="run")
    assert not any("bad-" in str(o) for o in picker.options)  # offered to no page
    if page == "build":  # the Build page lists each bad run with its reason
        table = next(d.value for d in at.dataframe if "stages" in d.value.columns
                     and d.value["stages"].astype(str).str.startswith("unreadable:").any())
        bad = table[table["stages"].astype(str).str.startswith("unreadable:")]
        assert set(bad["run"]) == {f"bad-{n}" for n in ("list", "deep", "stages-text", "huge",
                                                        "config-list", "version-999",
                                                        "spec")}
        assert (table["run"] == "good").any()


def test_the_good_run_under_the_root_opens_on_every_page(root):
    for page in ("overview", "runs", "build"):
        at = open_app(page, run=run_key(root / "runs" / "good"))
        assert at.sidebar.selectbox(key="run").value == run_key(root / "runs" / "good")


def test_a_link_to_a_bad_run_says_why_it_cannot_be_shown(root):
    at = open_app(None, run=run_key(root / "runs" / "bad-list"))
    warning = next(w.value for w in at.sidebar.warning if "from the link" in w.value)
    assert "cannot be read" in warning and "top level is a list" in warning


# --- stage commands: a run whose config cannot be read is refused, untouched ---------------------


def _fingerprint(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file of `folder`: (modification time in ns, sha256)."""
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns,
                                         hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    return make_run(tmp_path_factory.mktemp("round5-cli") / "made", n_questions=4,
                    retrievers=("bm25",), budgets=(100,))


@pytest.mark.parametrize("command", ["score", "run", "chunk", "calibrate", "reference", "erag"])
@pytest.mark.parametrize("case", ["config-list", "version-999", "version-minus-1",
                                  "version-abc", "version-list", "version-1.9", "version-true",
                                  "list", "stages-text"])
def test_a_stage_command_refuses_a_run_it_cannot_read_and_touches_nothing(
        made, tmp_path, capsys, command, case):
    run_dir = tmp_path / "r"
    shutil.copytree(made, run_dir)
    manifest = json.loads((run_dir / MANIFEST).read_text())
    bad = json.loads(BAD[case][0])
    (run_dir / MANIFEST).write_text(json.dumps({**manifest, **bad} if isinstance(bad, dict)
                                               else bad))
    before = _fingerprint(run_dir)
    time.sleep(0.01)  # a rewrite would show in the mtimes
    quiet = [] if command == "reference" else ["-q"]
    assert main([command, "--run-dir", str(run_dir), *quiet]) != 0
    err = capsys.readouterr().err
    assert f"ragdash: error: {run_dir / MANIFEST} cannot be read: " in err
    assert BAD[case][1] in err
    assert _fingerprint(run_dir) == before


def test_a_run_json_without_a_config_is_refused_not_run_with_the_defaults(tmp_path, capsys):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / MANIFEST).write_text('{"id": "r"}')
    before = _fingerprint(run_dir)
    assert main(["score", "--run-dir", str(run_dir), "-q"]) != 0
    assert f"{run_dir / MANIFEST} keeps no config: give --config" in capsys.readouterr().err
    assert _fingerprint(run_dir) == before


# --- issue 48: every reader of a saved config migrates it ----------------------------------------


@pytest.fixture
def v0(tmp_path) -> Path:
    """A version-0 run (run.json before `spec_version`): generation and judge without `llm`
    meant the run's `llm`."""
    run_dir = tmp_path / "v0"
    run_dir.mkdir()
    shutil.copy(V0, run_dir / MANIFEST)
    return run_dir


def _intended() -> RunSpec:
    spec = saved_spec(json.loads(V0.read_text()))
    assert spec.judge.llm is None and spec.generation.llm is None
    return spec


def test_the_run_spec_is_the_migrated_config(v0):
    spec = run_spec(Run(v0))
    assert spec.judge.llm is None and spec.generation.llm is None
    assert spec == _intended()


@pytest.mark.parametrize("command", ["run", "score", "judge"])
def test_a_command_on_a_version_0_run_without_config_migrates_it(v0, monkeypatch, command):
    """`ragdash run --run-dir R` (and a stage command) goes on with R's config as `saved_spec`
    reads it: the run's own model judges, not the 1.5B."""
    from ragdash.cli import run_stages

    seen: list[RunSpec] = []
    monkeypatch.setattr(run_stages, "dry_run", lambda spec, *a: seen.append(spec) or 0)
    assert main([command, "--run-dir", str(v0), "--dry-run", "-q"]) == 0
    spec, intended = seen[0], _intended()
    assert spec.judge.llm is None and spec.generation.llm is None
    assert (spec.llm, spec.generation, spec.judge) == \
        (intended.llm, intended.generation, intended.judge)


def test_a_job_on_a_version_0_run_migrates_its_config(v0, monkeypatch):
    from ragdash.stages import runner

    given: list = []
    monkeypatch.setattr(runner, "run_stages", lambda cfg, *a, **k: given.append(cfg))
    jobs.write(v0, kind="build", stages=["ingest"], state="starting")
    assert jobs.run_job(v0) == 0
    assert RunSpec.from_config({k: v for k, v in given[0].items()
                                if not k.startswith("_")}) == _intended()


def test_a_job_on_a_run_it_cannot_read_fails_with_the_reason(tmp_path):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    manifest = json.loads(V0.read_text())
    (run_dir / MANIFEST).write_text(json.dumps({**manifest, "spec_version": 999,
                                                "job": {"kind": "build", "stages": ["ingest"]}}))
    assert jobs.run_job(run_dir) == 1
    assert "spec_version 999" in jobs.record(run_dir)["error"]


# --- jobs read run.json through the same bounded parse -------------------------------------------


@pytest.mark.parametrize("name", ["deep", "huge", "list", "not-json"])
def test_a_job_record_in_a_bad_run_json_reads_as_none(tmp_path, name):
    """The Build page lists the jobs of every folder under the runs root (`jobs_under`): a
    run.json 100,000 levels deep raised a RecursionError there, a 200 MB one was read whole."""
    run_dir = write_bad(tmp_path / "runs" / name, name)
    tracemalloc.start()
    try:
        assert jobs.record(run_dir) == {}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20  # at most what MAX_MANIFEST_BYTES lets through: never 200 MB
    assert jobs.status(run_dir) is None and jobs.jobs_under(tmp_path / "runs") == []


def test_a_sweep_record_is_not_bounded_like_a_run_json(tmp_path):
    from ragdash.rundir.manifest import load_json

    big = {"job": {"state": "running"}, "pad": "x" * (MAX_MANIFEST_BYTES + 10)}
    (tmp_path / "sweep.json").write_text(json.dumps(big))
    assert load_json(tmp_path / "sweep.json", None) == big
    with pytest.raises(ManifestError, match="over the 4 MiB a sweep.json may hold"):
        load_json(tmp_path / "sweep.json")


def test_a_build_into_a_run_that_cannot_be_read_is_refused_untouched(made, tmp_path):
    """The Build page shows this refusal (a run of the name asked for whose run.json is bad)."""
    run_dir = write_bad(tmp_path / "bad", "config-list")
    before = (run_dir / MANIFEST).read_bytes()
    with pytest.raises(ManifestError, match="config is a list"):
        jobs.spawn(run_dir, "build", cfg=run_spec(Run(made)).to_config(), stages=["ingest"])
    assert (run_dir / MANIFEST).read_bytes() == before


@pytest.mark.parametrize("case", ["not-json", "huge", "list", "deep", "not-utf8"])
def test_a_job_on_a_run_json_that_is_no_object_is_refused_and_the_file_kept(tmp_path, capsys,
                                                                            case, monkeypatch):
    """`ragdash job` (and every job record write) on a run.json that cannot be parsed leaves it
    as it was: the record written over it replaced the file by {"job": ...} before. (`ragdash
    job` nices its process: here that would be the test worker's, for every later test.)"""
    niced = []
    monkeypatch.setattr(jobs, "lower_priority", niced.append)
    f = write_bad(tmp_path / case, case) / MANIFEST
    before = (f.stat().st_mtime_ns, f.stat().st_size)
    time.sleep(0.01)
    with pytest.raises(ManifestError, match="cannot be read"):
        jobs.write(f.parent, state="running")
    assert main(["job", "--run-dir", str(f.parent)]) != 0
    assert niced == [jobs.NICE]
    assert "cannot be read" in capsys.readouterr().err
    assert (f.stat().st_mtime_ns, f.stat().st_size) == before


def test_a_job_record_is_still_merged_into_a_readable_run(made, tmp_path):
    run_dir = tmp_path / "r"
    shutil.copytree(made, run_dir)
    config = json.loads((run_dir / MANIFEST).read_text())["config"]
    jobs.write(run_dir, state="running", message="hello")
    manifest = json.loads((run_dir / MANIFEST).read_text())
    assert manifest["config"] == config and manifest[jobs.KEY]["message"] == "hello"


# --- a run's other JSON files: bounded, and a damaged one costs its own sections only ----------


@pytest.mark.parametrize("text", ['{"thresholds": ', "[1, 2]", None])
def test_a_damaged_calibration_json_is_refused_with_its_name(made, tmp_path, text):
    run_dir = tmp_path / "r"
    shutil.copytree(made, run_dir)
    f = run_dir / "calibration.json"
    if text is None:
        with open(f, "wb") as out:
            out.truncate(MAX_RUN_JSON_BYTES + 1)  # sparse: nothing on disk
    else:
        f.write_text(text)
    for run in (Run(run_dir), Run(run_dir, CachedReader(table_at, json_at))):
        with pytest.raises(ValueError, match="calibration.json"):
            run.calibration()


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """The demo run with its calibration.json cut short, as a crash of another program leaves
    it (ragdash writes it atomically)."""
    base = tmp_path_factory.mktemp("round5-calibration")
    run_dir = make_run(base / "demo", n_questions=8, seed=5)
    (run_dir / "calibration.json").write_text('{"thresholds": {"h": 0.')
    old = os.environ.get("RAGDASH_DEMO_RUN")
    os.environ["RAGDASH_DEMO_RUN"] = str(run_dir)
    yield run_dir
    if old is None:
        os.environ.pop("RAGDASH_DEMO_RUN", None)
    else:
        os.environ["RAGDASH_DEMO_RUN"] = old


@pytest.mark.parametrize("page", list(dict.fromkeys(p.name for p in PAGES)))
def test_every_page_renders_on_a_run_whose_calibration_json_is_damaged(damaged, page):
    at = open_app(page)  # asserts no exception box
    said = " ".join(e.value for e in at.error)
    if "calibration.json" in said:  # a page that needs it says which file and what to do
        assert "calibration.json cannot be read" in said.replace("\\", "")
        assert "calibrate stage again" in said and str(damaged) not in said
    if page in ("overview", "thresholds", "report"):  # the pages that need the calibration
        assert any("calibration" in e.value and "cannot be read" in e.value
                   for e in at.error), [e.value for e in at.error]


def test_a_damaged_table_is_refused_with_its_name_and_stage(made, tmp_path):
    run_dir = tmp_path / "r"
    shutil.copytree(made, run_dir)
    (run_dir / "ir_scores.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(ValueError, match=r"ir_scores.parquet cannot be read .*: run the score "
                                         "stage again"):
        Run(run_dir).read("ir_scores")
