"""Shared fixtures: a tiny generic dataset and corpus in JSONL."""

import json

import pytest

DOCS = [
    ("turing", "Alan Turing", "Alan Turing was an English mathematician and computer scientist. "
     "He was born in Maida Vale, London. Turing is widely considered to be the father of "
     "theoretical computer science."),
    ("lovelace", "Ada Lovelace", "Ada Lovelace was an English mathematician and writer. She is "
     "chiefly known for her work on Charles Babbage's Analytical Engine. She was the daughter "
     "of the poet Lord Byron."),
    ("babbage", "Charles Babbage", "Charles Babbage was an English polymath. He originated the "
     "concept of a digital programmable computer. Babbage designed the Difference Engine."),
    ("hopper", "Grace Hopper", "Grace Hopper was an American computer scientist and United "
     "States Navy rear admiral. She was a pioneer of computer programming. Hopper popularised "
     "the term debugging."),
]
QUESTIONS = [
    ("q1", "Where was Alan Turing born?", "Maida Vale, London",
     ["He was born in Maida Vale, London."]),
    ("q2", "Whose daughter was Ada Lovelace?", "Lord Byron",
     ["She was the daughter of the poet Lord Byron."]),
    ("q3", "Which engine did Babbage design?", "the Difference Engine",
     ["Babbage designed the Difference Engine.", "He originated the concept of a digital "
      "programmable computer."]),
    ("q4", "Which term did Grace Hopper popularise?", "debugging",
     ["Hopper popularised the term debugging."]),
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def generic(tmp_path):
    ds = write_jsonl(tmp_path / "qa.jsonl", [
        {"id": q, "question": t, "answer": a, "relevant_parts": p, "topic": "computing"}
        for q, t, a, p in QUESTIONS])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [
        {"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return ds, corpus
