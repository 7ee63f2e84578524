"""Shared fixtures: a tiny generic dataset and corpus in JSONL; the `requires` marker (a missing
Chromium, llama.cpp or Ray fails the test when CI=true, skips it otherwise)."""

import gc
import json
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl
from fixtures.requires import require

pytest_plugins = ["pytester"]  # tests/test_suite_layout.py runs child pytest sessions


DURATIONS = Path(__file__).with_name("durations.json")
"""Seconds each test file took in a whole run (`bash scripts/test.sh --record-durations`)."""


OWN_EMBEDDING_CACHE = {"tests/test_embedding_cache.py", "tests/test_cache_command.py",
                       "tests/test_evidence.py", "tests/test_run_reading.py"}
"""Test files about where the embedding cache lives and what it holds: their runs roots keep
their own (every other test shares the session's, `pytest_configure`)."""
OWN_INDEX_CACHE = {"tests/test_run_reading.py", "tests/test_sweep.py",
                   "tests/test_ray_executor.py"}
"""Test files about where the index cache lives, or whose runs must build their indexes (the
same files from Ray workers as from the local executor): their runs roots keep their own."""


def _own_caches() -> dict[str, set[str]]:
    """The session-wide cache folders (environment variable -> files that keep their own)."""
    from ragdash.rundir.root import EMBED_CACHE_DIR_ENV, INDEX_CACHE_DIR_ENV

    return {EMBED_CACHE_DIR_ENV: OWN_EMBEDDING_CACHE, INDEX_CACHE_DIR_ENV: OWN_INDEX_CACHE}


def pytest_configure(config: pytest.Config) -> None:
    """One embedding cache and one index cache for the whole session
    (`RAGDASH_EMBED_CACHE_DIR`, `RAGDASH_INDEX_CACHE_DIR`, inherited by the xdist workers and
    every process a test starts): a text embedded or a chunk set indexed by one test is read
    back by the next, and a process whose texts are all cached never loads MiniLM. Vectors
    depend on the text, model and precision alone, an index on its chunks and parameters, so
    sharing changes no result."""
    if hasattr(config, "workerinput"):
        return
    for env in _own_caches():
        if os.environ.get(env):
            continue
        shared = tempfile.mkdtemp(prefix=f"ragdash-test-{env.lower()}-")
        os.environ[env] = shared
        config.add_cleanup(lambda path=shared: shutil.rmtree(path, ignore_errors=True))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session):
    """No cyclic garbage collection while the test modules are imported, then what is alive
    (the libraries, about a million objects) moved out of the collector's reach (`gc.freeze`):
    the collector walked all of it again and again, half of each worker's collection (13.6 vs
    6.8 CPU-s) and a tenth of the page tests' time (the AppTest, survey, analysis and facts
    files: 69-77 vs 60-71 s, alternated). Objects are still freed when their last reference
    goes; only cycles among the frozen ones are never collected."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.freeze()


def _scan_components_once() -> None:
    """Streamlit's AppTest scans every installed distribution's metadata for v2 components on
    each `run()` (a server does it once, at start): about 0.3 CPU-s a run here, more than half
    of an AppTest page render. The installed packages do not change during a session, so the
    scan is done once per process."""
    import functools

    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_scan_components_once()


def _wait_for_runs_by_event() -> None:
    """AppTest waits for a script run by polling every millisecond whether the runner's list of
    events (one per element drawn) holds its end, so the waiting thread takes the GIL from the
    script a thousand times a second; waiting on the end event itself instead takes the page
    tests 8 % less CPU. The timeout and its error stay Streamlit's."""
    import threading

    from streamlit.runtime.scriptrunner import ScriptRunnerEvent
    from streamlit.testing.v1 import local_script_runner as lsr

    def wait(runner: lsr.LocalScriptRunner, timeout: float = 3) -> None:
        done = threading.Event()

        def on_event(sender: object, event: ScriptRunnerEvent, **_: object) -> None:
            if event == ScriptRunnerEvent.SHUTDOWN:
                done.set()

        runner.on_event.connect(on_event, weak=False)
        try:  # (a run that ended before the connect is seen by script_stopped)
            if runner.script_stopped() or done.wait(timeout):
                return
        finally:
            runner.on_event.disconnect(on_event)
        runner.request_stop()
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    lsr.require_widgets_deltas = wait


_wait_for_runs_by_event()


@pytest.fixture(autouse=True)
def _own_cache(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """The files of OWN_EMBEDDING_CACHE and OWN_INDEX_CACHE keep those caches in their runs
    roots."""
    file = request.node.nodeid.split("::")[0]
    for env, own in _own_caches().items():
        if file in own:
            monkeypatch.delenv(env, raising=False)
    yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", action="store_true",
                     help="write each test file's seconds to tests/durations.json")


LAST = {"tests/browser/test_browser_sessions.py"}
"""Files that take both cores by design (eight Chromium tabs beside busy loops): run last, they
slow the other worker's last small files; first, beside the heaviest browser files, they
starved those tests' waits (the evidence review needed a rerun when the two ran together)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The heaviest test files first (tests/durations.json), each file's tests in their order,
    `LAST` at the end: two workers take files in turn (`--dist loadfile`), so a heavy file
    started last would run alone at the end. xdist keeps this order only with
    `--no-loadscope-reorder` (scripts/test.sh); by default it sends the files with the most
    tests first."""
    try:
        seconds = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        seconds = {}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item.nodeid.split("::")[0], i)

    def key(item: pytest.Item) -> tuple:
        file = item.nodeid.split("::")[0]
        return file in LAST, -float(seconds.get(file, 0.0)), first[file]

    items.sort(key=key)  # stable: a file's tests keep their order


_SPENT: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _SPENT[report.nodeid.split("::")[0]] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        DURATIONS.write_text(json.dumps({f: round(s, 1) for f, s in sorted(
            _SPENT.items(), key=lambda x: -x[1])}, indent=1) + "\n")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.requires("ray", ...)`: each named need (fixtures/requires.py) present."""
    for mark in item.iter_markers("requires"):
        for name in mark.args:
            require(name)


@pytest.fixture
def generic(tmp_path):
    ds = write_jsonl(tmp_path / "qa.jsonl", [
        {"id": q, "question": t, "answer": a, "relevant_parts": p, "topic": "computing"}
        for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [
        {"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return ds, corpus
