"""The shape of the package: no import cycles, the layers, the presentation split (page models in
`view/`, Streamlit widgets in `ui/`, figures in `viz/`, layout in `app_pages/`), one stage
registry, one declaration per run file."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ragdash"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph() -> nx.DiGraph:
    """ragdash module (and the dashboard's app.py and app_pages/) -> ragdash module it imports,
    at module level or inside a function, or names in its lazy exports (`ragdash.lazy`: the keys
    of its `_SOURCES`). Imports under `if TYPE_CHECKING` are left out: they never run. A copy
    of the graph parsed once per test session: a test may change its own."""
    return _parsed_graph().copy()


@functools.cache
def _parsed_graph() -> nx.DiGraph:
    files = {_module_name(p): p for p in [*PACKAGE.rglob("*.py"), ROOT / "app.py",
                                          *(ROOT / "app_pages").glob("*.py")]}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                  and any(getattr(t, "id", None) == "_SOURCES" for t in node.targets)):
                targets = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            for t in targets:
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph.add_edge(name, t)
    return graph


def test_no_import_cycles_inside_ragdash():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join([*c, c[0]]) for c in cycles[:5])


def test_the_graph_sees_imports():
    graph = import_graph()  # a parser that found nothing would pass the cycle test vacuously
    assert graph.has_edge("ragdash.stages.runner", "ragdash.stages")
    assert graph.has_edge("ragdash.stages.score", "ragdash.scoring.contexts")  # in a function
    assert graph.has_edge("ragdash.llm", "ragdash.llm.judge")  # a lazy export
    assert graph.number_of_edges() > 100


LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("ragdash", "ragdash.constants", "ragdash.text", "ragdash.redact", "ragdash.lazy",
              "ragdash.byte_bpe", "ragdash.embedding_cache", "ragdash.dashboard_settings",
              "ragdash.params", "ragdash.terminal", "ragdash.children", "ragdash.section")),
    ("run files", ("ragdash.rundir", "ragdash.exit_watch")),
    ("embeddings and tokens", ("ragdash.embeddings", "ragdash.budget", "ragdash.executors")),
    ("data", ("ragdash.data",)),
    ("components", ("ragdash.chunking", "ragdash.retrieval", "ragdash.scoring",
                    "ragdash.calibration", "ragdash.systems")),
    ("llm", ("ragdash.llm",)),
    ("evidence and analysis", ("ragdash.evidence", "ragdash.analysis", "ragdash.metrics",
                               "ragdash.synth", "ragdash.erag", "ragdash.stress")),
    # the run specification: checked against the components' own declarations and read by the
    # stages (a typed spec that stages take, #21 part 1), so it sits between the two; a
    # finished run is read through it (`run_spec`: its saved config as a RunSpec)
    ("config", ("ragdash.config", "ragdash.run_spec")),
    # a run's human labels and what they say: they read the run through its specification
    ("labels", ("ragdash.labels",)),
    ("stages", ("ragdash.stages", "ragdash.planning")),
    # presentation from here up: what the domain below never imports
    ("page models", ("ragdash.view",)),  # what a page, the report or the CLI shows: no Streamlit
    ("viz", ("ragdash.viz",)),
    ("workflows", ("ragdash.sweep", "ragdash.html_report", "ragdash.jobs")),
    ("ui", ("ragdash.ui",)),
    # the dashboard's entry and its pages (Streamlit scripts): they render, nothing imports them
    ("pages", ("app", "app_pages")),
    # the `ragdash` command: every sub-command lives in the package ragdash.cli
    ("cli", ("ragdash.cli", "ragdash.config_doc")),
)
"""The layers of ragdash, lowest first: a module imports only from its own layer and those
below it. A module's layer is that of the longest name it falls under ("ragdash" names the
package's own `__init__` only)."""


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index of `module`'s layer (its longest matching name), None if it has none."""
    best: tuple[int, int] | None = None
    for i, (_, names) in enumerate(layers):
        for name in names:
            under = module.startswith(name + ".") and name != "ragdash"  # the root: itself
            if (module == name or under) and (best is None or len(name) > best[1]):
                best = (i, len(name))
    return None if best is None else best[0]


def layer_violations(graph: nx.DiGraph, layers=LAYERS) -> list[str]:
    """Every module without a layer, and every import of a higher layer (at module level or
    inside a function: the graph holds both)."""
    out = [f"{m} is in no layer" for m in sorted(graph) if layer_of(m, layers) is None]
    for a, b in sorted(graph.edges):
        la, lb = layer_of(a, layers), layer_of(b, layers)
        if la is not None and lb is not None and lb > la:
            out.append(f"{a} ({layers[la][0]}) imports {b} ({layers[lb][0]})")
    return out


def test_the_layers_hold():
    violations = layer_violations(import_graph())
    assert not violations, "\n".join(violations)


PUT_BACK = {
    "data reads evidence settings": [("ragdash.data.generic", "ragdash.evidence.settings")],
    "a page model reads viz colours": [("ragdash.view.leaderboard", "ragdash.viz.colors")],
    "the ingest glue back in evidence": [("ragdash.stages.ingest", "ragdash.evidence.stage"),
                                         ("ragdash.evidence.stage", "ragdash.stages.base"),
                                         ("ragdash.evidence.stage", "ragdash.stages.generate")],
    "evidence reads the config outside the CLI": [("ragdash.evidence.finder", "ragdash.config")],
    "a stage reads the CLI": [("ragdash.stages.runner", "ragdash.cli")],
    "a workflow reads a sub-command": [("ragdash.jobs", "ragdash.cli.job")],
    "the dashboard reads the CLI's options": [("ragdash.ui.jobs", "ragdash.cli.options")],
    "a domain module reads the dry run": [("ragdash.synth.estimate", "ragdash.planning")],
    "a page reads the CLI": [("app_pages.build", "ragdash.cli.options")],
    "labels read the run view": [("ragdash.labels.store", "ragdash.view")],
    "a page model reads the widgets' state": [("ragdash.view.context", "ragdash.ui.state")],
    "a stage reads a page model": [("ragdash.stages.erag", "ragdash.view")],
    "the library imports a page": [("ragdash.ui.navigation", "app_pages.overview")],
}


@pytest.mark.parametrize("edges", PUT_BACK.values(), ids=PUT_BACK.keys())
def test_the_layer_check_fails_when_an_import_is_put_back(edges):
    graph = import_graph()
    assert not any(graph.has_edge(*e) for e in edges)
    graph.add_edges_from(edges)
    violations = layer_violations(graph)
    assert violations and all(" imports " in v for v in violations), violations


PRESENTATION = ("ragdash.view", "ragdash.viz", "ragdash.ui")
"""Page models, figures and Streamlit widgets: the domain below them never imports them."""


def test_no_domain_module_imports_the_presentation():
    graph = import_graph()
    top = layer_of("ragdash.view")
    domain = {m for m in graph if (i := layer_of(m)) is not None and i < top}
    assert {"ragdash.labels.store", "ragdash.erag.summary", "ragdash.stages.stress"} <= domain
    assert not domain & {m for m in graph if m.startswith(PRESENTATION)}
    bad = sorted((a, b) for a, b in graph.edges
                 if a in domain and b.split(".")[:2] in [p.split(".") for p in PRESENTATION])
    assert not bad, bad


def streamlit_importers(sources: dict[str, str]) -> set[str]:
    """The modules among {module: source} that import streamlit, at module level or inside a
    function (under `if TYPE_CHECKING` left out: it never runs)."""
    out = set()
    for name, source in sources.items():
        tree = ast.parse(source)
        skip = _type_checking_lines(tree)
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                out.add(name)
    return out


def test_only_the_widgets_and_the_pages_import_streamlit():
    """`ragdash.ui` is the only importer of Streamlit outside the pages: page models
    (`ragdash.view`), figures (`ragdash.viz`) and the domain are built and tested without it."""
    files = [*PACKAGE.rglob("*.py"), ROOT / "app.py", *(ROOT / "app_pages").glob("*.py")]
    found = streamlit_importers({_module_name(p): p.read_text() for p in files})
    assert {"ragdash.ui.widgets", "ragdash.ui.state", "app", "app_pages.build"} <= found
    outside = sorted(m for m in found if not m.startswith(("ragdash.ui.", "app_pages."))
                     and m not in ("ragdash.ui", "app"))
    assert not outside, f"Streamlit outside ragdash.ui and the pages: {outside}"
    assert not any(m.startswith("ragdash.view") for m in found)


def test_the_streamlit_check_sees_every_kind_of_import():
    sources = {"a": "import streamlit as st", "b": "def f():\n    from streamlit import cache\n",
               "c": "import streamlit.components.v1", "d": "import streamlitx\nimport os",
               "e": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import streamlit\n"}
    assert streamlit_importers(sources) == {"a", "b", "c"}


def test_only_the_cli_imports_the_cli():
    graph = import_graph()
    inside = {m for m in graph if m == "ragdash.cli" or m.startswith("ragdash.cli.")}
    assert {"ragdash.cli.parser", "ragdash.cli.run_stages", "ragdash.cli.evidence"} <= inside
    outside = sorted((a, b) for a, b in graph.edges if b in inside and a not in inside)
    assert not outside, outside


def test_a_module_outside_the_layers_is_reported():
    graph = nx.DiGraph([("ragdash.stages.runner", "ragdash.newpackage.thing")])
    assert layer_violations(graph) == ["ragdash.newpackage.thing is in no layer"]
    assert layer_of("ragdash.cli.evidence") == layer_of("ragdash.cli")
    assert layer_of("ragdash.evidence.finder") == layer_of("ragdash.evidence")  # longest name
    assert layer_of("ragdash.evidence.finder") < layer_of("ragdash.config")
    assert layer_of("ragdashboard") is None


def test_every_stage_comes_after_what_it_needs():
    from ragdash.rundir import FILES
    from ragdash.stages import REGISTRY, STAGES
    from ragdash.stages.runner import chain, stage_keys

    seen: set[str] = set()
    for stage in REGISTRY:
        assert set(stage.needs) | set(stage.after) <= seen, stage.name
        seen.add(stage.name)
        for key in stage.writes:  # what a stage writes is declared, and declared as its own
            assert FILES[key].stage == stage.name, (stage.name, key)
    outside = {"every stage", "estimate", "label"}  # label: `ragdash label` and the dashboard
    assert {f.stage for f in FILES.values()} - set(STAGES) == outside
    assert chain("judge") == ("ingest", "chunk", "retrieve", "score", "generate", "judge")
    from ragdash.config import load_config

    keys = stage_keys(load_config())
    assert len(set(keys.values())) == len(REGISTRY)  # every stage has its own key


def test_each_run_file_name_is_written_once():
    from ragdash.rundir import FILES

    sources = [p for p in [*PACKAGE.rglob("*.py"), *(ROOT / "app_pages").glob("*.py"),
                           ROOT / "app.py"] if p.name != "files.py"]
    text = "\n".join(p.read_text() for p in sources)
    for f in FILES.values():
        assert not re.search(rf"[\"']{re.escape(f.filename)}[\"']", text), f.filename


def test_importing_the_config_loads_no_llm_machinery():
    code = ("import sys, ragdash.config, ragdash.stages, ragdash.rundir; "
            "print(sorted(m for m in sys.modules if m.startswith(('ragdash.llm.judge', "
            "'ragdash.llm.local', 'ragdash.llm.generate', 'torch', 'streamlit', 'ray'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout


def _magic_lines(source: str) -> list[int]:
    """Lines of the expression statements Streamlit's magic would write: not a call, not a
    docstring, not `yield`/`await` (streamlit/runtime/scriptrunner/magic.py)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        for i, stmt in enumerate(body if isinstance(body, list) else []):
            if not isinstance(stmt, ast.Expr) or isinstance(
                    stmt.value, ast.Call | ast.Yield | ast.YieldFrom | ast.Await):
                continue
            if i == 0 and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value,
                                                                              str):
                continue  # a docstring
            found.append(stmt.lineno)
    return found


def test_no_page_relies_on_streamlit_magic():
    """.streamlit/config.toml turns magic off (no syntax-tree rewrite of each page): a bare
    expression in a page would show nothing, so there is none."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False
    assert _magic_lines('"""doc."""\nimport x\nx.f()\nx\n"shown"\n') == [4, 5]  # it sees them
    pages = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
    bare = {p.name: lines for p in pages if (lines := _magic_lines(p.read_text()))}
    assert not bare, f"expressions that magic would have shown, now shown nowhere: {bare}"
