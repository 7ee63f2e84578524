"""Failures end in one located message: a bad upload limit stops the dashboard with its message;
API keys echoed by a server are redacted before they are stored; any error escaping a stage (a
library's own exception, SystemExit, Ctrl-C, SIGTERM, a full disk, a process ended outright) is
recorded in run.json and named by the CLI; descending budgets, a one-class judge and an
unreachable Ray head are said plainly and fast."""

from __future__ import annotations

import errno
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.requires import require

from ragdash.cli import main
from ragdash.dashboard_settings import max_upload_mb
from ragdash.llm.clients import short
from ragdash.llm.types import LLMError
from ragdash.redact import MASK, redact, remember
from ragdash.rundir import Run

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-proj-Hardening3-SECRET-0123456789abcdef"


def error_lines(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("ragdash: error:")]


def stage_args(generic, run_dir: Path, command: str = "chunk", *extra: str) -> list[str]:
    ds, corpus = generic
    return [command, "--dataset", str(ds), "--corpus", str(corpus), "--chunker", "none",
            "--retrievers", "bm25", "--budgets", "20:60:20", "--run-dir", str(run_dir), "-q",
            *extra]


# --- 10: RAGDASH_MAX_UPLOAD_MB ----------------------------------------------------------------


@pytest.mark.parametrize(("value", "says"), [
    ("abc", "is not a positive whole number"),
    ("-5", "is not a positive whole number"),
    ("0", "is not a positive whole number"),
    ("1e9", "is not a positive whole number"),
    ("12.5", "is not a positive whole number"),
    ("99999", "is above 4096 MB"),
])
def test_a_bad_upload_limit_is_refused_naming_variable_value_and_range(value, says):
    with pytest.raises(ValueError) as raised:
        max_upload_mb({"RAGDASH_MAX_UPLOAD_MB": value})
    message = str(raised.value)
    assert f"RAGDASH_MAX_UPLOAD_MB={value!r}" in message and says in message
    assert "a whole number of megabytes from 1 to 4096" in message


def test_the_upload_limit_is_read_trimmed_and_bounded_by_streamlits():
    assert max_upload_mb({"RAGDASH_MAX_UPLOAD_MB": "  12 "}) == 12
    assert max_upload_mb({}) == 200 and max_upload_mb({"RAGDASH_MAX_UPLOAD_MB": " "}) == 200
    assert max_upload_mb({}, server_limit_mb=50) == 50  # the default never promises more
    assert max_upload_mb({"RAGDASH_MAX_UPLOAD_MB": "200"}, server_limit_mb=200) == 200
    with pytest.raises(ValueError, match=r"above Streamlit's own upload limit, "
                                         r"server.maxUploadSize = 200 MB.*--server.maxUploadSize "
                                         r"500"):
        max_upload_mb({"RAGDASH_MAX_UPLOAD_MB": "500"}, server_limit_mb=200)


@pytest.mark.parametrize("page", [None, "data"])
def test_the_dashboard_stops_with_the_message_not_a_traceback(monkeypatch, page):
    from fixtures.apptest import open_app

    monkeypatch.setenv("RAGDASH_MAX_UPLOAD_MB", "abc")
    at = open_app(page)  # (no exception box: open_app asserts it)
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # markdown escapes undone
    assert len(errors) == 1 and "RAGDASH_MAX_UPLOAD_MB='abc'" in errors[0], errors
    assert "positive whole number" in errors[0]
    assert not at.title  # no page ran


def test_the_data_page_uses_the_checked_limit(monkeypatch, tmp_path):
    from fixtures.apptest import open_app
    from fixtures.make_run import make_run

    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(make_run(tmp_path / "demo", n_questions=6)))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    monkeypatch.setenv("RAGDASH_MAX_UPLOAD_MB", " 12 ")
    at = open_app("data")
    assert any("Uploads up to 12 MB each" in c.value for c in at.caption)


# --- 12: API keys in error messages -----------------------------------------------------------


def test_redact_hides_keys_tokens_and_their_json_spellings():
    assert SECRET not in redact(f"invalid key {SECRET} given")
    assert redact("Authorization: Bearer abc.def-ghi_jkl") == f"Authorization: {MASK}"
    assert redact('{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}') == \
        f'{{"authorization": "{MASK}"}}'
    assert redact("header was 'Bearer tok_0123456789'") == f"header was 'Bearer {MASK}'"
    assert redact("GET /v1?api_key=abcdef123456&model=x") == f"GET /v1?api_key={MASK}&model=x"
    assert redact('{"x-api-key": "k-9876543210"}') == f'{{"x-api-key": "{MASK}"}}'
    # a configured key of another shape, split by JSON escaping (\/) or URL encoding
    key = "tok_live_ab/cd+ef==0123456789XYZ"
    remember(key)
    for spelled in (key, key.replace("/", "\\/"), "tok_live_ab%2Fcd%2Bef%3D%3D0123456789XYZ"):
        assert redact(f"echo: {spelled}!") == f"echo: {MASK}!"
    # ordinary words are left alone
    for text in ("request refused (400): model not found", "the bearer of bad news",
                 "authentication refused (401); check the API key"):
        assert redact(text) == text


def test_errors_are_redacted_where_they_are_made_even_when_cut():
    assert SECRET not in str(LLMError(f"refused: Authorization: Bearer {SECRET}"))
    cut = short("x" * 280 + f" Bearer {SECRET} and more", n=300)
    assert SECRET[:12] not in cut and len(cut) <= 300


def test_a_400_echoing_the_authorization_header_stores_no_key(generic, tmp_path, monkeypatch,
                                                              capsys, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # the LLM cache lives under ./runs
    echo = Reply(status=400, error="invalid header: Authorization: {authorization}")
    with FakeLLMServer(default=echo) as srv:
        code = main(stage_args(generic, tmp_path / "r", "generate", "--gen-budget", "60",
                               "--llm-backend", "openai", "--llm-model", "fake-model",
                               "--llm-url", srv.openai_url))
        sent = {r["authorization"] for r in srv.chat_requests()}
    assert sent == {f"Bearer {SECRET}"}  # the server did see it, and echoed it
    out, err = capsys.readouterr()
    assert code == 0, err
    errors = Run(tmp_path / "r").read("answers")["error"].dropna().tolist()
    assert errors and all("request refused (400)" in e and MASK in e for e in errors)
    assert not any(SECRET in e or "Bearer sk-" in e for e in errors)
    assert SECRET not in out + err + caplog.text
    for f in tmp_path.rglob("*"):  # answers.parquet, run.json, the LLM cache, logs
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


# --- 14: any exception escaping a stage -------------------------------------------------------


class LibraryBroke(Exception):
    """An exception type the CLI knows nothing about."""


def _stage_raises(monkeypatch, exc: BaseException) -> None:
    import ragdash.stages.chunk as chunk

    def boom(self, docs, progress=None):
        raise exc

    monkeypatch.setattr(chunk.ChunkBatch, "__call__", boom)


@pytest.mark.parametrize(("exc", "message"), [
    (LibraryBroke("the library broke"), "LibraryBroke: the library broke"),
    (SystemExit(3), "a library tried to end the process (SystemExit 3)"),
    (MemoryError(), "MemoryError"),
])
def test_an_unknown_error_in_a_stage_is_recorded_and_located(generic, tmp_path, monkeypatch,
                                                             capsys, exc, message):
    _stage_raises(monkeypatch, exc)
    assert main(stage_args(generic, tmp_path / "r")) == 2
    err = capsys.readouterr().err
    assert error_lines(err) == [f"ragdash: error: chunk: {message}"], err
    assert "Traceback" not in err
    stage = Run(tmp_path / "r").stage("chunk")
    assert stage["status"] == "failed" and stage["error"] == message
    assert Run(tmp_path / "r").stage("ingest")["status"] == "done"


def test_ctrl_c_in_a_stage_marks_it_interrupted(generic, tmp_path, monkeypatch, capsys):
    _stage_raises(monkeypatch, KeyboardInterrupt())
    assert main(stage_args(generic, tmp_path / "r")) == 130
    err = capsys.readouterr().err
    assert "ragdash: interrupted during stage chunk; finished work is kept" in err
    assert Run(tmp_path / "r").stage("chunk")["status"] == "interrupted"


def _python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_sigterm_in_a_stage_marks_it_interrupted(generic, tmp_path):
    code = ("import os, signal, sys, time\n"
            "import ragdash.stages.chunk as chunk\n"
            "def stop(self, docs, progress=None):\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    time.sleep(30)\n"
            "chunk.ChunkBatch.__call__ = stop\n"
            "from ragdash.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    out = _python(code, *stage_args(generic, tmp_path / "r"))
    assert out.returncode == 130, out.stderr
    assert "ragdash: interrupted during stage chunk" in out.stderr
    assert Run(tmp_path / "r").stage("chunk")["status"] == "interrupted"


def test_a_process_ended_outright_in_a_stage_is_still_reported(generic, tmp_path):
    """What Ray does to its driver when its node dies: exit(1) from C++, no Python exception.
    The watcher beside a run on a non-local executor marks the stage and prints the line."""
    code = ("import os, sys\n"
            "from ragdash.cli import build_parser, overrides_from\n"
            "from ragdash.config import load_config\n"
            "from ragdash.stages.runner import run_stages\n"
            "class Dies:\n"
            "    name, in_process = 'dies', False\n"
            "    def workers(self): return 1\n"
            "    def map_batches(self, *a, **k): os._exit(1)\n"
            "    def close(self): pass\n"
            "args = sys.argv[1:]\n"
            "cfg = load_config(None, overrides_from(build_parser().parse_args(args)))\n"
            "run_stages(cfg, args[args.index('--run-dir') + 1], ['ingest', 'chunk'], "
            "executor=Dies())\n")
    out = _python(code, *stage_args(generic, tmp_path / "r"))
    assert out.returncode == 1
    lines = error_lines(out.stderr)
    assert len(lines) == 1 and lines[0].startswith("ragdash: error: chunk: the ragdash process")
    assert "ended abruptly" in lines[0]
    stage = Run(tmp_path / "r").stage("chunk")
    assert stage["status"] == "failed" and "ended abruptly" in stage["error"]


def test_a_crashed_ray_worker_is_recorded_and_located(generic, tmp_path, monkeypatch, capsys):
    require("ray")
    import ray.exceptions as exceptions

    from ragdash.executors.ray_data import RayExecutor

    def crash(self, *args, **kwargs):
        raise exceptions.WorkerCrashedError()

    monkeypatch.setattr(RayExecutor, "workers", lambda self: 2)  # no cluster needed
    monkeypatch.setattr(RayExecutor, "map_batches", crash)
    monkeypatch.setattr(RayExecutor, "close", lambda self: None)
    assert main(stage_args(generic, tmp_path / "r", "chunk", "--executor", "ray")) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(
        "ragdash: error: chunk: WorkerCrashedError: The worker died unexpectedly"), lines
    stage = Run(tmp_path / "r").stage("chunk")
    assert stage["status"] == "failed" and stage["error"].startswith("WorkerCrashedError")


# --- 15d: a full disk --------------------------------------------------------------------------


def _disk_full_on(monkeypatch, name: str) -> None:
    """Writing the run file `name` (through its temp file) fails as a full disk does."""
    real = pd.DataFrame.to_parquet

    def to_parquet(self, path, *args, **kwargs):
        if Path(path).name.startswith(f".{name}."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", to_parquet)


def test_a_full_disk_names_the_file_and_fails_the_stage(generic, tmp_path, monkeypatch, capsys):
    _disk_full_on(monkeypatch, "examples.parquet")
    assert main(stage_args(generic, tmp_path / "r", "ingest")) == 2
    target = tmp_path / "r" / "examples.parquet"
    lines = error_lines(capsys.readouterr().err)
    assert lines == [f"ragdash: error: ingest: {target}: No space left on device (the disk is "
                     "full: free some space and run again; finished stages are kept)"]
    stage = Run(tmp_path / "r").stage("ingest")
    assert stage["status"] == "failed" and str(target) in stage["error"]
    assert not [p for p in (tmp_path / "r").iterdir() if p.name.startswith(".examples")]


# --- 15a, 15b: messages -------------------------------------------------------------------------


def test_a_descending_budget_range_says_so_and_how_to_write_it(generic, tmp_path, capsys):
    from ragdash.budget import parse_budgets

    with pytest.raises(ValueError, match=r"'1000:100:100' descends \(START 1,000 is above STOP "
                                         r"100\): write it smallest first, '100:1000:100'"):
        parse_budgets("1000:100:100")
    with pytest.raises(ValueError, match="write it smallest first, '1:5'"):
        parse_budgets("5:1")
    args = stage_args(generic, tmp_path / "r", "run")
    args[args.index("--budgets") + 1] = "1000:100:100"
    assert main(args) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "descends" in lines[0] and "'100:1000:100'" in lines[0]
    assert "positive integers" not in lines[0]


def _one_class_tables(score: int = 2, questions: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(questions)]
    ir = pd.DataFrame([(q, r, b, float(rng.random())) for q in qids for r in ("bm25", "sim")
                       for b in (100, 1000)], columns=["qid", "retriever", "budget", "score"])
    judged = pd.DataFrame([(q, s, score) for q in qids for s in ("bm25", "sim", "llm_only")],
                          columns=["qid", "system", "score"])
    return ir, judged


def test_a_one_class_judge_is_explained_not_scikit_learns_words():
    from ragdash.calibration import ProbabilisticEstimator, cross_validate

    ir, judged = _one_class_tables(score=2)
    with pytest.raises(ValueError) as raised:
        cross_validate(ir, judged, budget=1000)
    assert str(raised.value) == ("every judged answer got score 2: there is nothing to "
                                 "separate, so no predictor can be fitted; judge more answers "
                                 "or check the judge")
    ir, judged = _one_class_tables(score=5)
    with pytest.raises(ValueError, match="in judge class 5: there is nothing to separate"):
        ProbabilisticEstimator().fit(ir, judged)


def test_a_one_class_run_calibrates_and_says_why_nothing_was_fitted(generic, tmp_path,
                                                                    monkeypatch, capsys):
    ds, corpus = generic
    rows = [json.loads(x) for x in ds.read_text().splitlines()]
    more = rows + [{**r, "id": r["id"] + "b", "question": r["question"] + " Again?"}
                   for r in rows]  # 8 questions: enough to cross-validate
    ds.write_text("".join(json.dumps(r) + "\n" for r in more))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)

    def all_twos(body):
        first = body["messages"][0]["content"]
        if "Scoring Criteria" in first:
            n = len(re.findall(r"^candidate answer \d+:", first, flags=re.M))
            return Reply(text=json.dumps({"scores": [2] * n}))
        return Reply(text="An answer.")

    with FakeLLMServer(default=all_twos) as srv:
        code = main(stage_args(generic, tmp_path / "r", "calibrate", "--gen-budget", "60",
                               "--llm-backend", "openai", "--llm-model", "fake-model",
                               "--llm-url", srv.openai_url))
    out, err = capsys.readouterr()
    assert code == 0, err
    said = ("every judged answer got score 2: there is nothing to separate, so no predictor "
            "can be fitted; judge more answers or check the judge")
    assert said in out and "np.int64" not in out + err
    data = Run(tmp_path / "r").calibration()
    assert data.estimator_verdict == f"not cross-validated: {said}"
    assert data.evidence and data.shares  # the rest is still written


# --- 15c: an unreachable Ray head ---------------------------------------------------------------


def _listener(answer) -> tuple[int, threading.Event]:
    """A local TCP port where `answer(conn)` handles each connection (not a Ray head)."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        with server:
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                answer(conn)

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1], stop


@pytest.fixture(scope="module")
def startup() -> float:
    """The seconds of starting Python with ragdash and Ray imported, on this loaded machine:
    measured once for the module's three runs on an unreachable head (each run's time beyond
    it is what the address check itself costs)."""
    require("ray")
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "import ragdash.cli, ragdash.executors, ray"],
                   check=True, timeout=120, cwd=ROOT)
    return time.monotonic() - start


def _run_on_ray(generic, tmp_path, address: str, startup: float
                ) -> tuple[subprocess.CompletedProcess, float]:
    """The run's outcome and the seconds it took beyond `startup`."""
    require("ray")
    start = time.monotonic() + startup
    try:
        out = subprocess.run([sys.executable, "-m", "ragdash.cli",
                              *stage_args(generic, tmp_path / "r", "run", "--executor", "ray",
                                          "--ray-address", address)],
                             capture_output=True, text=True, timeout=40, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ragdash run on the unreachable {address} still ran after 40 s")
    return out, time.monotonic() - start


def test_a_port_that_is_no_ray_head_fails_at_once_with_the_address(generic, tmp_path, startup):
    port, stop = _listener(lambda conn: conn.close())  # accepts, then hangs up
    try:
        out, seconds = _run_on_ray(generic, tmp_path, f"127.0.0.1:{port}", startup)
    finally:
        stop.set()
    lines = error_lines(out.stderr)
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert f"'127.0.0.1:{port}' accepts connections but is no Ray head" in lines[0]
    assert seconds < 15
    assert not Run(tmp_path / "r").manifest.get("stages")  # stopped before any work


@pytest.mark.slow
def test_a_head_that_never_answers_fails_within_15_s(generic, tmp_path, startup):
    held: list[socket.socket] = []
    port, stop = _listener(held.append)  # accepts and says nothing
    try:
        out, seconds = _run_on_ray(generic, tmp_path, f"127.0.0.1:{port}", startup)
    finally:
        stop.set()
        for conn in held:
            conn.close()
    lines = error_lines(out.stderr)
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert f"'127.0.0.1:{port}' accepted the connection but did not answer within 5 s" \
        in lines[0]
    assert seconds < 15


@pytest.mark.slow
def test_an_unroutable_address_fails_within_15_s(generic, tmp_path, startup):
    """Dropped (10 s connection check), refused, or answered by a proxy that is no Ray head
    (5 s of Ray's own attempts): whatever the network does with it, within 15 s."""
    out, seconds = _run_on_ray(generic, tmp_path, "10.255.255.1:6379", startup)
    lines = error_lines(out.stderr)
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "'10.255.255.1:6379'" in lines[0] and seconds < 15
