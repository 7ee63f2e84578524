"""An approximate dense index without a browser (it was the first test of
tests/browser/test_browser_index.py; its second, the Build page's MMR check, is in
tests/test_build_page_checks.py): a run built with the real stages whose SIM searches an HNSW
index says, in the Retrieval page's model, how much of exact search's top 10 it finds."""

from __future__ import annotations

import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl

from ragdash.view.retrieval import index_recall
from ragdash.viz.colors import label

pytestmark = pytest.mark.slow


def test_the_retrieval_page_gives_the_recall_of_an_approximate_index(tmp_path, monkeypatch):
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
    # the page draws it once, with no exception (one AppTest render)
    from fixtures.apptest import open_app

    from ragdash.ui.state import run_key

    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    at = open_app("retrieval", run=run_key(run.path))
    shown = [c.value.replace("\\", "") for c in at.caption
             if c.value.startswith("Approximate dense index")]
    assert shown == [index_recall(run.manifest["index_recall"], name=label)], shown
