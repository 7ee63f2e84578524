"""Issue 34 §3: the Data page's model (`ragdash.view.data`), tested without Streamlit: the
validation report names files without their folders, the records' tables take the parts found
on the page, and the statistics and preview read as the page heads them."""

from __future__ import annotations

import pytest

from ragdash.data import Dataset, Document, Example, Issue
from ragdash.view.data import issues_table, preview, record_tables, statistics


@pytest.fixture
def loaded() -> Dataset:
    return Dataset(
        examples=[Example("q1", "Who built it?", "Ada", ("Ada built it.", "In 1900."),
                          meta={"type": "bridge"}),
                  Example("q2", "When?", "1900", ("It was 1900.",), meta={"type": "comparison"})],
        documents=[Document("d1", "Tower", "Ada built it. In 1900. It was 1900.")],
        issues=[Issue("/private/tmp/up/qa.csv", "7", "question", "empty question"),
                Issue("/x/qa.csv", "9", "answer", "long answer", "warning")])


def test_the_report_names_files_without_their_folders(loaded):
    table = issues_table(loaded.issues)
    assert list(table.columns) == ["severity", "file", "record", "field", "message"]
    assert table["file"].tolist() == ["qa.csv", "qa.csv"]
    assert table["severity"].tolist() == ["error", "warning"]
    assert issues_table([]).empty


def test_the_records_take_the_parts_found_on_the_page(loaded):
    examples, documents = record_tables(loaded)
    assert examples["parts"].tolist() == [["Ada built it.", "In 1900."], ["It was 1900."]]
    assert examples["type"].tolist() == ["bridge", "comparison"]
    assert documents["doc_id"].tolist() == ["d1"]
    found, _ = record_tables(loaded, {"q2": ["1900"]})
    assert found["parts"].tolist() == [[], ["1900"]]  # a question without found parts: none


def test_statistics_and_preview(loaded):
    examples, _ = record_tables(loaded)
    stats = statistics(examples)
    assert list(stats.columns) == ["mean", "min", "median", "max"]
    parts = stats.loc["relevant parts per question"]
    assert (parts["mean"], parts["min"], parts["max"]) == (1.5, 1, 2)
    shown = preview(examples, rows=1)
    assert shown["parts"].tolist() == ["Ada built it. ‖ In 1900."]
