"""Issue 48 §7: the docs the code can write are written by it (`ragdash.cli.docs`): the command
reference from the parsers, the table of commands in docs/cli.md and the table of stages in
docs/concepts.md from the registry; every stage, sub-command and package is documented."""

from __future__ import annotations

import re

import pytest

from ragdash.cli import docs
from ragdash.cli.parser import DEPRECATED, build_parser
from ragdash.constants import PROJECT_ROOT
from ragdash.stages import REGISTRY

DOCS = PROJECT_ROOT / "docs"


def _block(page: str, name: str) -> str:
    found = re.findall(rf"<!-- generated: {name}\b.*?-->\n(.*?)<!-- end of generated: {name} -->",
                       (DOCS / page).read_text(), re.S)
    assert len(found) == 1, (page, name)
    return found[0]


def test_the_generated_docs_are_up_to_date():
    stale = [str(p.relative_to(PROJECT_ROOT)) for p, text in docs.rendered().items()
             if not p.exists() or p.read_text() != text]
    assert not stale, f"stale: {stale}; run `python -m ragdash.cli.docs`"


def test_every_sub_command_is_documented():
    parser = build_parser()
    top = parser._subparsers._group_actions[0]
    names = [n for n in top.choices if n not in DEPRECATED]
    assert {"run", "stress", "counterfactual", "erag", "label"} <= set(names)
    listed = [n for n, _, _ in docs.commands(parser)]
    assert [n for n in listed if n.count(" ") == 1] == [f"ragdash {n}" for n in names]
    assert {"ragdash label export", "ragdash label import", "ragdash llm serve"} <= set(listed)
    table, reference = _block("cli.md", "commands"), (DOCS / "commands.md").read_text()
    for name in listed:
        assert f"[`{name}`](commands.md#{docs._anchor(name)})" in table, name
        assert f"\n## `{name}`\n" in reference, name
    assert not any(f"`ragdash {old}`" in table for old in DEPRECATED)


def test_every_option_of_a_command_is_in_the_reference():
    reference = (DOCS / "commands.md").read_text()
    stress = reference.split("## `ragdash stress`")[1].split("\n## ")[0]
    for option in ("--run-dir RUN_DIR", "--limit LIMIT", "--chunks CHUNKS", "--dry-run"):
        assert f"`{option}`" in stress, option
    assert "(required)" in stress.split("`--run-dir RUN_DIR`")[1].split("\n")[0]
    run = reference.split("## `ragdash run`")[1].split("\n## ")[0]
    assert "`--retrievers RETRIEVERS`" in run and "[retrievers.use]" in run
    ingest = reference.split("## `ragdash ingest`")[1].split("\n## ")[0]
    assert "options of [`ragdash run`](#ragdash-run)" in ingest  # said once, not 8 times


def test_every_stage_is_documented_with_its_command():
    table = _block("concepts.md", "stages")
    rows = [line for line in table.splitlines() if line.startswith("| [`")]
    assert [re.match(r"\| \[`(\w+)`\]", r)[1] for r in rows] == [s.name for s in REGISTRY]
    commands = {n for n, _, _ in docs.commands()}
    for stage in REGISTRY:
        assert f"ragdash {stage.cli}" in commands, stage.name  # its command exists
        row = next(r for r in rows if r.startswith(f"| [`{stage.name}`]"))
        assert f"(commands.md#ragdash-{stage.cli})" in row and docs._cell(stage.about) in row


def test_every_package_is_in_the_code_map():
    text = (DOCS / "concepts.md").read_text()
    code_map = text.split("## Where things live in the code")[1].split("```")[1]
    packages = sorted(p.parent.name for p in (PROJECT_ROOT / "ragdash").glob("*/__init__.py"))
    assert {"stress", "erag", "synth", "metrics", "cli", "view"} <= set(packages)
    missing = [p for p in packages if not re.search(rf"(ragdash/|\s){p}/", code_map)]
    assert not missing, f"packages missing from the code map in docs/concepts.md: {missing}"


def test_a_generated_part_replaces_only_what_its_markers_hold():
    page = ("prose before\n<!-- generated: stages (how) -->\nold\n"
            "<!-- end of generated: stages -->\nprose after\n")
    out = docs.filled("stages", page, "| new |")
    assert out == ("prose before\n<!-- generated: stages (how) -->\n\n| new |\n\n"
                   "<!-- end of generated: stages -->\nprose after\n")
    assert docs.filled("stages", out, "| new |") == out  # written twice: the same page
    with pytest.raises(ValueError, match="generated: commands"):
        docs.filled("commands", page, "x")  # a page that lost its markers is refused
    with pytest.raises(ValueError):
        docs.filled("stages", page + page, "x")


def test_the_check_names_a_stale_page(tmp_path, monkeypatch, capsys):
    for page in ("cli.md", "concepts.md"):
        (tmp_path / page).write_text((DOCS / page).read_text())
    (tmp_path / "commands.md").write_text("old\n")
    monkeypatch.setattr(docs, "DOCS", tmp_path)
    monkeypatch.setattr(docs, "PROJECT_ROOT", tmp_path.parent)
    assert docs.main(["--check"]) == 1
    assert f"stale: {tmp_path.name}/commands.md" in capsys.readouterr().out
    assert (tmp_path / "commands.md").read_text() == "old\n"  # --check writes nothing
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0
    assert (tmp_path / "commands.md").read_text() == (DOCS / "commands.md").read_text()
