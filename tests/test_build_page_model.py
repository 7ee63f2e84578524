"""Issue 48 §4: the Build page's model (`ragdash.view.build`), tested without Streamlit: the
dataset section each source gives (an upload's sheet and columns only when chosen), the
upload's caption, the preview's k, the settings a sweep may vary, the start button, the
estimate's lines and the earlier runs' table (an unreadable run listed with its reason)."""

from __future__ import annotations

import json

import pytest

from ragdash.llm.cost import Estimate
from ragdash.rundir import Run, list_runs
from ragdash.view import build as model

UPLOAD = {"name": "qa.xlsx", "dataset": "/up/qa.xlsx", "format": "xlsx", "corpus": "/up/c.zip",
          "corpus_format": "zip", "corpus_name": "c.zip", "examples": 1200,
          "sheet": "Tickets", "columns": {"question": "Customer question"}}


def test_each_source_and_its_dataset_section():
    names = model.source_names("hotpot.jsonl", None)
    assert names == {"sample": "Bundled HotpotQA sample (hotpot.jsonl)",
                     "upload": "Uploaded on the Data page (nothing uploaded yet)",
                     "path": "A file on this server"}
    assert model.source_names("h", UPLOAD)["upload"] == "Uploaded on the Data page: qa.xlsx"
    auto = {"format": "auto", "corpus": None, "corpus_format": "auto"}
    assert model.dataset_section("sample", "/s.jsonl", UPLOAD) == {**auto, "path": "/s.jsonl"}
    assert model.dataset_section("upload", "/s", None) == auto  # no path before an upload
    assert model.dataset_section("upload", "/s", UPLOAD) == {
        "path": "/up/qa.xlsx", "format": "xlsx", "corpus": "/up/c.zip", "corpus_format": "zip",
        "sheet": "Tickets", "columns": {"question": "Customer question"}}
    plain = {**UPLOAD, "sheet": None, "columns": None}  # not chosen: no keys, the run's unchanged
    assert set(model.dataset_section("upload", "/s", plain)) == {"path", "format", "corpus",
                                                                 "corpus_format"}
    assert model.dataset_section("path", "/s", UPLOAD, "/d.csv", "") == {**auto,
                                                                       "path": "/d.csv"}
    assert model.dataset_section("path", "/s", None, "/d.csv", "/docs")["corpus"] == "/docs"


def test_the_uploads_caption():
    said = model.upload_caption(UPLOAD, md=lambda s: f"<{s}>", code=lambda s: f"`{s}`")
    assert said.startswith("1,200 valid questions in <qa.xlsx>, sheet <Tickets>, columns `")
    assert said.endswith(", corpus <c.zip>")
    bare = {**UPLOAD, "sheet": None, "columns": None, "corpus": None}
    assert model.upload_caption(bare) == "1,200 valid questions in qa.xlsx"


def test_preview_k_sweep_settings_and_start_button():
    assert model.preview_k({}) == 1
    assert model.preview_k({"bm25": {"k": 5}, "sim": {"k": 10}, "x": {}}) == 10
    assert model.sweep_settings(["bm25", "my_live", "sim"], ["bm25", "sim", "mmr"]) == [
        *model.SWEEP_SETTINGS, "retrievers.params.bm25.k", "retrievers.params.sim.k"]
    assert model.start_label(0) == "▶ Start the run"
    assert model.start_label(4) == "▶ Start the 4 runs"


def test_the_estimate_as_lines():
    gen = Estimate("qwen", 36, 1000, 200, 0.0, 120.0, 18.0, "measured on 40 calls")
    lines = model.estimate_lines({"generation": gen, "note": "stepwise judging: a lower bound"})
    assert lines == [("generation", str(gen)), ("note", "stepwise judging: a lower bound")]
    assert lines[0][1].startswith("qwen: 36 calls, 1,000 tokens in, 200 out, $0.00")


@pytest.fixture
def root(tmp_path):
    from fixtures.make_run import make_run

    make_run(tmp_path / "good", n_questions=4, retrievers=("bm25", "sim"), budgets=(100,),
             llm=False)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text(json.dumps(["not", "a", "manifest"]))
    return tmp_path


def test_the_earlier_runs_table_lists_an_unreadable_run_with_its_reason(root):
    runs = list_runs(root)
    table, unreadable = model.earlier_runs(runs, name=str.upper)
    assert list(table.columns) == model.EARLIER_COLUMNS
    good = table[table["run"] == Run(root / "good").id].iloc[0]
    assert good["questions"] == 4 and good["retrievers"] == "BM25, SIM"
    assert good["stages"].startswith("ingest ")
    bad = table[table["run"] == "bad"].iloc[0]
    assert bad["stages"].startswith("unreadable: ") and "list" in bad["stages"]
    assert unreadable[str(root / "good")] is None and unreadable[str(root / "bad")]
