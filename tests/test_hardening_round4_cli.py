"""Issue 31, round four, on the command line and the dashboard's checks: a stage failed by a dead
raylet still ends with its located error line (item 2), every path a dashboard user names is
checked against the allowed roots (10), untrusted names reach the terminal escaped and cut
(11), a killed job's BM25 indexer dies with it and its temp folder is removed (12), and
`ragdash metrics` says when every LLM call failed, and why (13)."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.pipeline import llm_args

from ragdash.cli import TerminalFormatter, main
from ragdash.rundir import Run
from ragdash.terminal import name, names, safe
from ragdash.ui import paths

ROOT = Path(__file__).resolve().parents[1]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def error_lines(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("ragdash: error:")]


def stage_args(generic, run_dir: Path, command: str = "chunk", *extra: str) -> list[str]:
    ds, corpus = generic
    return [command, "--dataset", str(ds), "--corpus", str(corpus), "--chunker", "none",
            "--retrievers", "bm25", "--budgets", "20:60:20", "--run-dir", str(run_dir), "-q",
            *extra]


def _python(code: str, *args: str, timeout: float = 180, env: dict | None = None
            ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


# --- 2: a stage failed by a dead raylet, then the process ended by Ray ---------------------------

_RAY_DIES = """
import os, sys
import ray.exceptions
from ragdash.executors.ray_data import RayExecutor
def died(self, *args, **kwargs):
    raise ray.exceptions.LocalRayletDiedError()
def close(self):  # what Ray does to a driver whose raylet died: exit(1), from C++
    {close}
RayExecutor.workers = lambda self: 2
RayExecutor.map_batches = died
RayExecutor.close = close
from ragdash.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.requires("ray")
def test_a_stage_failed_by_a_dead_raylet_is_said_when_ray_then_ends_the_process(generic,
                                                                                tmp_path):
    """The stage records LocalRayletDiedError; Ray then ends the driver before the command can
    print its line: the watcher prints it, located, with the recorded error. When the process
    lives to print its own line (exit 2), the watcher says nothing more."""
    out = _python(_RAY_DIES.format(close="os._exit(1)"),
                  *stage_args(generic, tmp_path / "r", "chunk", "--executor", "ray"))
    assert out.returncode == 1  # Ray's own exit status: the process was ended outright
    lines = error_lines(out.stderr)
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("ragdash: error: chunk: LocalRayletDiedError: The task's local "
                               "raylet died"), lines
    assert "the process then ended abruptly" in lines[0] and "Ray's logs" in lines[0]
    assert "Traceback" not in out.stderr
    stage = Run(tmp_path / "r").stage("chunk")
    assert stage["status"] == "failed" and stage["error"].startswith("LocalRayletDiedError")

    out = _python(_RAY_DIES.format(close="pass"),
                  *stage_args(generic, tmp_path / "r2", "chunk", "--executor", "ray"))
    assert out.returncode == 2, out.stderr
    time.sleep(1.5)  # a watcher that would speak has had the time to
    assert error_lines(out.stderr) == [
        "ragdash: error: chunk: LocalRayletDiedError: The task's local raylet died. Check "
        "raylet.out for more information."], out.stderr


# --- 10: every path the dashboard user names -----------------------------------------------------


@pytest.fixture
def roots(tmp_path, monkeypatch):
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    runs.mkdir()
    outside.mkdir()
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(runs))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(runs / "none"))
    monkeypatch.delenv(paths.DATA_ROOTS_ENV, raising=False)
    (outside / "tokenizer.json").write_text("{}")
    (outside / "model").mkdir()
    (runs / "tokenizer.json").write_text("{}")
    return runs, outside


def test_every_path_a_run_config_names_is_checked(roots):
    runs, outside = roots
    tok, model = str(outside / "tokenizer.json"), str(outside / "model")
    cfg = {"tokenizer": tok,
           "chunker": {"method": "tokens", "params": {"tokenizer": tok, "model": model}},
           "retrievers": {"params": {"sim": {"model": model}},
                          "resolved": {"mmr": {"model": model}}},
           "llm": {"backend": "local", "model": str(outside / "m.gguf")},
           "judge": {"llm": {"model": str(outside / "j.gguf")}},  # local by default
           "metrics": {"llm": {"backend": "openai", "model": "gpt-4o"}}}  # a name, not a path
    refused = paths.refused_config(cfg)
    assert [m.split(":")[0] for m in refused] == [
        "tokenizer", "chunker.params.model", "llm.model", "judge.llm.model"], refused
    assert all("is outside the folders this dashboard may read" in m for m in refused)
    # bundled names are no paths; a path under the runs root is allowed
    assert paths.refused_config({
        "tokenizer": "llama3", "chunker": {"params": {"tokenizer": str(runs / "tokenizer.json"),
                                                      "model": "all-MiniLM-L6-v2"}},
        "retrievers": {"params": {"sim": {"model": "minilm"}}},
        "llm": {"backend": "local", "model": "qwen-1.5b"},
        "judge": {"llm": {"backend": "local", "model": "smollm2"}}}) == []


def test_the_build_page_refuses_a_sweep_tokenizer_outside_the_roots(roots):
    _, outside = roots
    at = open_app("build")
    at.toggle(key="build_sweep").set_value(True).run()
    at.selectbox(key="build_vary_key0").set_value("tokenizer").run()
    at.text_input(key="build_vary_values0").input(f"llama3, {outside / 'tokenizer.json'}").run()
    assert not at.exception, at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert (f"Sweep: tokenizer: {outside / 'tokenizer.json'} is outside the folders this "
            "dashboard may read") in shown, shown
    assert at.button(key="build_start").disabled


def test_the_build_page_refuses_a_retriever_model_outside_the_roots(roots):
    _, outside = roots
    at = open_app("build")
    at.multiselect(key="build_rets").set_value(["bm25", "sim"]).run()
    at.text_input(key="build_r_paper_sim_model").input(str(outside / "model")).run()
    assert not at.exception, at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert f"retrievers.params.sim.model: {outside / 'model'} is outside the folders" in shown, \
        shown
    assert at.button(key="build_start").disabled


# --- 11: untrusted names on the terminal --------------------------------------------------------


def test_terminal_text_is_escaped_and_cut():
    assert safe("a\x1b[31mb\x00\r\u202ec\nd\te") == "a\\x1b[31mb\\x00\\r\\u202ec\nd\te"
    assert safe("x" * 30, line_chars=10) == "xxxxxxxxxx… (20 more characters)"
    assert name("pk\x00\n") == "'pk\\x00\\n'"
    long = name("y" * 100, most=10)
    assert long.startswith("'yyyyyyyyyy…'") and "90 more characters" in long
    assert names(["a", "b", "c"], most=2) == "['a', 'b', … (1 more)]"


def test_log_lines_are_escaped():
    record = logging.LogRecord("ragdash", logging.WARNING, __file__, 1, "skipped %s", ("a\x1b]0;",),
                               None)
    assert TerminalFormatter("%(message)s").format(record) == "skipped a\\x1b]0;"


def _binary_header(path: Path) -> Path:
    path.write_bytes(bytes(range(9)) + b"\x1b[31mpk\x1b]0;owned\x07," + b"\xc3\xa9" * 2000
                     + b",x\nb,c,d\n")
    return path


def test_a_binary_labels_file_is_reported_escaped(tmp_path, capsys):
    run = make_run(tmp_path / "run", n_questions=4, seed=1)
    bad = _binary_header(tmp_path / "labels.csv")
    assert main(["label", "import", "--run-dir", str(run), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "missing column" in err and "\\x00\\x01\\x02" in err and "\\x1b[31mpk" in err, err
    assert not CONTROL.search(err), repr(err[:400])
    assert max(map(len, err.splitlines())) < 2100  # each line cut: 2,000 characters of it


def test_a_dataset_with_binary_column_names_is_reported_escaped_and_cut(generic, tmp_path,
                                                                       capsys):
    _, corpus = generic
    bad = _binary_header(tmp_path / "qa.csv")
    assert main(["ingest", "--dataset", str(bad), "--corpus", str(corpus), "--run-dir",
                 str(tmp_path / "r"), "-q"]) == 2
    err = capsys.readouterr().err
    line = error_lines(err)[0]
    assert "columns found: ['\\x00\\x01" in line and "more characters)" in line, line
    assert not CONTROL.search(err) and len(line) < 1000, repr(line)


def test_labeller_names_from_a_file_are_printed_escaped(tmp_path, capsys):
    run = make_run(tmp_path / "run", n_questions=8, seed=1)
    sample = tmp_path / "sample.csv"
    assert main(["label", "export", "--run-dir", str(run), "--n", "12", "-o", str(sample)]) == 0
    df = pd.read_csv(sample)
    filled = tmp_path / "labels.csv"
    pd.concat([df.assign(label="correct", labeller="\x1b[31mEve\x1b]0;owned\x07"),
               df.assign(label="wrong", labeller="Bob")]).to_csv(filled, index=False)
    capsys.readouterr()
    assert main(["label", "import", "--run-dir", str(run), str(filled)]) == 0
    assert main(["label", "status", "--run-dir", str(run)]) == 0
    out = capsys.readouterr().out
    assert "Labellers \\x1b[31mEve\\x1b]0;owned\\x07 and Bob" in out, out
    assert not CONTROL.search(out), repr(out[:400])


# --- 12: a killed job's BM25 indexer and its temp folder ----------------------------------------

_BM25_JOB = """
import os, sys
import pandas as pd
from ragdash.retrieval.bm25 import BM25
cache, site = sys.argv[1], sys.argv[2]
os.environ["PYTHONPATH"] = site  # the indexer child starts, then waits in sitecustomize
BM25(pd.DataFrame({"chunk_id": ["a", "b"], "text": ["one text", "another text"]}), cache)
"""


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux parent-death signal")
def test_a_killed_jobs_indexer_dies_with_it_and_its_temp_folder_is_removed(tmp_path,
                                                                           monkeypatch):
    from ragdash.retrieval import base

    cache, site = tmp_path / "_index_cache", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import time\ntime.sleep(120)\n")
    job = subprocess.Popen([sys.executable, "-c", _BM25_JOB, str(cache), str(site)], cwd=ROOT)
    child = None
    try:
        deadline = time.monotonic() + 60
        while child is None and time.monotonic() < deadline:
            child = next(iter(_children(job.pid)), None)
            time.sleep(0.2)
        assert child is not None, "the indexer child did not start"
        os.kill(job.pid, signal.SIGKILL)
        job.wait()
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the bm25 indexer outlived its killed job"
    finally:
        job.kill()
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
    left = list(cache.glob(".bm25-pisa-*"))
    assert len(left) == 1 and json.loads((left[0] / base.OWNER).read_text())["pid"] == job.pid
    # the next start removes it once it is old enough (its owner is gone); not before
    assert base.remove_stale_builds(cache) == []
    monkeypatch.setattr(base, "STALE_AFTER_S", 0.0)
    from ragdash.retrieval.bm25 import BM25

    chunks = pd.DataFrame({"chunk_id": ["a", "b"], "text": ["one text", "another text"]})
    assert BM25(chunks, cache).search(["another"])[0][0][0] == "b"
    assert not list(cache.glob(".bm25-pisa-*"))


def test_only_stale_temp_folders_of_gone_owners_are_removed(tmp_path):
    from ragdash.retrieval import base

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    me = base._owner()
    old = time.time() - base.STALE_AFTER_S - 60

    def temp(name: str, owner: dict | None, mtime: float) -> Path:
        d = tmp_path / name
        d.mkdir()
        if owner is not None:
            (d / base.OWNER).write_text(json.dumps(owner))
        os.utime(d, (mtime, mtime))
        return d

    dead = temp(".bm25-pisa-0123456789abcdef-abcd_123", {**me, "pid": int(gone)}, old)
    young = temp(".bm25-pisa-0123456789abcdef-abcd_124", {**me, "pid": int(gone)}, time.time())
    live = temp(".faiss-0123456789abcdef-abcd_125", me, old)
    elsewhere = temp(".faiss-0123456789abcdef-abcd_126", {**me, "host": "other"}, old)
    unknown = temp(".faiss-0123456789abcdef-abcd_127", None, old)
    ancient = temp(".faiss-0123456789abcdef-abcd_128", None, old - base.UNKNOWN_STALE_AFTER_S)
    other = temp(".not-ours", {**me, "pid": int(gone)}, old)
    assert sorted(base.remove_stale_builds(tmp_path)) == sorted([dead, ancient])
    assert all(p.exists() for p in (young, live, elsewhere, unknown, other))


def test_a_build_another_process_finished_meanwhile_is_kept_not_replaced(tmp_path):
    """Two runs sharing an index cache build the same index at once: the first to finish keeps
    its folder (the other run may be reading it), the second drops its own copy."""
    from ragdash.retrieval import base

    def theirs_lands_meanwhile(path: Path) -> None:
        (path / "index").write_text("ours")
        other = tmp_path / "idx-key"  # what the other process's rename leaves
        other.mkdir()
        (other / "index").write_text("theirs")
        (other / base.COMPLETE).write_text("ok")

    final = base.cached_build(tmp_path, "idx-key", theirs_lands_meanwhile)
    assert (final / "index").read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["idx-key"]  # our temp folder is gone
    leftover = tmp_path / "idx-old"  # a folder no build completed is replaced
    leftover.mkdir()
    (leftover / "index").write_text("half")
    again = base.cached_build(tmp_path, "idx-old", lambda p: (p / "index").write_text("new"))
    assert (again / "index").read_text() == "new" and (again / base.COMPLETE).exists()


def test_one_folder_can_hold_the_index_cache_of_every_runs_root(tmp_path, monkeypatch):
    """RAGDASH_INDEX_CACHE_DIR: an index depends on its chunks and parameters alone, so runs
    roots can share one; a second runs root indexes nothing again."""
    from ragdash.retrieval.bm25 import BM25
    from ragdash.rundir.root import INDEX_CACHE, INDEX_CACHE_DIR_ENV, RunsRoot

    chunks = pd.DataFrame({"chunk_id": ["a", "b"], "text": ["one text", "another text"]})
    monkeypatch.setenv(INDEX_CACHE_DIR_ENV, str(tmp_path / "shared"))
    first, second = RunsRoot(tmp_path / "a"), RunsRoot(tmp_path / "b")
    assert first.index_cache == second.index_cache == tmp_path / "shared" / INDEX_CACHE
    BM25(chunks, first.index_cache, k=1)

    def files() -> dict[Path, int]:
        return {f: f.stat().st_mtime_ns for f in first.index_cache.rglob("*")
                if f.is_file() and f.suffix != ".log"}

    built = files()
    assert BM25(chunks, second.index_cache, k=1).search(["another"])[0][0][0] == "b"
    assert files() == built  # nothing built or written again
    monkeypatch.delenv(INDEX_CACHE_DIR_ENV)
    assert RunsRoot(tmp_path / "a").index_cache == tmp_path / "a" / INDEX_CACHE


# --- 13: `ragdash metrics` when every call failed -----------------------------------------------


def test_metrics_says_that_every_call_failed_and_why(generic, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    ds, corpus = generic
    run_dir = tmp_path / "r"
    with FakeLLMServer(default="An answer.") as srv:  # BM25 alone: no MiniLM to load
        assert main(["generate", "--dataset", str(ds), "--corpus", str(corpus),
                     *llm_args(srv.openai_url, run_dir, "--retrievers", "bm25")]) == 0
    capsys.readouterr()
    with FakeLLMServer(default=Reply(status=500, error="model overloaded")) as srv:
        code = main(["metrics", "--run-dir", str(run_dir), "--use", "faithfulness", "-q",
                     "--set", f"llm.base_url={srv.openai_url}", "--set", "llm.retries=0"])
        asked = len(srv.chat_requests())
    out, err = capsys.readouterr()
    assert code == 2 and asked == 8  # 4 questions x (BM25 + LLM only), all failed
    assert "measured with 0 LLM calls" not in out + err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(
        "ragdash: error: metrics: no answer measured: the LLM steps of all 4 answers to measure "
        "failed (answer_claims: openai fake-model: server error 500"), err
    assert "(4 answers)" in lines[0] and "run again" in lines[0]
    table = Run(run_dir).read("metrics")
    assert table["faithfulness"].isna().all() and table["error"].notna().sum() == 4


def test_a_model_name_is_no_path_but_a_gguf_outside_the_roots_is():
    """The local backend's model named 'gpt-4o' reads no file: not refused; a .gguf or a
    folder path is checked against the allowed roots."""
    from ragdash.ui.paths import named_paths

    names = named_paths({"judge": {"llm": {"backend": "local", "model": "gpt-4o"}},
                         "generation": {"llm": {"backend": "local", "model": "qwen-1.5b"}}})
    assert names == []
    paths = named_paths({"judge": {"llm": {"model": "/etc/model.gguf"}},
                         "generation": {"llm": {"model": "../m/x"}}})
    assert sorted(k for k, _ in paths) == ["generation.llm.model", "judge.llm.model"]
