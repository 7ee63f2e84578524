"""`ragdash cache`: sizes of the shared caches; trimming keeps the embeddings stored last."""

import numpy as np
import pytest

from ragdash.cli import main
from ragdash.embedding_cache import EmbeddingStore, forget_stores, text_key
from ragdash.rundir.root import EMBEDDING_CACHE as FILENAME


@pytest.fixture
def root(tmp_path):
    store = EmbeddingStore(tmp_path / FILENAME)
    store.put([(text_key("m", "fp32", str(i)), "m", "fp32", np.full(384, i, np.float32))
               for i in range(200)])
    store.close()
    yield tmp_path
    forget_stores()


def test_shows_counts_per_model(root, capsys):
    assert main(["cache", "--runs-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "200  m (fp32)" in out
    assert "LLM replies: none cached yet" in out


def test_max_mb_keeps_the_newest_vectors(root, capsys):
    assert main(["cache", "--runs-root", str(root), "--max-mb", "0.1"]) == 0
    out = capsys.readouterr().out
    kept = 0.1 * 1024 * 1024 // (384 * 4 + 32)
    assert f"Deleted {200 - int(kept):,} cached embeddings." in out
    store = EmbeddingStore(root / FILENAME)
    newest = [text_key("m", "fp32", str(i)) for i in range(200 - int(kept), 200)]
    assert set(store.get(newest)) == set(newest)
    assert not store.get([text_key("m", "fp32", "0")])
    store.close()


def test_clear_empties_it(root, capsys):
    assert main(["cache", "--runs-root", str(root), "--clear"]) == 0
    assert "Deleted 200 cached embeddings." in capsys.readouterr().out
    store = EmbeddingStore(root / FILENAME)
    assert len(store) == 0
    store.close()


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    assert main(["cache", "--runs-root", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["cache", "--runs-root", str(tmp_path), "--max-mb", "-1"]) == 0  # nothing cached
    (tmp_path / FILENAME).write_bytes(b"")
    assert main(["cache", "--runs-root", str(tmp_path), "--max-mb", "-1"]) == 2
    assert "--max-mb must be 0 or more" in capsys.readouterr().err
