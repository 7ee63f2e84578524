"""The test suite's own rules: test modules share code through tests/fixtures/ (or a conftest's
fixtures), never by importing one another; the browser tests live in tests/browser/ (one server
per worker); a hung test times out; a missing Chromium, local LLM or Ray skips locally and fails
in CI."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from fixtures import requires

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields of a statement that hold statements (an import is a statement: it sits in these
lists only, never inside an expression, so the walk skips the expressions, most of a tree)."""


def _imported(path: Path) -> set[str]:
    """Top-level module names that `path` imports, anywhere in the file."""
    names = set()
    stack = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        else:
            for block in _BLOCKS:
                stack.extend(getattr(node, block, None) or ())
    return names


def test_no_test_module_imports_another_or_a_conftest():
    bad = {str(p.relative_to(TESTS)): sorted(n for n in _imported(p)
                                              if n.startswith("test_") or n == "conftest")
           for p in TESTS.rglob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}


def test_imports_are_found_in_functions_too(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    from test_other import x\n    import conftest\n")
    assert _imported(mod) == {"test_other", "conftest"}
    mod.write_text("class C:\n    def f(self):\n        try:\n            pass\n"
                   "        except ImportError:\n            import test_a\n"
                   "        finally:\n            import test_b\n"
                   "    if x:\n        pass\n    else:\n        from test_c import y\n"
                   "match v:\n    case 1:\n        import test_d\n"
                   "with open(p) as f:\n    for _ in f:\n        import test_e\n"
                   "from . import test_relative\n")
    assert _imported(mod) == {"test_a", "test_b", "test_c", "test_d", "test_e"}


def test_browser_tests_live_in_tests_browser():
    assert sorted(p.name for p in TESTS.glob("test_browser*.py")) == []
    assert (TESTS / "browser" / "conftest.py").exists()


def test_a_hung_test_times_out(request):
    assert request.config.pluginmanager.hasplugin("timeout")
    assert 300 <= float(request.config.getini("timeout")) <= 900


def test_ci_script_runs_the_suite_with_ci_true():
    lines = [s.strip() for s in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "export CI=true" in lines
    assert lines.index("export CI=true") < lines.index("bash scripts/test.sh")


@pytest.mark.parametrize("value, ci", [("true", True), ("1", True), ("TRUE", True),
                                       ("", False), ("false", False)])
def test_in_ci_reads_the_ci_variable(monkeypatch, value, ci):
    monkeypatch.setenv("CI", value)
    assert requires.in_ci() is ci


@pytest.fixture
def absent(monkeypatch) -> str:
    """A requirement that is never met."""
    monkeypatch.setitem(requires.NEEDS, "absent-tool", (lambda: False, "absent-tool is gone"))
    return "absent-tool"


def test_a_missing_requirement_skips_locally(monkeypatch, absent):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="absent-tool is gone"):
        requires.require(absent)


def test_a_missing_requirement_fails_in_ci(monkeypatch, absent):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="absent-tool is gone; CI=true needs it"):
        requires.require(absent)


def test_a_present_requirement_passes_and_an_unknown_one_is_refused(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setitem(requires.NEEDS, "here", (lambda: True, "never said"))
    requires.require("here")
    with pytest.raises(KeyError, match="unknown requirement 'chrome'"):
        requires.require("chrome")


def test_the_marker_skips_locally_and_fails_in_ci(pytester, monkeypatch):
    """tests/conftest.py's `requires` marker, in a child pytest run."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH",
                                                                                "")]))
    # the child sessions need the conftest and pytester only: without the installed plugins
    # (langsmith's alone imports its client, about 1.2 CPU-s) each starts in half the time
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makepyfile(test_needs="""
import pytest
from fixtures import requires
requires.NEEDS["absent-tool"] = (lambda: False, "absent-tool is gone")

@pytest.mark.requires("absent-tool")
def test_needs_it():
    pass
""")
    monkeypatch.delenv("CI", raising=False)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(skipped=1)
    monkeypatch.setenv("CI", "true")
    failed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    failed.assert_outcomes(errors=1)  # in setup: the run fails all the same
    failed.stdout.fnmatch_lines(["*absent-tool is gone; CI=true needs it*"])


def test_apptest_waits_for_a_run_by_its_end_event_and_still_times_out():
    """tests/conftest.py's wait for AppTest runs: in use, back as soon as a run ends, and a
    run that does not end still fails with Streamlit's timeout error."""
    import time

    from streamlit.testing.v1 import AppTest
    from streamlit.testing.v1 import local_script_runner as lsr

    assert lsr.require_widgets_deltas.__module__ == "conftest"
    AppTest.from_string("import streamlit as st").run()  # Streamlit's first-run imports, untimed
    t0 = time.monotonic()
    at = AppTest.from_string("import streamlit as st\nst.write('done')").run()
    assert at.markdown[0].value == "done" and time.monotonic() - t0 < 2.5
    with pytest.raises(RuntimeError, match=r"timed out after 0.5\(s\)"):
        AppTest.from_string("import time\ntime.sleep(1.5)", default_timeout=0.5).run()
