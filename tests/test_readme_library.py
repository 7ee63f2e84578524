"""Issue 34 §5: the README's Python example runs as written (in a fresh folder) and prints
Score_IR per budget for both retrievers."""

from __future__ import annotations

import re

import pytest

from ragdash.constants import PROJECT_ROOT


def readme_python() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (PROJECT_ROOT / "README.md").read_text(),
                        flags=re.DOTALL)
    assert len(blocks) == 1, "the README has one Python example"
    return blocks[0]


@pytest.mark.slow
def test_the_readme_library_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # its runs root is relative: a fresh folder
    exec(compile(readme_python(), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "bm25" in printed and "sim" in printed
    rows = [line.split() for line in printed.splitlines() if re.match(r"\s*[1-5]00\s", line)]
    assert [int(r[0]) for r in rows] == [100, 200, 300, 400, 500]
    assert all(0.0 <= float(v) <= 1.0 for r in rows for v in r[1:])
    assert (tmp_path / "runs" / "library-tour" / "ir_scores.parquet").exists()
