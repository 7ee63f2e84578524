"""The Build page's checks as its settings change, in one AppTest render (they were in
tests/browser/test_browser_index.py and test_browser_sweep_grid.py, which keeps the upload, the
sweep's start, its end and the link to Compare runs): MMR keeping more chunks than it fetches is
refused with both values named, and the run cannot start until fetch_k is raised (counts cannot
go below 1); a sweep over a value the config refuses (an unknown chunker) is refused by the
config's own check and cannot start; varying BM25's k over two values plans two runs."""

from __future__ import annotations

import re

from fixtures.apptest import open_app

from ragdash.constants import UPLOADS


def _warnings(at, start: str) -> list[str]:
    shown = [w.value.replace("\\", "") for w in at.warning]  # Markdown's escapes taken out
    return [w for w in shown if w.startswith(start)]


def test_the_build_page_refuses_bad_settings_as_they_change(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    at = open_app("build")
    # MMR: k above fetch_k is refused as soon as the value changes, before any click
    at.multiselect(key="build_rets").select("mmr").run()
    assert not at.exception, at.exception
    assert at.number_input(key="build_r_paper_mmr_k").min == 1  # below 1 cannot be typed
    assert at.number_input(key="build_r_paper_mmr_fetch_k").min == 1
    at.number_input(key="build_r_paper_mmr_k").set_value(30).run()
    assert not at.exception, at.exception
    refused = _warnings(at, "The settings are not valid")
    assert len(refused) == 1 and re.search(r"mmr: fetch_k \(20\) must be at least k \(30\)",
                                           refused[0]), refused
    assert at.button(key="build_start").disabled
    at.number_input(key="build_r_paper_mmr_fetch_k").set_value(40).run()
    assert not at.exception, at.exception
    assert not _warnings(at, "The settings are not valid")
    assert not at.button(key="build_start").disabled
    # a sweep: a bad value is refused by the config's own check
    at.toggle(key="build_sweep").set_value(True).run()
    at.selectbox(key="build_vary_key0").set_value("chunker.method")
    at.text_input(key="build_vary_values0").set_value("none, nosuch").run()
    assert not at.exception, at.exception
    refused = _warnings(at, "Sweep: ")
    assert len(refused) == 1 and re.search(r"unknown method .nosuch.", refused[0]), refused
    assert at.button(key="build_start").disabled
    # BM25's k over two values: two runs planned, the button says so
    at.selectbox(key="build_vary_key0").set_value("retrievers.params.bm25.k")
    at.text_input(key="build_vary_values0").set_value("2, 3").run()
    assert not at.exception, at.exception
    assert not _warnings(at, "Sweep: ")
    assert any(m.value.startswith("**2 runs**") for m in at.markdown)
    start = at.button(key="build_start")
    assert start.label == "▶ Start the 2 runs" and not start.disabled


def test_your_systems_alone_start_without_a_retriever(tmp_path, monkeypatch):
    """Retrievers left empty: refused without a system, allowed with one added on the Data page
    (`retrievers.use: none`)."""
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    at = open_app("build")
    at.multiselect(key="build_rets").set_value([]).run()
    assert not at.exception, at.exception
    assert _warnings(at, "Pick at least one retriever (or give your own system"), at.warning
    assert at.button(key="build_start").disabled
    system = tmp_path / "runs" / UPLOADS / "mine.jsonl"  # where the Data page keeps uploads
    system.parent.mkdir(parents=True, exist_ok=True)
    system.write_text('{"user_input": "q", "retrieved_contexts": ["c"]}\n')
    at.session_state["data_systems"] = {"mine": {"file": str(system), "format": "auto"}}
    at.run()
    assert not at.exception, at.exception
    assert at.multiselect(key="build_systems").value == ["mine"]
    assert not _warnings(at, "Pick at least one retriever"), at.warning
    assert not at.button(key="build_start").disabled, ([w.value for w in at.warning],
                                                        [e.value for e in at.error])
