"""BM25 over the chunks with PyTerrier: PISA (default, native, offline) or Terrier (needs jars)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from pathlib import Path

import pandas as pd

from ragdash.children import die_with_parent
from ragdash.retrieval.base import (
    Retriever,
    cached_build,
    corpus_fingerprint,
    held,
    index_key,
    searched,
)
from ragdash.retrieval.choices import BACKENDS, STEMMERS, STOPWORDS

_LIBC = ctypes.CDLL(None)


@contextlib.contextmanager
def _quiet_native_stderr(log: Path):
    """PISA writes progress bars straight to fds 1 and 2: send them to a log file instead."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log, "ab") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            _LIBC.fflush(None)  # C stdio buffers would otherwise flush after the restore
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)


class BM25(Retriever):
    """BM25 with k1, b, stemmer and stopwords configurable; the index is cached on disk.

    Defaults follow Terrier's BM25 as used in the paper (k1 = 1.2, b = 0.75, Porter stemming).
    Stopwords default to none: with PISA's Terrier list, a stemmed query term that collides
    with a stopword stem ("relativity" -> "relat") is silently dropped.
    """

    name = "bm25"
    finds_nothing_for = "questions of stopwords only or with no word in the corpus"

    def __init__(
        self,
        chunks: pd.DataFrame,
        cache_dir: Path,
        k: int = 5,
        k1: float = 1.2,
        b: float = 0.75,
        stemmer: str = "porter2",
        stopwords: str = "none",
        backend: str = "pisa",
    ):
        super().__init__(k)
        if stemmer not in STEMMERS:
            raise ValueError(f"bm25: unknown stemmer '{stemmer}' (use {', '.join(STEMMERS)})")
        if stopwords not in STOPWORDS:
            raise ValueError(f"bm25: unknown stopwords '{stopwords}' (use {', '.join(STOPWORDS)})")
        if backend not in BACKENDS:
            raise ValueError(f"bm25: unknown backend '{backend}' (use pisa or terrier)")
        self.k1, self.b = k1, b
        self._ids = chunks["chunk_id"].astype(str).tolist()
        if backend == "terrier":
            key = index_key("bm25-terrier", corpus_fingerprint(chunks), {})
            self._dir = Path(cache_dir) / key
            self._pipe = _terrier_pipeline(chunks, self._dir, searched(k, len(chunks)), k1, b)
            return
        from pyterrier_pisa import PisaIndex

        params = {"stemmer": stemmer, "stopwords": stopwords, "docno": "position"}
        key = index_key("bm25-pisa", corpus_fingerprint(chunks), params)
        settings = {"stemmer": stemmer, "stopwords": stopwords, "k1": k1, "b": b}

        def build(path: Path) -> None:
            texts = path / "texts.parquet"
            chunks[["text"]].to_parquet(texts, index=False)
            _in_child(path, texts, settings)
            texts.unlink()

        self._dir = cached_build(cache_dir, key, build)
        def ready() -> bool:
            return bool(list((self._dir / "pisa").glob(f"bm25.k1-{k1}.b-{b}.*")))

        if not ready():  # k1/b-specific structures, built quietly, one process at a time
            with held(self._dir / ".bm25.lock"):
                if not ready():
                    _in_child(self._dir, None, settings)
        index = PisaIndex(str(self._dir / "pisa"), text_field="text", stemmer=stemmer,
                          stops=stopwords, threads=1)
        self._pipe = index.bm25(k1=k1, b=b, num_results=searched(k, len(chunks)))

    def search(self, queries: list[str]) -> list[list[tuple[str, float]]]:
        frame = pd.DataFrame({"qid": [str(i) for i in range(len(queries))], "query": queries})
        with _quiet_native_stderr(self._dir / "query.log"):
            res = self._pipe(frame)
        by_q: dict[str, list[tuple[str, float]]] = {q: [] for q in frame["qid"]}
        for qid, docno, score in res.sort_values(["qid", "rank"])[["qid", "docno", "score"]]\
                .itertuples(index=False):
            by_q[str(qid)].append((self._ids[int(docno)], float(score)))
        return [by_q[q][: self.k] for q in frame["qid"]]


def _in_child(path: Path, texts: Path | None, settings: dict) -> None:
    """Index (when `texts` is given) and prepare BM25 structures in a child process.

    PISA's native code prints progress bars to the process's stdout/stderr in a way that
    cannot be silenced from Python, so the noisy work runs in a child writing to build.log. The
    child is a fresh interpreter running this module (not a multiprocessing spawn, which
    re-imports the parent's __main__ and fails under Streamlit, pytest-xdist or a notebook),
    killed when this process dies (`children.die_with_parent`: a job killed with -9 leaves no
    indexer running; its temp folder is removed by the next `cached_build`).
    """
    import json
    import subprocess

    job = json.dumps({"path": str(path), "texts": str(texts) if texts else None,
                      "settings": settings})
    with open(path / "build.log", "ab") as log:
        code = subprocess.run([sys.executable, "-m", __name__, job], stdin=subprocess.DEVNULL,
                              stdout=log, stderr=log, check=False,
                              preexec_fn=die_with_parent()).returncode  # killed with us
    if code != 0:
        tail = (path / "build.log").read_text(errors="replace")[-1500:]
        raise RuntimeError(f"bm25: building the PISA index failed (exit {code}): {tail}")


def _pisa_child(path: str, texts: str | None, settings: dict) -> None:
    from pyterrier_pisa import PisaIndex

    idx = PisaIndex(os.path.join(path, "pisa"), text_field="text", stemmer=settings["stemmer"],
                    stops=settings["stopwords"], threads=1)
    if texts:
        # PISA splits docnos on whitespace: index positions, mapped back to chunk ids later
        frame = pd.read_parquet(texts)
        idx.index({"docno": str(i), "text": t} for i, t in enumerate(frame["text"]))
    idx.bm25(k1=settings["k1"], b=settings["b"], num_results=1)(
        pd.DataFrame({"qid": ["0"], "query": ["warm up"]}))


def _terrier_pipeline(chunks: pd.DataFrame, index_dir: Path, k: int, k1: float, b: float):
    """Terrier's Java BM25 (the paper's engine). Needs Terrier's jars in PyTerrier's home."""
    import pyterrier as pt

    try:
        if not pt.java.started():
            pt.java.init()
        indexer = pt.IterDictIndexer(str(index_dir), meta={"docno": 64}, overwrite=True)
        ref = indexer.index({"docno": str(i), "text": t} for i, t in enumerate(chunks["text"]))
    except Exception as exc:  # any failure here means Java or the jars are not available
        raise RuntimeError(
            "bm25 backend 'terrier' needs Java and Terrier's jars (terrier-assemblies, "
            "terrier-python-helper) in PyTerrier's home directory, and they could not be "
            f"loaded ({type(exc).__name__}: {str(exc)[:200]}). Use backend 'pisa' (the default)."
        ) from exc
    return pt.terrier.Retriever(ref, wmodel="BM25", num_results=k,
                                controls={"bm25.k_1": str(k1), "bm25.b": str(b)})


if __name__ == "__main__":  # the child of `_in_child`
    import json

    _job = json.loads(sys.argv[1])
    _pisa_child(_job["path"], _job["texts"], _job["settings"])
