"""One contract for every registered retriever and chunker, as scikit-learn's `check_estimator`:
its declared parameters agree with its signature, round-trip through the run specification,
bad values are refused naming the parameter, a retriever returns the result columns, and the
same input gives the same output twice. Real components on a tiny corpus; the retrievers that
embed (MiniLM) are marked slow."""

from __future__ import annotations

import inspect
import math

import pandas as pd
import pytest

from ragdash import chunking, retrieval
from ragdash.config import ConfigError, RunSpec, load_spec
from ragdash.data.schema import Document
from ragdash.params import Param

TEXTS = {
    "paris#0": "Paris is the capital and largest city of France.",
    "seine#0": "The Seine is a river that flows through Paris in northern France.",
    "berlin#0": "Berlin is the capital of Germany and its largest city.",
    "spree#0": "The Spree river flows through the centre of Berlin.",
    "tea#0": "Tea is an aromatic beverage made from the leaves of Camellia sinensis.",
    "mars#0": "Mars is the fourth planet from the Sun.",
}
QUERIES = pd.DataFrame({"qid": ["q0", "q1"],
                        "query": ["Which river flows through Berlin?", "What is tea made of?"]})
DOCS = [Document("a", "A", "Paris is in France. The Seine flows through it. " * 8),
        Document("b", "B", "Tea is a drink.\n\nIt is made from leaves. Mars is a planet.")]

RETRIEVERS = list(retrieval.RETRIEVERS)
CHUNKERS = list(chunking.CHUNKERS)
EMBEDS = {name for name, cls in retrieval.RETRIEVERS.items() if cls.embeds}


def _slow_if_embeds(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n in EMBEDS else n for n in names]


def _other(p: Param):
    """A valid value other than the default."""
    if p.choices is not None:
        return next(c for c in p.choices if c != p.default)
    if p.kind is str:
        return f"{p.default}-other" if p.name != "tokenizer" else "cl100k"
    step = 1 if p.kind is int else 0.25
    value = p.default + step
    return value if p.high is None or value <= p.high else p.default - step


def _bad(p: Param) -> list:
    """Values the declaration refuses: wrong types, out of bounds, outside the choices."""
    if p.choices is not None:
        return ["no-such-choice", 3, None]
    if p.kind is str:
        return [3, None, ["a"]]
    bad: list = ["many", None, True, math.nan]
    if p.kind is int:
        bad.append(2.5)
    if p.low is not None:
        bad.append(p.low - 1)
    if p.high is not None:
        bad.append(p.high + 1)
    return bad


def _signature_defaults(fn) -> dict:
    return {q.name: q.default for q in inspect.signature(fn).parameters.values()
            if q.default is not inspect.Parameter.empty
            and q.name not in ("progress", "embedder", "ask")}


@pytest.mark.parametrize("name", RETRIEVERS)
def test_a_retrievers_declarations_match_its_signature(name):
    declared = retrieval.params_of(name)
    assert declared and all(p.help for p in declared)
    assert {p.name: p.default for p in declared} == \
        _signature_defaults(retrieval.RETRIEVERS[name].__init__)
    for p in declared:
        assert p.check(name, p.default) == p.default  # every default is valid


@pytest.mark.parametrize("method", CHUNKERS)
def test_a_chunkers_declarations_match_its_signature(method):
    declared = chunking.params_of(method)
    assert all(p.help for p in declared)
    assert {p.name: p.default for p in declared} == \
        _signature_defaults(chunking.CHUNKERS[method])
    assert chunking.describe(method)


@pytest.mark.parametrize("name", RETRIEVERS)
def test_retriever_parameters_round_trip_through_the_spec(name):
    for p in retrieval.params_of(name):
        value = _other(p)
        extra = {"retrievers.params.mmr.fetch_k": 50} if name == "mmr" else {}
        spec = load_spec(None, {"retrievers.use": [name], **extra,
                                f"retrievers.params.{name}.{p.name}": value})
        assert spec.retrievers.resolved[name][p.name] == value, p.name
        assert spec.retrievers.params[name][p.name] == value
        assert RunSpec.from_config(spec.to_config()) == spec


@pytest.mark.parametrize("method", CHUNKERS)
def test_chunker_parameters_round_trip_through_the_spec(method):
    for p in chunking.params_of(method):
        value = _other(p)
        spec = load_spec(None, {"chunker.method": method, f"chunker.params.{p.name}": value})
        assert spec.chunker.params == {p.name: value}
        assert spec.chunker.resolved()[p.name] == value
        assert RunSpec.from_config(spec.to_config()) == spec


@pytest.mark.parametrize("name", RETRIEVERS)
def test_bad_retriever_parameters_are_refused_by_name(name):
    for p in retrieval.params_of(name):
        for value in _bad(p):
            with pytest.raises(ConfigError, match=rf"{name}\.{p.name} must be"):
                load_spec(None, {"retrievers.use": [name],
                                 f"retrievers.params.{name}.{p.name}": value})
    with pytest.raises(ConfigError, match=rf"{name}: unknown parameter\(s\) \['nope'\]"):
        load_spec(None, {"retrievers.use": [name], f"retrievers.params.{name}.nope": 1})


@pytest.mark.parametrize("method", CHUNKERS)
def test_bad_chunker_parameters_are_refused_by_name(method):
    for p in chunking.params_of(method):
        for value in _bad(p):
            with pytest.raises(ConfigError, match=rf"chunker.params: {method}\.{p.name} must"):
                load_spec(None, {"chunker.method": method, f"chunker.params.{p.name}": value})
    with pytest.raises(ConfigError, match=rf"{method}: unknown parameter\(s\) \['nope'\]"):
        load_spec(None, {"chunker.method": method, "chunker.params.nope": 1})


def _ask(questions):
    """mlq's sub-question replies, the same for every question (no LLM)."""
    return ["1. Which river is in Berlin?\n2. What is tea?" for _ in questions]


@pytest.mark.parametrize("name", _slow_if_embeds(RETRIEVERS))
def test_a_retriever_returns_ranked_results_deterministically(name, tmp_path):
    chunks = pd.DataFrame({"chunk_id": list(TEXTS), "doc_id": [c[:-2] for c in TEXTS],
                           "text": list(TEXTS.values())})
    params = retrieval.resolve_params(name, None, {"k": 3})
    runs = []
    for cache in ("a", "b"):  # a fresh index each time
        r = retrieval.build_retriever(name, chunks, tmp_path / cache, params,
                                      ask=_ask if name == "mlq" else None)
        runs.append(r(QUERIES.copy()))
    res = runs[0]
    assert list(res.columns[:5]) == retrieval.RESULT_COLUMNS
    assert set(res["qid"]) <= set(QUERIES["qid"]) and set(res["docno"]) <= set(TEXTS)
    assert res.groupby("qid").size().max() <= 3
    assert (res.groupby("qid")["rank"].apply(lambda s: list(s) == list(range(len(s))))).all()
    pd.testing.assert_frame_equal(runs[0], runs[1])


@pytest.mark.parametrize("method", [pytest.param(m, marks=pytest.mark.slow)
                                    if m == "semantic" else m for m in CHUNKERS])
def test_a_chunker_gives_exact_spans_deterministically(method):
    first = chunking.chunk_documents(DOCS, method)
    assert first and first == chunking.chunk_documents(DOCS, method)
    texts = {d.doc_id: d.text for d in DOCS}
    assert all(texts[c.doc_id][c.start:c.end] == c.text for c in first)
