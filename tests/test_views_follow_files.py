"""Every cached view of a run follows every file it reads: what a page shows changes as soon as a
run file it rests on changes, with no server restart (issue 49: labels written while the
Overview was open did not reach it, because the labels' fingerprint read labels.parquet behind
the cache's back).

The dashboard keeps a view's answer in `ragdash.rundir.Memo` with the stamp of every file the
view asked its reader about; a file read any other way is a file the cache cannot follow. The
invariant test opens every page of a labelled run with each memoised computation watched: every
run file it stats or opens must be one its reader was asked about."""

from __future__ import annotations

import builtins
import io
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run

from ragdash import labels
from ragdash.labels import store
from ragdash.rundir import Memo, Run

PAGES = ("overview", "retrieval", "browser", "compare", "runs", "llm", "label", "thresholds",
         "report")
NO_LABEL_YET = "No answer is labelled yet"


def _label(run: Run, n: int, who: str = "ana") -> None:
    """`n` more answers of the sample labelled by `who`, alternately correct and wrong."""
    done = set(zip(*[store.read_labels(run)[c] for c in ("qid", "system")], strict=True))
    todo = [i for i in store.sample_items(run) if (i.qid, i.system) not in done][:n]
    for k, item in enumerate(todo):
        store.add_label(run, item.qid, item.system, "correct" if k % 2 else "wrong", who)


def _built(path: Path) -> Run:
    """A run as the calibrate stage leaves it: calibration.json with its label sections (no
    label yet: fingerprint "none"), the reference metrics saved, and a sample drawn."""
    from ragdash.analysis.reference import score_answers

    run = Run(make_run(path, n_questions=30, seed=3, retrievers=("bm25", "sim")))
    run.write("reference", score_answers(run.read("answers"), run.read("examples")))
    assert labels.refresh(run)
    assert run.calibration().labels["fingerprint"] != "none"  # the reference is hashed in
    store.draw_sample(run, 24)
    return run


@pytest.fixture(scope="module")
def built_once(tmp_path_factory) -> Path:
    """The run `_built` makes, made once: each test labels a copy of its own (`built`)."""
    return _built(tmp_path_factory.mktemp("built") / "built").path


@pytest.fixture
def built(built_once, tmp_path) -> Run:
    return Run(shutil.copytree(built_once, tmp_path / "built"))


def test_a_kept_view_of_the_labels_changes_when_labels_are_written(built):
    """The trust section's computation, kept in a memo, gives the new labels once written."""
    memo = Memo()

    def findings(reader):
        return labels.current(Run(built.path, reader))

    before = memo.get("findings", findings)
    assert before["labels"]["n"] == 0 and before["share"]["pooled"]["labels"] == 0
    _label(built, 6)
    after = memo.get("findings", findings)
    assert after["labels"]["n"] == 6 and after["share"]["pooled"]["labels"] == 6
    _label(built, 2, who="bo")
    assert memo.get("findings", findings)["labels"]["labellers"] == {"ana": 6, "bo": 2}


def test_a_kept_reference_follows_a_reference_file_written_later(tmp_path):
    """RunView.reference scores the answers itself until reference.parquet is written; a kept
    answer built on it follows the new file."""
    from ragdash.rundir.reader import PLAIN
    from ragdash.view import RunView

    run = Run(make_run(tmp_path / "ref", n_questions=12, seed=1, retrievers=("bm25",)))
    memo = Memo(PLAIN)
    view = RunView(run, PLAIN, memo)
    assert len(view.reference_summary())
    saved = view.run.reader  # the same reader: only the file changes
    from ragdash.analysis.reference import score_answers

    ref = score_answers(run.read("answers"), run.read("examples"))
    run.write("reference", ref.assign(em=0.0, f1=0.0))
    assert view.run.reader is saved
    assert (view.reference_summary()["em"] == 0).all()


# --- the invariant: no memoised computation reads a run file behind its reader's back --------

_watch = threading.local()


def _note(path: object) -> None:
    for touched in getattr(_watch, "stack", ()):
        if isinstance(path, (str, os.PathLike)):
            touched.add(Path(os.path.abspath(os.fspath(path))))


def _noting(f: Callable) -> Callable:
    def inner(path, *args, **kwargs):
        _note(path)
        return f(path, *args, **kwargs)
    return inner


@pytest.fixture
def watched(monkeypatch) -> Iterator[list[tuple[object, list[Path]]]]:
    """Every memoised computation watched: (key, run files it stat'ed or opened that its reader
    was never asked about), one entry per computation that did."""
    import pyarrow.parquet as pq

    for owner, name in ((os, "stat"), (io, "open"), (builtins, "open"), (pq, "read_table"),
                        (pq, "read_metadata"), (pq, "ParquetFile"), (pd, "read_parquet")):
        monkeypatch.setattr(owner, name, _noting(getattr(owner, name)))
    bypasses: list[tuple[object, list[Path]]] = []
    original = Memo.get

    def get(self, key, compute, about=None):
        def compute_watched(reader):
            stack = _watch.__dict__.setdefault("stack", [])
            touched: set[Path] = set()
            stack.append(touched)
            try:
                return compute(reader)
            finally:
                stack.pop()
                seen = {Path(os.path.abspath(p)) for p in reader.seen}
                runs = {p.parent for p in seen if p.name == "run.json"}
                unseen = sorted(p for p in touched - seen if p.parent in runs)
                if unseen:
                    bypasses.append((key, unseen))
        return original(self, key, compute_watched, about)

    monkeypatch.setattr(Memo, "get", get)
    yield bypasses


def test_every_page_asks_its_reader_about_every_run_file_it_reads(built, watched, monkeypatch):
    _label(built, 6)
    labels.refresh(built)  # calibration.json current: the fingerprint is what decides
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(built.path))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(built.path.parent / "runs"))
    for page in PAGES:
        open_app(None if page == "overview" else page, run=str(built.path))
    assert not watched, [(k[:1] + k[2:3], [p.name for p in f]) for k, f in watched]


def test_the_watch_sees_a_file_read_behind_the_readers_back(built, watched):
    """The invariant test can fail: a computation that reads labels.parquet's bytes directly
    is caught."""
    memo = Memo()
    memo.get("direct", lambda reader: Run(built.path, reader).manifest and
             built.file("manifest").read_bytes())
    assert not watched
    _label(built, 1)
    memo.get("behind", lambda reader: Run(built.path, reader).manifest and
             built.file("labels").read_bytes())
    assert [(k, [p.name for p in files]) for k, files in watched] == [
        ("behind", ["labels.parquet"])]


# --- what the user does: pages open, then labels, then the pages again ------------------------


def _texts(at) -> str:
    """What the page says (markdown escapes taken out)."""
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning")
                     for e in getattr(at, kind)).replace("\\", "")


def test_pages_opened_before_labelling_show_the_labels_after(built, monkeypatch):
    """The Overview and LLM results, opened before any label (the server's memo then holds their
    answers), show the labels and their interval once they are written, and the Label page's
    line says the same."""
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(built.path))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(built.path.parent / "runs"))
    for page in ("overview", "llm", "label"):
        said = _texts(open_app(None if page == "overview" else page, run=str(built.path),
                               **({"lb_name": "ana"} if page == "label" else {})))
        assert (NO_LABEL_YET in said) == (page != "label"), page
        assert page != "label" or "Intervals now: pooled: no label yet" in said
    _label(built, 24)
    share = labels.current(built)["share"]["pooled"]
    assert share["labels"] == 24 and share["ci"]
    from ragdash.labels.headline import sentences

    lead = sentences(share=labels.current(built)["share"], labels=labels.current(built)["labels"],
                     rule="judge")[0]
    for page in ("overview", "llm"):
        said = _texts(open_app(None if page == "overview" else page, run=str(built.path)))
        assert NO_LABEL_YET not in said, page
        assert lead in said, page
    said = _texts(open_app("label", run=str(built.path), lb_name="ana"))
    assert "pooled: no label yet" not in said and "Intervals now: pooled ±" in said
