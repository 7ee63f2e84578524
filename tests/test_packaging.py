"""ragdash installs as a library: pyproject declares what requirements*.txt install, the wheel
carries the bundled sample, and the library and its command line run without Streamlit."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PYPROJECT_BUILD = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]


def _requirements(name: str) -> dict[str, Requirement]:
    """A requirements file's own lines (not its `-r` includes), by canonical name."""
    out = {}
    for line in (ROOT / name).read_text().splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith(("#", "-r")):
            req = Requirement(line)
            out[canonicalize_name(req.name)] = req
    return out


def _declared(reqs: list[str]) -> dict[str, Requirement]:
    out = {}
    for text in reqs:
        req = Requirement(text)
        if canonicalize_name(req.name) != "ragdash":  # an extra that includes others
            out[canonicalize_name(req.name)] = req
    return out


@pytest.mark.parametrize("file, declared", [
    ("requirements.txt", [*PYPROJECT["dependencies"],
                          *PYPROJECT["optional-dependencies"]["dashboard"]]),
    ("requirements-ray.txt", PYPROJECT["optional-dependencies"]["ray"]),
    ("requirements-dev.txt", PYPROJECT["optional-dependencies"]["dev"]),
])
def test_requirements_and_pyproject_name_the_same_packages(file, declared):
    pinned, wanted = _requirements(file), _declared(declared)
    assert set(pinned) == set(wanted), (f"{file} and pyproject.toml differ: only in {file}: "
                                        f"{sorted(set(pinned) - set(wanted))}; only in "
                                        f"pyproject: {sorted(set(wanted) - set(pinned))}")
    for name, req in pinned.items():
        want = wanted[name]
        assert req.extras == want.extras, name
        for spec in req.specifier:  # a pin of setup's must satisfy the library's range
            if spec.operator == "==":
                assert want.specifier.contains(spec.version, prereleases=True), (name, want)
            else:
                assert str(spec) in {str(s) for s in want.specifier}, (name, str(req),
                                                                       str(want))


def test_the_dashboard_is_an_extra_and_streamlit_is_not_a_core_dependency():
    core = _declared(PYPROJECT["dependencies"])
    assert "streamlit" not in core and "torch" in core
    assert "streamlit" in _declared(PYPROJECT["optional-dependencies"]["dashboard"])


@pytest.mark.slow
def test_the_wheel_carries_the_sample_and_the_dashboards_component(tmp_path):
    # the build backend pyproject.toml names, called as `pip wheel --no-build-isolation` calls
    # it (PEP 517's build_wheel, in the project folder), without pip's own start (2 CPU-s)
    backend = PYPROJECT_BUILD["build-backend"]
    subprocess.run([sys.executable, "-c", f"import sys, {backend} as b; "
                    "print(b.build_wheel(sys.argv[1]))", str(tmp_path)],
                   check=True, capture_output=True, cwd=ROOT, timeout=300)
    wheel, = tmp_path.glob("ragdash-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        sample = z.getinfo("ragdash/sample/hotpot_dev_distractor_v1_subset1186.json.gz")
    assert sample.file_size == (ROOT / "data" / Path(sample.filename).name).stat().st_size
    assert any(n.startswith("ragdash/ui/threshold_drag/frontend/") for n in names)
    assert not any(n.startswith(("tests/", "app_pages/", "data/")) for n in names)


BLOCK_STREAMLIT = """
import sys
class _NoStreamlit:
    def find_spec(self, name, path=None, target=None):
        if name == "streamlit" or name.startswith("streamlit."):
            raise ModuleNotFoundError("No module named 'streamlit' (blocked by the test)")
sys.meta_path.insert(0, _NoStreamlit())
import ragdash, ragdash.config, ragdash.stages.runner  # the library
from ragdash.cli import main
code = main(sys.argv[1:])
assert "streamlit" not in sys.modules
sys.exit(code)
"""


@pytest.mark.slow
def test_the_library_and_ragdash_run_work_without_streamlit(tmp_path):
    run_dir = tmp_path / "r"
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_STREAMLIT, "run", "--limit", "3", "--retrievers", "bm25",
         "--chunker", "none", "--budgets", "100:300:100", "--run-dir", str(run_dir), "-q"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from ragdash.rundir import Run

    scores = Run(run_dir).read("ir_scores")
    assert set(scores["retriever"]) == {"bm25"} and scores["qid"].nunique() == 3


def test_the_command_line_starts_without_the_heavy_libraries():
    """Every `ragdash` command starts by building its parser and reading the config's
    declarations: that loads neither numba (the scoring kernels) nor PyTerrier, FAISS or
    LangChain (the retrievers), about 1 of its 2.3 CPU-s; only the commands that score or
    retrieve import them."""
    code = ("import sys, ragdash.cli; from ragdash.config import load_config; "
            "load_config('configs/paper.yaml'); "
            "print(sorted(m for m in ('numba', 'pyterrier', 'faiss', 'langchain_core') "
            "if m in sys.modules), 'ragdash.scoring' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.split() == ["[]", "True"], out.stdout + out.stderr
