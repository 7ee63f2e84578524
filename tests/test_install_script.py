"""scripts/install.sh's `pip_install`: uv with pip's sources passed on, pip where uv fails.

A fake virtualenv records what each tool was asked: `python` (pip) and `uv` are shell scripts
that write their arguments to a log, so no package is installed and no network is used."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _venv(tmp_path: Path, uv_exit: int | None, pip_config: str = "") -> Path:
    """A fake venv's bin/ with a recording `python` (whose `-m pip config list` prints
    `pip_config`) and, unless `uv_exit` is None, a recording `uv` that exits with `uv_exit`."""
    bin_ = tmp_path / "venv" / "bin"
    bin_.mkdir(parents=True)
    log = tmp_path / "calls.log"
    (tmp_path / "pip-config.txt").write_text(pip_config)
    tools = {"python": 0} | ({} if uv_exit is None else {"uv": uv_exit})
    for tool, code in tools.items():
        script = bin_ / tool
        script.write_text(f'#!/bin/sh\ncase "$*" in *"config list"*) '
                          f'cat {tmp_path / "pip-config.txt"}; exit 0;; esac\n'
                          f'echo "{tool} $*" >> {log}\nexit {code}\n')
        script.chmod(0o755)
    return bin_


def _install(tmp_path: Path, bin_: Path, *args: str
             ) -> tuple[subprocess.CompletedProcess, list[str]]:
    out = subprocess.run(
        ["bash", "-c", f'source {ROOT / "scripts" / "install.sh"}; pip_install "$@"', "x", *args],
        env={"PATH": os.environ["PATH"], "PY": str(bin_ / "python")},
        capture_output=True, text=True, cwd=tmp_path)
    log = tmp_path / "calls.log"
    return out, log.read_text().splitlines() if log.exists() else []


def test_uv_gets_pips_find_links_and_constraints_without_missing_folders(tmp_path):
    """Pip's settings as `pip config list` gives them: a constraint file named in one
    configuration file, find-links in another overridden by PIP_FIND_LINKS (listed last)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch<=2.14.1\n")
    links = (f"{wheels} {tmp_path / 'gone'} file://{tmp_path / 'gone2'} "
             "https://example.org/wheels")
    bin_ = _venv(tmp_path, uv_exit=0, pip_config=(
        f"global.constraint='{constraints} {tmp_path / 'no-such.txt'}'\n"
        f"global.find-links='{tmp_path / 'old'}'\n"
        "global.extra-index-url='file:///nowhere/simple'\n"
        f":env:.find-links='{links}'\n"))
    out, calls = _install(tmp_path, bin_, "torch==2.13.0")
    assert out.returncode == 0, out.stderr
    uv = [c for c in calls if c.startswith("uv ")]
    assert uv == [f"uv pip install -q --python {bin_ / 'python'} --find-links {wheels} "
                  f"--find-links https://example.org/wheels --constraint {constraints} "
                  "torch==2.13.0"]
    assert not any(c.startswith("python -m pip install -q torch") for c in calls)


def test_pip_installs_when_uv_fails(tmp_path):
    bin_ = _venv(tmp_path, uv_exit=1)
    out, calls = _install(tmp_path, bin_, "--no-deps", "pkg==1.0")
    assert out.returncode == 0, out.stderr
    assert "uv could not install --no-deps pkg==1.0: trying pip" in out.stderr
    assert calls[-1] == "python -m pip install -q --no-deps pkg==1.0"


def test_pip_installs_when_uv_cannot_be_had_and_its_failure_is_the_scripts(tmp_path):
    """No uv in the venv and pip cannot install it (the fake pip "installs" nothing): pip
    installs the package itself; a pip that fails fails the call."""
    bin_ = _venv(tmp_path, uv_exit=None)
    out, calls = _install(tmp_path, bin_, "pkg")
    assert out.returncode == 0, out.stderr
    assert calls == ["python -m pip install -q uv", "python -m pip install -q pkg"]
    (bin_ / "python").write_text(f'#!/bin/sh\necho "python $*" >> {tmp_path / "calls.log"}\n'
                                 "exit 3\n")
    failed, _ = _install(tmp_path, bin_, "pkg")
    assert failed.returncode == 3
