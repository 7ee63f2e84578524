"""Issue 49: after a reload the evidence review restarted at question 1 with no mark of which
questions were reviewed. It now takes up the first question without a decision, and the list of
questions and the overview table mark the reviewed ones."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ragdash.evidence import review
from ragdash.evidence.records import Candidate, EvidenceResult, QuestionEvidence


def _question(qid: str, confidence: float) -> QuestionEvidence:
    text = f"Person {qid} built tower {qid} in 1900."
    return QuestionEvidence(qid, f"Who built tower {qid}?", f"Person {qid}", candidates=[
        Candidate(f"d{qid}", 0, len(text), text, confidence, 1.0, 0.5)], kept=[0])


# least confident first in the review's order: t2, t0, t3, t1
RESULT = EvidenceResult([_question("t0", 0.4), _question("t1", 0.9), _question("t2", 0.1),
                         _question("t3", 0.6)])


def test_resume_at_the_first_question_without_a_decision():
    order = [r["qid"] for r in review.table(RESULT, {})]
    assert order == ["t2", "t0", "t3", "t1"]
    assert review.resume_at(order, {}) == "t2"
    assert review.resume_at(order, {"t2": review.ACCEPT, "t0": review.REJECT}) == "t3"
    everything = dict.fromkeys(order, review.ACCEPT)
    assert review.resume_at(order, everything) == "t2"  # all reviewed: the first
    assert review.resume_at([], {}) is None
    rows = {r["qid"]: r["reviewed"] for r in review.table(RESULT, {"t0": review.REJECT})}
    assert rows == {"t0": True, "t1": False, "t2": False, "t3": False}
    assert review.question_label(RESULT.questions[0], {"t0": review.REJECT}) == \
        "✓ t0 · Who built tower t0?"
    assert review.question_label(RESULT.questions[1], {"t0": review.REJECT}) == \
        "t1 · Who built tower t1?"


def _panel(upload: str, root: str) -> None:
    """The Data page's evidence panel on an upload whose review is kept on disk."""
    from pathlib import Path

    from ragdash.data.schema import Dataset, Document, Example
    from ragdash.ui import evidence_review

    questions = [Example(q, f"Who built tower {q}?", f"Person {q}", [])
                 for q in ("t0", "t1", "t2", "t3")]
    docs = [Document(f"d{q}", "", f"Person {q} built tower {q} in 1900.")
            for q in ("t0", "t1", "t2", "t3")]
    sig = (upload, "None", "jsonl", "auto", 0)
    evidence_review.panel(Dataset(questions, docs), "towers.jsonl", sig, Path(root),
                          source={})


def test_a_reloaded_review_resumes_at_the_first_unreviewed_question_and_marks_the_rest(
        tmp_path: Path):
    upload = tmp_path / "_uploads" / "abc" / "towers.jsonl"
    upload.parent.mkdir(parents=True)
    upload.write_text("")
    sig = (str(upload), "None", "jsonl", "auto", 0)
    # t2 and t0, the two least confident, were reviewed before the reload
    review.store(review.state_file(sig[0], sig[1:]), RESULT,
                 {"t2": review.ACCEPT, "t0": review.REJECT})
    at = AppTest.from_function(_panel, args=(str(upload), str(tmp_path / "runs")),
                               default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox(key="ev_question")
    assert picker.value == "t3"  # not t2, the first of the list
    assert picker.options == ["✓ t2 · Who built tower t2?", "✓ t0 · Who built tower t0?",
                              "t3 · Who built tower t3?", "t1 · Who built tower t1?"]
    # no decision is preselected for the question taken up: the labeller is not nudged
    assert at.radio(key="ev_decision_t3").value is None
    table = at.dataframe[0].value
    assert dict(zip(table["qid"], table["reviewed"], strict=True)) == {
        "t2": True, "t0": True, "t3": False, "t1": False}
