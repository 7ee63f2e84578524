"""Long chunks for the dense retrievers: cut at MiniLM's 256 word-pieces or embedded whole
(`retrievers.params.<sim|mmr|reo>.long_chunks`), with the real bundled MiniLM and FAISS."""

import numpy as np
import pandas as pd
import pytest

from ragdash.embeddings import get_embedder
from ragdash.retrieval import build_retriever, key_params, resolve_params
from ragdash.retrieval.long_chunks import embed_whole, max_tokens, split, windows

MODEL = "all-MiniLM-L6-v2"
FILLER = " ".join(["The village bakery sells bread, cakes and pastries every morning."] * 30)
TAIL = " The Zorblax spacecraft landed on the third moon of Neptune in 2091."


def test_windows_cover_the_text_in_pieces_of_at_most_size_tokens():
    text = "aa bb cc dd ee"
    offsets = [(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)]
    assert windows(text, offsets, 5) == [text]
    assert windows(text, offsets, 2) == ["aa bb ", "cc dd ", "ee"]
    assert "".join(windows(text, offsets, 3)) == text
    with pytest.raises(ValueError, match="at least 1"):
        windows(text, offsets, 0)


def test_split_gives_windows_the_model_reads_whole():
    assert max_tokens(MODEL) == 254
    (short,), (long,) = split(["A short chunk."], MODEL), split([FILLER + TAIL], MODEL)
    assert short == ["A short chunk."]
    assert len(long) >= 2 and "".join(long) == FILLER + TAIL
    from ragdash.retrieval.long_chunks import _tokenizer
    sizes = [len(_tokenizer(MODEL)(w, add_special_tokens=False)["input_ids"]) for w in long]
    assert max(sizes) <= 254


def test_a_chunk_that_fits_gets_the_same_vector_and_a_long_one_sees_its_tail():
    emb = get_embedder(MODEL).embed_documents
    short = "Paris is the capital of France."
    whole = embed_whole([short, FILLER, FILLER + TAIL], MODEL, emb)
    # the same text, embedded in another batch (padding moves the last bits only)
    assert np.allclose(whole[0], np.asarray(emb([short])[0], dtype=np.float32), atol=1e-6)
    assert np.allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-5)
    cut = np.asarray(emb([FILLER, FILLER + TAIL]), dtype=np.float32)
    assert float(cut[0] @ cut[1]) > 0.9999  # truncated: the tail past 256 word-pieces is lost
    assert float(whole[1] @ whole[2]) < 0.999  # whole: the tail moves the vector


def test_windows_let_sim_find_a_fact_past_the_cut(tmp_path):
    chunks = pd.DataFrame({
        "chunk_id": ["long#0", "ship#0", "moon#0"], "doc_id": ["long", "ship", "moon"],
        "text": [FILLER + TAIL, "Sailing ships cross the Atlantic ocean with cargo.",
                 "Triton is the largest moon of Neptune."]})
    query = ["Where did the Zorblax spacecraft land?"]
    ranks = {}
    for mode in ("truncate", "windows"):
        sim = build_retriever("sim", chunks, tmp_path, {"k": 3, "long_chunks": mode})
        ranks[mode] = [c for c, _ in sim.search(query)[0]].index("long#0")
    assert ranks["windows"] < ranks["truncate"]
    assert len(list(tmp_path.glob("faiss-*"))) == 2  # one index per handling


def test_long_chunks_is_checked_and_left_out_of_the_stage_key_at_its_default():
    default = resolve_params("sim", "paper")
    assert default["long_chunks"] == "truncate" and "long_chunks" not in key_params(default)
    assert key_params(resolve_params("sim", "paper", {"long_chunks": "windows"})
                      )["long_chunks"] == "windows"
    assert resolve_params("mmr", "paper", {"long_chunks": "windows"})["long_chunks"] == "windows"
    with pytest.raises(ValueError, match="long_chunks"):
        resolve_params("sim", "paper", {"long_chunks": "whole"})
    with pytest.raises(ValueError, match="long_chunks"):
        resolve_params("bm25", "paper", {"long_chunks": "windows"})
