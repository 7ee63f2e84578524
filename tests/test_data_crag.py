"""Issue 35 §3: CRAG's file as a dataset format (`--format crag`, detected from a .jsonl or
.jsonl.bz2 file's first record): one question with its answer and alternative answers, its
search-result pages (raw HTML, read by the HTML reader) as the corpus, no relevant parts (the
evidence finder finds them at ingest), the non-commercial licence said."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from ragdash.config import load_spec
from ragdash.constants import PROJECT_ROOT
from ragdash.data import DataError, detect_format, load_dataset, load_questions
from ragdash.data.generic import PARTS, PARTS_ABSENT

PAGE = ("<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{p}</p>"
        "<script>var x = 1;</script></body></html>")


def _record(qid: str, query: str, answer: str, pages: list[tuple[str, str]], alt=None) -> dict:
    return {"interaction_id": qid, "query_time": "03/01/2024, 10:00:00 PT", "domain": "movie",
            "question_type": "simple", "static_or_dynamic": "static", "query": query,
            "answer": answer, "alternative_answers": alt if alt is not None else [],
            "split": 0, "search_results": [
                {"page_name": t, "page_url": f"https://example.org/{i}", "page_snippet": p[:40],
                 "page_result": PAGE.format(t=t, p=p) if p else "", "page_last_modified": ""}
                for i, (t, p) in enumerate(pages)]}


@pytest.fixture
def crag_file(tmp_path):
    rows = [
        _record("a1", "Who directed the film Alpha?", "Jane Roe",
                [("Alpha (film)", "Alpha is a 2018 film directed by Jane Roe in Iceland."),
                 ("Empty", "")], alt='["J. Roe"]'),
        _record("b2", "How tall is the Beta tower?", "330 metres",
                [("Beta tower", "The Beta tower is 330 metres tall and opened in 1889.")]),
        {"interaction_id": "c3", "query": "", "answer": "x", "search_results": []},
    ]
    path = tmp_path / "crag_sample.jsonl.bz2"
    path.write_bytes(bz2.compress("\n".join(json.dumps(r) for r in rows).encode()))
    return path


def test_a_crag_file_is_detected_and_read_with_its_pages(crag_file):
    assert detect_format(crag_file) == "crag"
    data = load_dataset(crag_file)
    assert [e.qid for e in data.examples] == ["a1", "b2"]  # c3 has no question: skipped
    first = data.examples[0]
    assert first.answers == ("Jane Roe", "J. Roe") and first.parts == []
    assert first.meta["pages"] == ["a1#0"] and first.meta["domain"] == "movie"
    docs = {d.doc_id: d for d in data.documents}
    assert set(docs) == {"a1#0", "b2#0"} and docs["a1#0"].title == "Alpha (film)"
    assert "directed by Jane Roe" in docs["a1#0"].text and "var x" not in docs["a1#0"].text
    assert data.source[PARTS] == PARTS_ABSENT and "not for commercial use" in data.source["licence"]
    said = [(i.record, i.field, i.severity) for i in data.issues]
    assert ("line 3", "query", "error") in said
    assert ("line 1", "search_results[1]", "warning") in said  # the page without HTML
    assert [e.qid for e in load_questions(crag_file)] == ["a1", "b2"]  # no page read


def test_the_crag_format_is_a_config_value_and_refuses_a_column_mapping(crag_file):
    spec = load_spec(None, {"dataset.path": str(crag_file), "dataset.format": "crag"})
    assert spec.dataset.format == "crag"
    with pytest.raises(DataError, match="CRAG JSONL, whose fields are fixed"):
        load_dataset(crag_file, "crag", columns={"question": "q", "answer": "a"})


def test_a_run_on_a_crag_file_finds_evidence_in_the_pages(crag_file, tmp_path):
    from ragdash.rundir import Run
    from ragdash.stages.runner import run_stages

    spec = load_spec(None, {"dataset": {"path": str(crag_file)}, "chunker": {"method": "none"},
                            "retrievers": {"use": ["bm25"]}, "tokenizer": "whitespace",
                            "budgets": [10, 20], "runs_root": str(tmp_path / "runs")})
    run = run_stages(spec, tmp_path / "r", ["ingest", "chunk", "retrieve", "score"])
    examples = Run(run.path).read("examples")
    parts = dict(zip(examples["qid"], examples["parts"], strict=True))
    assert "directed by Jane Roe" in parts["a1"][0]
    assert "330 metres tall" in parts["b2"][0]
    assert Run(run.path).read("ir_scores")["score"].between(0, 1).all()


SHARED = next((p for p in (root / "shared" / "data" / "crag" / "crag_dev_sample10.jsonl.bz2"
               for root in (PROJECT_ROOT.parent, Path("/work"))) if p.exists()),
              PROJECT_ROOT / "missing")
"""The shared CRAG example file (development data beside the checkout), when it is here."""


@pytest.mark.skipif(not SHARED.exists(), reason="the shared CRAG example file is not here")
def test_the_shared_crag_example_file_loads():
    data = load_dataset(SHARED)
    assert len(data.examples) == 10 and len(data.documents) >= 40
    assert all(e.meta["pages"] for e in data.examples)
