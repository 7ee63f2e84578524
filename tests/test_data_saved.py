"""What the Data page keeps on disk so a reload loses no work (ragdash.data.saved and the
review state of ragdash.evidence.review): saved datasets with their corpus, recent uploads, and
an evidence review restored whole, or ignored when the file is not one."""

from __future__ import annotations

import json
import os

import pytest

from ragdash.data import saved
from ragdash.evidence import review
from ragdash.evidence.records import Candidate, EvidenceResult, QuestionEvidence
from ragdash.evidence.settings import EvidenceSettings


@pytest.fixture
def root(tmp_path):
    (tmp_path / "_uploads").mkdir()
    return tmp_path


def _upload(root, digest: str, name: str, text: str = "x"):
    path = root / "_uploads" / digest / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_recent_uploads_newest_first_with_their_corpus(root):
    ds1, c1 = _upload(root, "1" * 64, "qa.csv"), _upload(root, "2" * 64, "docs.zip")
    ds2 = _upload(root, "3" * 64, "other.jsonl")
    saved.remember_upload(ds1, "qa.csv", c1, "docs.zip")
    saved.remember_upload(ds2, "other.jsonl", None, None)
    os.utime(ds1)  # times come from the note, not the file
    got = saved.recent_uploads(root / "_uploads")
    assert [u.name for u in got] == ["other.jsonl", "qa.csv"]
    assert got[1].corpus == c1 and got[1].corpus_name == "docs.zip" and got[0].corpus is None


def test_an_upload_whose_files_are_gone_or_outside_is_not_offered(root, tmp_path_factory):
    ds, corpus = _upload(root, "1" * 64, "qa.csv"), _upload(root, "2" * 64, "docs.zip")
    saved.remember_upload(ds, "qa.csv", corpus, "docs.zip")
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    outside.write_text("secret")
    ds2 = _upload(root, "4" * 64, "b.csv")
    saved.remember_upload(ds2, "b.csv", outside, "secret.txt")
    (root / "_uploads" / ("5" * 64)).mkdir()
    (root / "_uploads" / ("5" * 64) / saved.UPLOAD_NOTE).write_text("{not json")
    corpus.unlink()
    assert saved.recent_uploads(root / "_uploads") == []


def test_the_note_cannot_be_an_upload_name():
    assert saved.UPLOAD_NOTE.startswith(".")  # upload names lose leading dots (app_pages/data)


def test_saved_datasets_name_their_corpus_only_inside_the_runs_root(root, tmp_path_factory):
    folder = root / "_datasets"
    folder.mkdir()
    corpus = _upload(root, "2" * 64, "docs.zip")
    a, b, c = folder / "a-evidence-1.jsonl", folder / "b-synth-2.jsonl", folder / "old.jsonl"
    for p in (a, b, c, folder / "b-synth-2.rejects.jsonl"):
        p.write_text("{}\n")
    saved.record(a, "evidence reviewed for qa.csv", corpus, "auto", "docs.zip", 4)
    outside = tmp_path_factory.mktemp("elsewhere") / "corpus.jsonl"
    outside.write_text("{}")
    saved.record(b, "questions generated from x", outside, "auto", "x", 3)
    got = {d.name: d for d in saved.saved_datasets(folder)}
    assert set(got) == {a.name, b.name, c.name}  # rejects left out
    assert got[a.name].corpus == corpus and got[a.name].questions == 4
    assert got[b.name].corpus is None  # outside the runs root
    assert got[c.name].corpus is None and got[c.name].origin == "saved dataset"  # no sidecar


def _result() -> EvidenceResult:
    cands = [Candidate("d", 0, 5, "Paris", 0.9, 1.2, 0.5),
             Candidate("d", 10, 20, "Paris is b", 0.4, 0.3, 0.2, "user")]
    return EvidenceResult([QuestionEvidence("q1", "Where?", "Paris", {"topic": "geo"}, cands, [0],
                                            2, None, False, ("Paris", "paris")),
                           QuestionEvidence("q2", "Who?", "Bo", reason="not found")],
                          EvidenceSettings(max_parts=2))


def test_a_review_is_restored_whole(tmp_path):
    path = review.state_file(tmp_path / "_uploads" / "ab" / "qa.csv", ("docs.zip", "auto", 0))
    assert path.name.startswith(".review-") and path.parent.name == "ab"
    saved_record = {"dataset": "x.jsonl", "record": {"examples": 1}, "decisions": {}}
    review.store(path, _result(), {"q1": "pick:1", "q2": "reject"}, saved_record)
    result, decisions, kept, when = review.restore(path)
    assert result == _result() and decisions == {"q1": "pick:1", "q2": "reject"}
    assert kept == saved_record and when > 0
    assert review.state_file(tmp_path / "qa.csv", ("other.zip", "auto", 0)) != \
        review.state_file(tmp_path / "qa.csv", ("docs.zip", "auto", 0))


@pytest.mark.parametrize("content", [
    "{not json", json.dumps({"version": 99}), json.dumps({"version": 1, "result": {}}),
    "BINARY\x00", json.dumps([1, 2])])
def test_a_file_that_is_no_review_is_ignored(tmp_path, content):
    path = tmp_path / ".review-x.json"
    path.write_text(content)
    assert review.restore(path) is None
    assert review.restore(tmp_path / "missing.json") is None


def test_a_review_whose_decision_does_not_fit_its_result_is_ignored(tmp_path):
    path = tmp_path / ".review-x.json"
    review.store(path, _result(), {"q1": "pick:7"})
    assert review.restore(path) is None
    review.store(path, _result(), {"q9": "accept"})
    assert review.restore(path) is None
