"""Retrievers on a small hand-made corpus: real PISA, FAISS, MiniLM and LangChain components."""

import pandas as pd
import pyterrier as pt
import pytest

from ragdash.retrieval import (
    PRESETS,
    RETRIEVERS,
    build_retriever,
    default_params,
    resolve_params,
)
from ragdash.retrieval.multiquery import parse_queries, parse_queries_reference, rrf

TEXTS = {
    "paris#0": "Paris is the capital and largest city of France.",
    "seine#0": "The Seine is a river that flows through Paris in northern France.",
    "berlin#0": "Berlin is the capital of Germany and its largest city.",
    "spree#0": "The Spree river flows through the centre of Berlin.",
    "banana#0": "Bananas are elongated yellow fruit produced by herbaceous plants.",
    "apple#0": "Apples are sweet fruit that grow on trees in temperate climates.",
    "relativity#0": "Einstein's theory of relativity changed physics.",
    "ocean#0": "The Pacific is the largest and deepest ocean on Earth.",
    "desert#0": "The Sahara is the largest hot desert in the world.",
    "moon#0": "The Moon orbits the Earth about once every 27 days.",
    "mars#0": "Mars is the fourth planet from the Sun.",
    "tea#0": "Tea is an aromatic beverage made from the leaves of Camellia sinensis.",
}


@pytest.fixture(scope="module")
def chunks():
    return pd.DataFrame({"chunk_id": list(TEXTS), "doc_id": [c.split("#")[0] for c in TEXTS],
                         "text": list(TEXTS.values())})


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("index_cache")


def topics(*queries):
    return pd.DataFrame({"qid": [f"q{i}" for i in range(len(queries))], "query": list(queries)})


def test_bm25_ranks_the_lexical_match_first(chunks, cache):
    bm25 = build_retriever("bm25", chunks, cache, {"k": 3})
    res = bm25(topics("Which river flows through Berlin?", "theory of relativity"))
    assert list(res.columns[:5]) == ["qid", "query", "docno", "score", "rank"]
    first = res[res["rank"] == 0].set_index("qid")["docno"]
    assert first["q0"] == "spree#0"
    assert first["q1"] == "relativity#0"  # stopwords off: the "relat" stem is kept
    assert res.groupby("qid").size().max() <= 3
    assert (res.groupby("qid")["score"].apply(lambda s: s.is_monotonic_decreasing)).all()


def test_bm25_index_is_cached_on_disk(chunks, cache):
    build_retriever("bm25", chunks, cache, {"k": 2})
    dirs = sorted(p.name for p in cache.iterdir() if p.name.startswith("bm25"))
    build_retriever("bm25", chunks, cache, {"k": 4, "k1": 0.9})  # query-time params: same index
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith("bm25")) == dirs
    build_retriever("bm25", chunks, cache, {"k": 2, "stemmer": "none"})  # index-time: new one
    assert len([p for p in cache.iterdir() if p.name.startswith("bm25")]) == len(dirs) + 1


def test_sim_finds_the_semantic_match(chunks, cache):
    sim = build_retriever("sim", chunks, cache, {"k": 4})
    res = sim(topics("What yellow fruit grows on plants?"))
    assert res.iloc[0]["docno"] == "banana#0"
    assert res["score"].is_monotonic_decreasing
    assert res["score"].iloc[0] <= 1.0 + 1e-6  # cosine on unit vectors


def test_mmr_diversifies_compared_with_sim(chunks, cache):
    q = topics("capital city of a European country")
    sim = build_retriever("sim", chunks, cache, {"k": 3})(q)["docno"].tolist()
    mmr = build_retriever("mmr", chunks, cache, {"k": 3, "fetch_k": 12,
                                                 "lambda_mult": 0.0})(q)["docno"].tolist()
    assert mmr[0] == sim[0]
    assert mmr != sim
    with pytest.raises(ValueError, match="fetch_k"):
        build_retriever("mmr", chunks, cache, {"k": 5, "fetch_k": 2})


def test_reorder_is_the_long_context_permutation_of_sim(chunks, cache):
    q = topics("a river in a European capital")
    sim = build_retriever("sim", chunks, cache, {"k": 10})(q)["docno"].tolist()
    reo = build_retriever("reo", chunks, cache, {"k": 10})(q)["docno"].tolist()
    d = dict(enumerate(sim, start=1))
    assert reo == [d[i] for i in (2, 4, 6, 8, 10, 9, 7, 5, 3, 1)]


def replying(text):
    """mlq's `ask`: the same reply for every question; records the questions asked."""
    def ask(questions):
        ask.asked.append(list(questions))
        return [text] * len(questions)

    ask.asked = []
    return ask


def test_mlq_default_uses_original_and_fuses_all_subquestions(chunks, cache):
    ask = replying("Here are the sub-questions:\n\n1. Which river flows through Paris?\n"
                   "2. Which river flows through Berlin?")
    mlq = build_retriever("mlq", chunks, cache, {"k": 4}, ask=ask)
    res = mlq(topics("Compare the rivers of Paris and Berlin", "Rivers?"))
    assert ask.asked == [["Compare the rivers of Paris and Berlin", "Rivers?"]]  # one batch
    assert mlq.generated["Compare the rivers of Paris and Berlin"] == [
        "Which river flows through Paris?", "Which river flows through Berlin?"]
    docs = res[res["qid"] == "q0"]["docno"].tolist()
    assert {"seine#0", "spree#0"} <= set(docs)
    assert len(docs) == 4


def test_mlq_reference_mode_keeps_blank_lines_and_truncates(chunks, cache):
    ask = replying("Which river flows through Berlin?\n\nWhat is tea?")
    mlq = build_retriever("mlq", chunks, cache, {"k": 3, "mode": "reference"}, ask=ask)
    res = mlq(topics("Rivers and drinks"))
    assert mlq.generated["Rivers and drinks"] == ["Which river flows through Berlin?", "",
                                                  "What is tea?"]
    sim = build_retriever("sim", chunks, cache, {"k": 3})(
        topics("Which river flows through Berlin?"))["docno"].tolist()
    assert res["docno"].tolist() == sim  # the paper's artefact: sim top-k of the first line


def test_mlq_needs_an_llm(chunks, cache):
    with pytest.raises(ValueError, match="needs an LLM"):
        build_retriever("mlq", chunks, cache, {}, ask=None)


def test_query_parsers_and_fusion():
    assert parse_queries("Sure! Here are the questions:\n- A?\n2) B?\n\nA?\n") == ["A?", "B?"]
    assert parse_queries("1. a\n2. b\n3. c", max_queries=2) == ["a", "b"]
    assert parse_queries_reference(" x \n\n y") == ["x", "", "y"]
    fused = rrf([[("a", 0), ("b", 0)], [("b", 0), ("c", 0)]], k=3)
    assert [d for d, _ in fused] == ["b", "a", "c"]


def test_params_presets_and_errors():
    assert default_params("bm25")["k1"] == 1.2
    assert resolve_params("bm25", "paper")["k"] == 5
    assert resolve_params("sim", "paper")["k"] == 10
    assert resolve_params("mlq", "equal-k")["k"] == 10
    assert set(PRESETS["paper"]) == set(RETRIEVERS)
    with pytest.raises(ValueError, match="unknown parameter"):
        resolve_params("sim", "paper", {"fetch_k": 3})
    with pytest.raises(ValueError, match="unknown retriever"):
        default_params("colbert")
    with pytest.raises(ValueError, match="unknown preset"):
        resolve_params("sim", "fancy")


def test_bad_bm25_settings(chunks, cache):
    with pytest.raises(ValueError, match="stemmer"):
        build_retriever("bm25", chunks, cache, {"stemmer": "snowball-xx"})
    with pytest.raises(ValueError, match="k must be positive"):
        build_retriever("sim", chunks, cache, {"k": 0})
    with pytest.raises(ValueError, match="lacks column"):
        build_retriever("sim", chunks, cache, {"k": 2})(pd.DataFrame({"query": ["x"]}))


def test_terrier_backend_fails_with_a_clear_message_without_jars(chunks, cache):
    with pytest.raises(RuntimeError, match="Terrier's jars"):
        build_retriever("bm25", chunks, cache, {"backend": "terrier"})


def test_retrievers_compose_with_pt_experiment(chunks, cache):
    q = topics("Which river flows through Berlin?", "yellow fruit")
    qrels = pd.DataFrame({"qid": ["q0", "q1"], "docno": ["spree#0", "banana#0"], "label": [1, 1]})
    res = pt.Experiment(
        [build_retriever("bm25", chunks, cache, {"k": 5}),
         build_retriever("sim", chunks, cache, {"k": 5})],
        q, qrels, eval_metrics=["recip_rank"], names=["bm25", "sim"], verbose=False,
    )
    assert list(res["name"]) == ["bm25", "sim"]
    assert (res["recip_rank"] > 0.5).all()


def test_chunk_ids_with_spaces_and_punctuation_survive_bm25(cache):
    chunks = pd.DataFrame({"chunk_id": ["Ed Wood (film)#0", "Scott Derrickson#1"],
                           "text": ["Ed Wood is a 1994 American film.",
                                    "Scott Derrickson is an American director."]})
    res = build_retriever("bm25", chunks, cache, {"k": 2})(topics("American director"))
    assert res.iloc[0]["docno"] == "Scott Derrickson#1"
    assert set(res["docno"]) <= set(chunks["chunk_id"])
