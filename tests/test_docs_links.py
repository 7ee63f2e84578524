"""Every relative link and image in README.md and docs/*.md points to a file that exists, and
every `#anchor` to a heading of its target (GitHub's heading ids). docs/config.md is generated
from the configuration's declarations; a link to it is allowed while it is not there yet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = {ROOT / "docs" / "config.md"}
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
INLINE_CODE = re.compile(r"`+[^`\n]*`+")
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SRC = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans (links there are examples)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's id of a heading: its text without formatting, lower case, punctuation other than
    `-` and `_` dropped, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The ids of a Markdown file's headings; a repeated one also as id-1, id-2, ..."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Every relative link or image of `path` whose file, or heading, does not exist."""
    text = _prose(path.read_text(encoding="utf-8"))
    problems = []
    for target in [*LINK.findall(text), *HTML_SRC.findall(text)]:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto: ...
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.is_relative_to(root.resolve()):
            problems.append(f"{path.name}: {target} leaves the repository")
        elif not dest.exists():
            if dest not in GENERATED:
                problems.append(f"{path.name}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{path.name}: {target}: no heading #{anchor} in {dest.name}")
    return problems


DOCS = [ROOT / "README.md", ROOT / "data" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(path):
    assert broken_links(path) == []


def test_docs_are_found():
    names = {p.name for p in DOCS}
    assert {"README.md", "concepts.md", "dashboard.md", "cli.md", "own-data.md", "llm.md",
            "speed-and-scale.md"} <= names


def test_readme_image_is_small():
    image = ROOT / "docs" / "img" / "overview.png"
    assert "](docs/img/overview.png)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert 0 < image.stat().st_size < 300_000


def test_slug_follows_github():
    assert slug("On a Ray cluster (`--executor ray`)") == "on-a-ray-cluster---executor-ray"
    assert slug("Score_IR and the score stage") == "score_ir-and-the-score-stage"
    assert slug("Semantic matching's cost") == "semantic-matchings-cost"
    assert slug("Past one machine: a 5M-document corpus, on paper") == \
        "past-one-machine-a-5m-document-corpus-on-paper"


def test_checker_finds_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Title\n\n## A section\n\n## A section\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md) [ok anchor](other.md#a-section) [repeated](other.md#a-section-1) "
        "[self](#page) [web](https://example.org/x.md)\n"
        "[missing](nothing.md) ![missing image](img/none.png) [bad anchor](other.md#nope) "
        "[bad self](#nope) [outside](../../x.md) <img src=\"img/gone.png\">\n"
        "`[in code](ignored.md)`\n\n```\n[in a block](ignored.md)\n```\n")
    problems = broken_links(page, root=tmp_path)
    assert problems == [
        "page.md: nothing.md: no such file",
        "page.md: img/none.png: no such file",
        "page.md: other.md#nope: no heading #nope in other.md",
        "page.md: #nope: no heading #nope in page.md",
        "page.md: ../../x.md leaves the repository",
        "page.md: img/gone.png: no such file",
    ]


NAMED = re.compile(r"(README|docs/[a-z0-9-]+\.md)(?:'s)?,? (?:section )?\"([^\"\n]{3,80})\"")
"""A section named in words: README "Two commands", docs/llm.md "The default generator"."""


def named_sections(text: str) -> list[tuple[str, str]]:
    """(file, title) of every section a text names in words."""
    return NAMED.findall(text)


def test_sections_named_in_words_exist():
    """A heading renamed or moved leaves no sentence pointing at it (README "Speed" had gone to
    docs/speed-and-scale.md)."""
    texts = [*DOCS, *sorted((ROOT / "ragdash").rglob("*.py")),
             *sorted((ROOT / "app_pages").glob("*.py"))]
    assert named_sections('see README "Two commands"') == [("README", "Two commands")]
    missing = []
    for path in texts:
        for file, title in named_sections(path.read_text(encoding="utf-8")):
            target = ROOT / ("README.md" if file == "README" else file)
            titles = {re.sub(r"`", "", h).strip() for h in
                      HEADING.findall(FENCE.sub("", target.read_text(encoding="utf-8")))}
            if not any(t == title or t.startswith(f"{title} (") for t in titles):
                missing.append(f"{path.relative_to(ROOT)}: {file} \"{title}\"")
    assert missing == []


def test_concepts_names_every_stage_and_every_run_file():
    from ragdash.rundir.files import FILES
    from ragdash.stages.runner import REGISTRY

    text = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    pipeline = text.split("## The pipeline", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{s.name}`" in pipeline for s in REGISTRY), "a stage missing in concepts.md"
    assert all(f"`{f.filename}`" in text for f in FILES.values()), \
        [f.filename for f in FILES.values() if f"`{f.filename}`" not in text]
