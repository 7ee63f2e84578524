"""The dashboard reads only under allowed roots (symlinks resolved), and shows user text
literally wherever Streamlit reads Markdown."""

from __future__ import annotations

import pytest

from ragdash.rundir import FILES
from ragdash.ui import paths, widgets


@pytest.fixture
def roots(tmp_path, monkeypatch):
    runs, extra, secret = tmp_path / "runs", tmp_path / "shared", tmp_path / "secret"
    for d in (runs, extra, secret):
        d.mkdir()
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(runs))
    monkeypatch.delenv(paths.DATA_ROOTS_ENV, raising=False)
    return runs, extra, secret


def test_paths_outside_the_allowed_roots_are_refused(roots, monkeypatch):
    runs, extra, secret = roots
    (secret / "qa.jsonl").write_text("{}")
    (extra / "qa.jsonl").write_text("{}")
    assert paths.readable(runs / "x.jsonl") == (runs / "x.jsonl").resolve()
    assert paths.readable(paths.PROJECT_ROOT / "data" / "sample") is not None  # bundled data
    for bad in (secret / "qa.jsonl", "/etc/passwd", runs / ".." / "secret" / "qa.jsonl"):
        with pytest.raises(paths.OutsideRoots, match=paths.DATA_ROOTS_ENV):
            paths.readable(bad)
    with pytest.raises(paths.OutsideRoots):  # none beyond the defaults until an admin says so
        paths.readable(extra / "qa.jsonl")
    monkeypatch.setenv(paths.DATA_ROOTS_ENV, f"{extra}:  ")
    assert paths.readable(extra / "qa.jsonl") == (extra / "qa.jsonl").resolve()


def test_a_symlink_leaving_the_roots_is_refused(roots):
    runs, _, secret = roots
    (secret / "qa.jsonl").write_text("{}")
    (runs / "link.jsonl").symlink_to(secret / "qa.jsonl")
    (runs / "dir").symlink_to(secret, target_is_directory=True)
    for bad in (runs / "link.jsonl", runs / "dir" / "qa.jsonl"):
        with pytest.raises(paths.OutsideRoots):
            paths.readable(bad)
    assert paths.refused_inputs({"path": str(runs / "link.jsonl"), "corpus": None})[0] \
        .startswith("dataset.path: ")
    assert paths.refused_inputs({"path": str(runs / "ok.jsonl"),
                                 "corpus": str(runs / "dir")})[0].startswith("dataset.corpus: ")
    assert paths.refused_inputs({"path": str(runs / "ok.jsonl")}) == []


def test_listed_runs_leave_out_links_out_of_the_runs_root(roots, tmp_path):
    from fixtures.make_run import make_run

    from ragdash.rundir.root import RunsRoot

    runs, _, secret = roots
    make_run(runs / "mine", n_questions=4, llm=False)
    make_run(secret / "theirs", n_questions=4, llm=False)
    (runs / "linked").symlink_to(secret / "theirs", target_is_directory=True)
    assert [r.path.name for r in RunsRoot(runs).runs()] == ["mine"]


@pytest.mark.parametrize("text", [
    "**bold** [link](https://evil.example) ![img](http://127.0.0.1:9/x.png)",
    '<iframe srcdoc="<script>alert(1)</script>">', ":red[alert] :material/home: $x^2$",
    "line\n# heading\n- item", "a `code` b \\ c"])
def test_markdown_escaping_leaves_no_markup(text):
    import markdown_it

    rendered = markdown_it.MarkdownIt("commonmark", {"html": True}).render(widgets.md(text))
    for markup in ("<a ", "<img", "<iframe", "<strong>", "<h1>", "<li>", "<code>", "<script"):
        assert markup not in rendered, rendered
    for escaped in ("[", "]", "(", ":", "$", "`"):
        assert not (escaped in text and f"\\{escaped}" not in widgets.md(text))
    code = markdown_it.MarkdownIt("commonmark").render(widgets.code(text))
    assert code.count("<code>") == 1 and "<a " not in code and "<img" not in code


def test_a_run_file_linking_outside_its_run_is_not_read(roots):
    from fixtures.make_run import make_run

    from ragdash.rundir import Run
    from ragdash.ui import state

    runs, _, secret = roots
    mine, theirs = make_run(runs / "mine", n_questions=4, llm=False), \
        make_run(secret / "theirs", n_questions=4, llm=False)
    assert Run(mine, state.READER).table("examples") is not None
    (mine / "examples.parquet").unlink()
    (mine / "examples.parquet").symlink_to(theirs / "examples.parquet")
    assert Run(mine, state.READER).table("examples") is None
    assert not Run(mine, state.READER).has("examples")
    with pytest.raises(FileNotFoundError):
        state.READER.table(mine / "examples.parquet", FILES["examples"])
