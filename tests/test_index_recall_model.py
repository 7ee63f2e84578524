"""An approximate dense index and the Build page's retriever checks, without a browser (they were
tests/browser/test_browser_index.py): a run built with the real stages whose SIM searches an
HNSW index says, in the Retrieval page's model, how much of exact search's top 10 it finds; on
the Build page (one AppTest render), MMR keeping more chunks than it fetches is refused as the
value changes, with both values named, and the run cannot start until fetch_k is raised;
counts cannot go below 1."""

from __future__ import annotations

import re

import pytest
from fixtures.apptest import open_app
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl

from ragdash.view.retrieval import index_recall
from ragdash.viz.colors import label

pytestmark = pytest.mark.slow


def test_the_retrieval_page_gives_the_recall_of_an_approximate_index(tmp_path):
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    qa = write_jsonl(tmp_path / "qa.jsonl", [{"id": q, "question": t, "answer": a,
                                              "relevant_parts": p} for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x}
                                                      for d, t, x in DOCS])
    cfg = load_config(None, {
        "name": "hnsw", "dataset": {"path": str(qa), "corpus": str(corpus)},
        "chunker": {"method": "recursive", "params": {"chunk_size": 80, "chunk_overlap": 0}},
        "retrievers": {"use": ["bm25", "sim"], "params": {"sim": {"index": "hnsw"}}},
        "tokenizer": "whitespace", "budgets": [10, 20, 40],
        "runs_root": str(tmp_path / "runs")})
    run = run_stages(cfg, tmp_path / "runs" / "hnsw")
    # what the page's caption says (app_pages/retrieval.py shows index_recall's line as is)
    assert index_recall(run.manifest.get("index_recall") or {}, name=label) == (
        "Approximate dense index: SIM searches HNSW, which returns 100.0% of exact search's top "
        "10 chunks (recall@10 on this run's 4 questions).")


@pytest.fixture
def runs_root(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    return tmp_path / "runs"


def test_build_page_refuses_mmr_keeping_more_chunks_than_it_fetches(runs_root):
    """Retriever parameters are checked as they change: MMR with k above fetch_k is refused
    with both values named and the run cannot start until fetch_k is raised."""
    at = open_app("build")
    at.multiselect(key="build_rets").select("mmr").run()
    assert not at.exception, at.exception
    k = at.number_input(key="build_r_paper_mmr_k")
    assert k.min == 1  # a count below 1 cannot be typed
    assert at.number_input(key="build_r_paper_mmr_fetch_k").min == 1
    k.set_value(30).run()
    assert not at.exception, at.exception
    refused = [w.value for w in at.warning if "The settings are not valid" in w.value]
    assert len(refused) == 1 and re.search(r"mmr: fetch_k \(20\) must be at least k \(30\)",
                                           refused[0].replace("\\", "")), refused
    assert at.button(key="build_start").disabled
    at.number_input(key="build_r_paper_mmr_fetch_k").set_value(40).run()
    assert not at.exception, at.exception
    assert not [w.value for w in at.warning if "The settings are not valid" in w.value]
    assert not at.button(key="build_start").disabled
