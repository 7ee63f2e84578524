"""End to end on the bundled HotpotQA sample with the paper's configuration (slow)."""

import pandas as pd
import pytest

from ragdash.cli import main
from ragdash.rundir import Run

pytestmark = pytest.mark.slow


def test_paper_config_on_the_sample_without_llm(tmp_path):
    """15 questions: semantic chunking embeds every sentence of their 150 documents, then the
    chunks (MiniLM on the CPU, most of the test's time); the orderings below hold with room."""
    run_dir = tmp_path / "paper"
    assert main(["run", "--config", "configs/paper.yaml", "--limit", "15",
                 "--retrievers", "bm25,sim,mmr,reo", "--run-dir", str(run_dir), "-q"]) == 0
    table = pd.read_csv(run_dir / "ir_summary.csv").set_index("budget")
    assert list(table.index) == list(range(100, 1001, 100))
    assert (table.diff().dropna() >= 0).all().all()  # rises with N for every retriever
    assert table.loc[1000, "bm25"] > table.loc[1000, "reo"]
    assert table.loc[1000, "sim"] > table.loc[1000, "reo"]
    run = Run(run_dir)
    ex = run.read("examples")
    assert len(ex) == 15 and {"type", "level"} <= set(ex.columns)
    chunks = run.read("chunks")
    docs = run.read("documents").set_index("doc_id")["text"]
    # exact spacing: every chunk is a slice of its document
    assert all(docs[d][s:e] == t for d, s, e, t in
               chunks[["doc_id", "start", "end", "text"]].itertuples(index=False))
    metrics = pd.read_csv(run_dir / "ir_metrics.csv").set_index("retriever")
    assert (metrics["RR"] > 0.3).all()


@pytest.mark.requires("llama_cpp", "smollm2")
def test_mlq_with_the_local_model(tmp_path):
    """Two questions (each sub-question list is the 0.5B model's prompt evaluation, most of the
    test's time); the runs root, and so the LLM reply cache, under tmp_path: the model really
    writes them on every run, not a cache left in the checkout by the last one."""
    run_dir = tmp_path / "mlq"
    assert main(["run", "--config", "configs/paper.yaml", "--limit", "2",
                 "--retrievers", "sim,mlq", "--run-dir", str(run_dir), "-q",
                 "--set", f"runs_root={tmp_path / 'runs'}"]) == 0
    assert (tmp_path / "runs" / "_llm_cache.sqlite").exists()
    run = Run(run_dir)
    queries = run.read("queries")
    assert len(queries) == 2 and all(len(q) >= 1 for q in queries["queries"])
    retrieved = run.read("retrieved")
    assert (retrieved[retrieved.retriever == "mlq"].groupby("qid").size() == 5).all()
