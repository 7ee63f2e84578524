"""Shared fixtures: a tiny generic dataset and corpus in JSONL; the `requires` marker (a missing
Chromium, llama.cpp or Ray fails the test when CI=true, skips it otherwise)."""

import pytest
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl
from fixtures.requires import require

pytest_plugins = ["pytester"]  # tests/test_suite_layout.py runs child pytest sessions


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.requires("ray", ...)`: each named need (fixtures/requires.py) present."""
    for mark in item.iter_markers("requires"):
        for name in mark.args:
            require(name)


@pytest.fixture
def generic(tmp_path):
    ds = write_jsonl(tmp_path / "qa.jsonl", [
        {"id": q, "question": t, "answer": a, "relevant_parts": p, "topic": "computing"}
        for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [
        {"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return ds, corpus
