"""The embedding cache on disk, embedding precision, and approximate dense indexes (HNSW, IVF)."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ragdash import embeddings
from ragdash.embedding_cache import (
    CachedEmbeddings,
    EmbeddingStore,
    forget_stores,
    open_store,
    text_key,
)
from ragdash.rundir.root import EMBEDDING_CACHE as FILENAME

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ["Alan Turing was born in Maida Vale.", "Ada Lovelace wrote the first program.",
         "Grace Hopper popularised debugging.", "Alan Turing was born in Maida Vale."]


class SpyModel:
    """A deterministic fake model: a unit vector per text (its first component marks bf16
    autocast), and a record of every call."""

    def __init__(self, dim: int = 8):
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        import torch

        self.calls.append(list(texts))
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            v[0] = 9.0 if torch.is_autocast_enabled("cpu") else v[0]
            out.append((v / np.linalg.norm(v)).tolist())
        return out


@pytest.fixture(autouse=True)
def _fresh_stores():
    forget_stores()
    yield
    forget_stores()


def cached(model: SpyModel | None = None, name: str = "spy") -> CachedEmbeddings:
    return CachedEmbeddings(model or SpyModel(), name, embeddings.active_settings)


# --- the cache --------------------------------------------------------------------------------

def test_a_hit_returns_the_bytes_computed_and_calls_the_model_zero_times(tmp_path):
    spy = SpyModel()
    emb = cached(spy)
    with embeddings.embedding_settings(tmp_path):
        first = emb.embed_documents(TEXTS)
        assert spy.calls == [TEXTS[:3]]  # the repeated text embedded once
        second = emb.embed_documents(TEXTS)
        query = emb.embed_query(TEXTS[1])
    assert len(spy.calls) == 1  # the second embed and the query came from the cache
    assert np.asarray(first, np.float32).tobytes() == np.asarray(second, np.float32).tobytes()
    computed = np.asarray(SpyModel().embed_documents(TEXTS), np.float32)
    assert np.asarray(first, np.float32).tobytes() == computed.tobytes()
    assert query == first[1]
    assert (tmp_path / FILENAME).exists()


def test_real_minilm_vectors_are_kept_bit_for_bit(tmp_path):
    emb = embeddings.get_embedder()
    with embeddings.embedding_settings(tmp_path):
        cold = np.asarray(emb.embed_documents(TEXTS[:3]), np.float32)
    forget_stores()  # a new process: read from the file
    emb.backend, real = SpyModel(384), emb.backend  # any model call would now give other vectors
    try:
        with embeddings.embedding_settings(tmp_path):
            warm = np.asarray(emb.embed_documents(TEXTS[:3]), np.float32)
        assert emb.backend.calls == []
    finally:
        emb.backend = real
    assert warm.tobytes() == cold.tobytes()
    assert np.allclose(np.linalg.norm(warm, axis=1), 1, atol=1e-5)


def test_models_and_precisions_do_not_collide(tmp_path):
    a, b = SpyModel(), SpyModel()
    keys = {text_key(m, p, TEXTS[0]) for m in ("m1", "m2") for p in embeddings.PRECISIONS}
    assert len(keys) == 4
    with embeddings.embedding_settings(tmp_path):
        fp32 = cached(a, "m1").embed_documents(TEXTS[:1])
        cached(b, "m2").embed_documents(TEXTS[:1])
    with embeddings.embedding_settings(tmp_path, "bf16"):
        bf16 = cached(a, "m1").embed_documents(TEXTS[:1])
    assert len(a.calls) == 2 and len(b.calls) == 1  # each (model, precision) computed once
    assert bf16[0][0] != fp32[0][0]  # computed under autocast, stored apart
    assert len(open_store(tmp_path)) == 3


def test_settings_follow_the_context_and_stay_in_their_thread(tmp_path):
    seen = {}

    def other():
        seen["thread"] = embeddings.current_settings()

    with embeddings.embedding_settings(tmp_path, "bf16") as s:
        assert embeddings.current_settings() == s == embeddings.EmbeddingSettings("bf16", tmp_path)
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["thread"] == embeddings.EmbeddingSettings()  # a new thread: the defaults
    assert embeddings.current_settings() == embeddings.EmbeddingSettings()
    with pytest.raises(ValueError, match="fp32, bf16"):
        embeddings.EmbeddingSettings("int4")


def test_two_threads_writing_at_once(tmp_path):
    spy = SpyModel()
    emb = cached(spy)
    texts = [f"sentence number {i}" for i in range(300)]
    errors: list[BaseException] = []

    def work(part: list[str]) -> None:
        try:
            with embeddings.embedding_settings(tmp_path):
                for i in range(0, len(part), 7):
                    got = emb.embed_documents(part[i: i + 7])
                    assert got == SpyModel().embed_documents(part[i: i + 7])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(texts[:200],)),
               threading.Thread(target=work, args=(texts[100:],))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(open_store(tmp_path)) == 300
    spy.calls.clear()
    with embeddings.embedding_settings(tmp_path):
        emb.embed_documents(texts)
    assert spy.calls == []


def test_two_processes_writing_at_once_leave_a_sound_file(tmp_path):
    code = (
        "import sys, numpy as np\n"
        "from ragdash.embedding_cache import EmbeddingStore\n"
        "s = EmbeddingStore(sys.argv[1])\n"
        "for i in range(60):\n"
        "    s.put([(f'{sys.argv[2]}{i}-{j}'.encode(), 'm', 'fp32', np.full(384, i, 'f4'))\n"
        "           for j in range(20)])\n"
        "    assert len(s.get([f'{sys.argv[2]}{i}-0'.encode()])) == 1\n")
    path = tmp_path / FILENAME
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), tag], cwd=ROOT)
             for tag in "ab"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 2 * 60 * 20


def test_disabled_by_the_environment_or_the_config(tmp_path, monkeypatch):
    spy = SpyModel()
    emb = cached(spy)
    monkeypatch.setenv(embeddings.CACHE_ENV, "0")
    with embeddings.embedding_settings(tmp_path):
        emb.embed_documents(TEXTS[:2])
        emb.embed_documents(TEXTS[:2])
    assert len(spy.calls) == 2 and not (tmp_path / FILENAME).exists()
    monkeypatch.delenv(embeddings.CACHE_ENV)
    with embeddings.configured(tmp_path, "fp32", cache=False):
        assert embeddings.active_settings().cache_dir is None
    with embeddings.configured(tmp_path) as s:
        assert s == embeddings.EmbeddingSettings("fp32", tmp_path)


@pytest.mark.parametrize("damage", [b"this is not a database at all" * 100,
                                    b"SQLite format 3\x00" + b"\xff" * 5000])
def test_a_damaged_file_is_recreated_with_a_warning(tmp_path, caplog, damage):
    (tmp_path / FILENAME).write_bytes(damage)
    spy = SpyModel()
    with caplog.at_level(logging.WARNING, logger="ragdash"), \
            embeddings.embedding_settings(tmp_path):
        got = cached(spy).embed_documents(TEXTS[:2])
        cached(spy).embed_documents(TEXTS[:2])
    assert got == SpyModel().embed_documents(TEXTS[:2])
    assert len(spy.calls) == 1  # the recreated cache works
    assert "damaged" in caplog.text and "recreated" in caplog.text
    assert (tmp_path / f"{FILENAME}.corrupt").read_bytes() == damage


def test_a_file_damaged_while_open_is_recreated(tmp_path, caplog):
    store = EmbeddingStore(tmp_path / FILENAME)
    store.put([(b"k", "m", "fp32", np.ones(4, "f4"))])
    store._conn.close()
    (tmp_path / FILENAME).write_bytes(b"garbage" * 1000)
    store._conn = sqlite3.connect(tmp_path / FILENAME, check_same_thread=False,
                                  isolation_level=None)
    with caplog.at_level(logging.WARNING, logger="ragdash"):
        assert store.get([b"k"]) == {}
        store.put([(b"k", "m", "fp32", np.ones(4, "f4"))])
    assert "damaged" in caplog.text
    assert store.get([b"k"])[b"k"].tolist() == [1.0] * 4


def test_an_unusable_location_switches_the_cache_off_without_failing(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    spy = SpyModel()
    with caplog.at_level(logging.WARNING, logger="ragdash"), \
            embeddings.embedding_settings(blocker / "runs"):
        got = cached(spy).embed_documents(TEXTS[:2])
        cached(spy).embed_documents(TEXTS[:2])
    assert got == SpyModel().embed_documents(TEXTS[:2])
    assert len(spy.calls) == 2
    assert "cannot be used" in caplog.text


def test_a_model_giving_too_few_vectors_is_an_error(tmp_path):
    class Short(SpyModel):
        def embed_documents(self, texts):
            return super().embed_documents(texts)[:-1]

    with pytest.raises(ValueError, match="gave 1 vectors for 2 texts"), \
            embeddings.embedding_settings(tmp_path):
        cached(Short()).embed_documents(TEXTS[:2])
    assert len(open_store(tmp_path)) == 0


def test_bf16_autocast_is_close_to_fp32_on_minilm():
    emb = embeddings.get_embedder()
    fp32 = emb.compute(TEXTS[:3], "fp32")
    bf16 = emb.compute(TEXTS[:3], "bf16")
    assert not np.array_equal(fp32, bf16)
    assert np.einsum("ij,ij->i", fp32, bf16).min() > 0.999
    with pytest.raises(ValueError, match="fp32 or bf16"):
        emb.compute(TEXTS[:1], "int8")



@pytest.mark.parametrize("native", [False, True])
def test_bf16_on_a_cpu_without_bfloat16_warns_once(monkeypatch, caplog, native):
    from ragdash import embedding_cache

    assert isinstance(embedding_cache.bf16_native(), bool)  # this CPU's answer, either way
    monkeypatch.setattr(embedding_cache, "bf16_native", lambda: native)
    embedding_cache._warn_slow_bf16.cache_clear()
    with caplog.at_level(logging.WARNING, logger="ragdash"):
        for _ in range(2):
            with embedding_cache.autocast("bf16"):
                pass
        with embedding_cache.autocast("fp32"):
            pass
    warned = [r for r in caplog.records if "no bfloat16 instructions" in r.getMessage()]
    assert len(warned) == (0 if native else 1)
    embedding_cache._warn_slow_bf16.cache_clear()

# --- configuration and stage keys ----------------------------------------------------------------

def test_config_validates_the_embeddings_section():
    from ragdash.config import ConfigError, load_config

    assert load_config()["embeddings"] == {"precision": "fp32", "cache": True}
    for bad, message in [({"precision": "int8"}, "embeddings.precision"),
                         ({"cache": "yes"}, "embeddings.cache"),
                         ({"precison": "bf16"}, "did you mean 'embeddings.precision'")]:
        with pytest.raises(ConfigError, match=message):
            load_config(overrides={"embeddings": bad})
    with pytest.raises(ConfigError, match="index must be one of exact, hnsw, ivf"):
        load_config(overrides={"retrievers": {"use": ["sim"], "params": {"sim": {"index": "lsh"}}}})


def test_defaults_leave_stage_keys_as_before_and_bf16_changes_only_what_it_shapes():
    from ragdash.config import load_config, load_spec
    from ragdash.stages import chunk, retrieve
    from ragdash.stages.runner import stage_keys

    spec = load_spec(overrides={"retrievers": {"use": ["bm25", "sim", "mmr"]}})
    cfg = spec.to_config()
    r = cfg["retrievers"]
    from ragdash.retrieval import ADDED_LATER

    old = {n: {k: v for k, v in p.items() if k not in ADDED_LATER}
           for n, p in r["resolved"].items()}
    assert r["resolved"]["sim"]["index"] == "exact"
    assert r["resolved"]["sim"]["long_chunks"] == "truncate"
    assert retrieve.settings(spec) == (old, None)  # the formula before `index`, `long_chunks`
    # and precision
    assert chunk.settings(spec) == (cfg["chunker"],)
    base = stage_keys(cfg)
    bf16 = stage_keys(load_config(overrides={"retrievers": {"use": ["bm25", "sim", "mmr"]},
                                             "embeddings": {"precision": "bf16"}}))
    assert bf16["ingest"] == base["ingest"]
    assert bf16["chunk"] != base["chunk"] and bf16["retrieve"] != base["retrieve"]
    lexical = {"chunker": {"method": "recursive"}, "retrievers": {"use": ["bm25"]}}
    plain = stage_keys(load_config(overrides=lexical))
    with_bf16 = stage_keys(load_config(overrides={**lexical, "embeddings": {"precision": "bf16"}}))
    assert plain["chunk"] == with_bf16["chunk"] and plain["retrieve"] == with_bf16["retrieve"]
    from ragdash.stages import score

    semantic = {**lexical, "scoring": {"also": ["semantic"]}}
    assert score.settings(load_spec(overrides=lexical)) == score.settings(
        load_spec(overrides={**lexical, "embeddings": {"precision": "bf16"}}))
    assert score.settings(load_spec(overrides=semantic)) != score.settings(
        load_spec(overrides={**semantic, "embeddings": {"precision": "bf16"}}))
    hnsw = stage_keys(load_config(overrides={"retrievers": {
        "use": ["bm25", "sim", "mmr"], "params": {"sim": {"index": "hnsw"}}}}))
    assert hnsw["retrieve"] != base["retrieve"] and hnsw["chunk"] == base["chunk"]


# --- approximate indexes ---------------------------------------------------------------------

def test_recall_at_k_matches_a_brute_force_count():
    import faiss

    from ragdash.retrieval.dense import approximate_index, recall_at_k

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((2000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:50] + 0.3 * rng.standard_normal((50, 16)).astype(np.float32)
    exact = faiss.IndexFlatIP(16)
    exact.add(vectors)
    ivf = approximate_index("ivf", vectors)
    assert ivf.nlist == 51 and ivf.nprobe == 8  # min(4 sqrt(2000), 2000 // 39), max(8, 51 // 8)
    ivf.nprobe = 1  # a poor search, so recall falls below 1
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    _, found = ivf.search(queries, 10)
    expected = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)])
    got = recall_at_k(ivf, exact, queries, 10)
    assert got == pytest.approx(expected) and got < 0.95
    assert recall_at_k(approximate_index("hnsw", vectors), exact, queries, 10) > 0.95
    assert recall_at_k(ivf, exact, queries[:0], 10) == 1.0
    assert approximate_index("ivf", None).ntotal == 0
    with pytest.raises(ValueError, match="approximate"):
        approximate_index("exact", vectors)


def _chunks(n: int = 60) -> pd.DataFrame:
    topics = ["rivers and lakes", "computers and programs", "painters and paintings",
              "football and cups", "planets and stars", "bread and cheese"]
    texts = [f"Note {i} is about {topics[i % 6]}, item {i // 6} of its kind." for i in range(n)]
    return pd.DataFrame({"chunk_id": [f"d#{i}" for i in range(n)], "text": texts})


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_dense_retrievers_on_an_approximate_index(tmp_path, kind):
    from ragdash.retrieval import build_retriever

    chunks = _chunks()
    queries = pd.DataFrame({"qid": ["a", "b"], "query": ["a famous painter", "a planet"]})
    exact = build_retriever("sim", chunks, tmp_path, {"k": 5})(queries)
    for name in ("sim", "mmr", "reo"):
        ret = build_retriever(name, chunks, tmp_path, {"k": 5, "index": kind})
        res = ret(queries)
        assert len(res) == 10 and res["docno"].isin(chunks["chunk_id"]).all()
        assert ret.index_recall(queries["query"].tolist(), 5) == 1.0  # tiny corpus: all found
    sim = build_retriever("sim", chunks, tmp_path, {"k": 5, "index": kind})(queries)
    assert sim["docno"].tolist() == exact["docno"].tolist()
    assert len(list(tmp_path.glob(f"faiss-{kind}-*"))) == 1  # cached beside the exact index
    with pytest.raises(ValueError, match="index must be one of"):
        build_retriever("sim", chunks, tmp_path, {"index": "annoy"})


def test_the_retrieve_stage_records_index_recall(tmp_path, generic):
    from ragdash.config import load_config
    from ragdash.stages.runner import run_stages

    ds, corpus = generic
    cfg = load_config(overrides={
        "dataset": {"path": str(ds), "corpus": str(corpus)}, "chunker": {"method": "recursive"},
        "retrievers": {"use": ["bm25", "sim", "mmr"], "params": {"sim": {"index": "hnsw"},
                                                                  "mmr": {"index": "ivf"}}},
        "runs_root": str(tmp_path / "runs")})
    run = run_stages(cfg, tmp_path / "runs" / "r", ["ingest", "chunk", "retrieve"])
    recall = run.manifest["index_recall"]
    assert set(recall) == {"sim", "mmr"}
    assert recall["sim"] == {"index": "hnsw", "k": 10, "queries": 4, "recall": 1.0}
    assert recall["mmr"]["index"] == "ivf"
    assert (tmp_path / "runs" / FILENAME).exists()  # the run's embeddings were cached
    exact = run_stages(load_config(overrides={**cfg, "retrievers": {
        "use": ["sim"], "params": {"sim": {"index": "exact"}}}}), tmp_path / "runs" / "r",
        ["retrieve"])
    assert exact.manifest["index_recall"] == {}  # no approximate index: no stale figure


def test_the_model_is_loaded_only_on_the_first_text_the_cache_lacks(tmp_path):
    """Issue 34 §4: every child process imported sentence-transformers and loaded MiniLM (about
    20 s) even when the cache held every vector."""
    built = []

    def build():
        built.append(1)
        return SpyModel()

    emb = CachedEmbeddings(build, "m-lazy", embeddings.active_settings)
    with embeddings.embedding_settings(tmp_path):
        assert emb.embed_documents([]) == [] and built == []
        emb.embed_documents(TEXTS[:2])
        assert built == [1]  # the first miss builds it
    forget_stores()
    again = CachedEmbeddings(build, "m-lazy", embeddings.active_settings)
    with embeddings.embedding_settings(tmp_path):
        again.embed_documents(TEXTS[:2])  # all cached: no model
        assert built == [1]
        again.embed_documents(TEXTS[:3])
        assert built == [1, 1]


def test_one_folder_can_hold_the_cache_of_every_runs_root(tmp_path, monkeypatch):
    """RAGDASH_EMBED_CACHE_DIR: vectors depend on text, model and precision alone, so runs roots
    (and a test session) can share them; `ragdash cache` then looks there too."""
    from ragdash.rundir.root import EMBED_CACHE_DIR_ENV, RunsRoot

    shared = tmp_path / "shared"
    monkeypatch.setenv(EMBED_CACHE_DIR_ENV, str(shared))
    model = SpyModel()
    emb = CachedEmbeddings(model, "m-shared", embeddings.active_settings)
    for root in ("a", "b"):
        with embeddings.embedding_settings(tmp_path / root):
            emb.embed_documents(TEXTS[:2])
    assert len(model.calls) == 1  # the second runs root read the first one's vectors
    assert RunsRoot(tmp_path / "a").embedding_cache == shared / FILENAME
    assert (shared / FILENAME).exists() and not (tmp_path / "a" / FILENAME).exists()
    monkeypatch.delenv(EMBED_CACHE_DIR_ENV)
    assert RunsRoot(tmp_path / "a").embedding_cache == tmp_path / "a" / FILENAME
