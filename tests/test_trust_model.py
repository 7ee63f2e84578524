"""Issue 48 §4: the trust section's model (`ragdash.view.trust`), the share correct checked
against labels as the Overview and the LLM results page say it, tested without Streamlit: the
headline, a tile per system, the intervals' caption, the judge's verdict and the notes on the
labels, from the label findings' numbers (`ragdash.labels`)."""

from __future__ import annotations

import shutil

import pytest

from ragdash.constants import PROJECT_ROOT
from ragdash.labels import headline
from ragdash.view import trust


def _findings(n: int = 60, stand_in: tuple[str, ...] = (), verdict: str | None = None) -> dict:
    pooled = {"estimate": 0.40, "ci": [0.30, 0.50], "labels": 60, "answers": 360,
              "method": "stratified PPI", "reason": "", "bounds": None, "to_target": 190}
    systems = {"bm25": {**pooled, "labels": 30, "answers": 120},
               "llm_only": {"estimate": 0.5, "ci": None, "labels": 9, "answers": 60,
                            "method": "m", "reason": "too few labels for an interval"}}
    share = {"estimand": "these answers", "estimand_text": "these 360 answers", "level": 0.95,
             "pooled": pooled, "systems": systems, "cannot_tell": 0, "judge": {"pooled": 0.48}}
    labels = {"n": n, "stand_in": list(stand_in), "outside_sample": 2, "stale": 0,
              "cannot_tell": 0, "answers": 60, "labellers": {"ana": 60},
              "sample": {"rule": "judge"}}
    return {"labels": labels, "share": share, "ppi": {},
            "agreement": {"verdict": verdict} if verdict else {}}


def said(t: trust.Trust) -> str:
    """Everything the section says, as its page lays it out."""
    return "\n".join([t.stand_in, t.headline, t.intervals, t.verdict, *t.notes,
                      *(f"{x.label} {x.value} {x.caption} {x.help}" for x in t.tiles)])


def test_without_labels_the_section_points_to_labelling():
    t = trust.summary(_findings(n=0))
    assert not t.labelled and t.tiles == () and t.headline == ""
    assert trust.NO_LABELS.startswith("No answer is labelled yet")


def test_the_headline_tiles_and_intervals_come_from_the_shares_numbers():
    f = _findings()
    t = trust.summary(f, name=str.upper)
    assert t.labelled and t.stand_in == "" and t.verdict == ""
    assert t.headline == " ".join(headline.sentences(f["share"], f["labels"], "judge"))
    assert t.headline.startswith("**About 40 % of these 360 answers are correct** (95% "
                                 "interval 30–50 %; 60 labels")
    bm25, llm_only = t.tiles
    assert (bm25.label, bm25.value) == ("BM25", headline.tile(f["share"]["systems"]["bm25"])[0])
    assert bm25.caption == "30–50 % · 30 labels"
    assert bm25.help == "stratified PPI; 30 of its 120 answers labelled"
    assert (llm_only.label, llm_only.value) == ("LLM_ONLY", "—")
    assert llm_only.caption == "9 labels · too few for an interval"
    assert llm_only.help == "too few labels for an interval; 9 of its 60 answers labelled"
    assert t.notes == ("2 labels outside the drawn sample are left out of every estimate (not "
                       "a random sample); the agreement tables use them",)
    assert t.intervals == ("Intervals at 95% on these 360 answers; a system's interval from 20 "
                           "of its labels on, or its exact share with every answer labelled.")


def test_stand_in_labels_are_warned_of_once_and_the_verdict_is_escaped():
    def md(s: str) -> str:
        return s.replace("*", r"\*")

    t = trust.summary(_findings(stand_in=("reference *contains*",), verdict="a *lenient* judge"),
                      md=md)
    assert t.stand_in == (r"**These are stand-in labels, not people's:** reference \*contains\*. "
                          "They show how the estimates work; label answers yourself for figures "
                          "you can trust.")
    assert t.verdict == r"**How good is the judge?** a \*lenient\* judge"
    assert not [n for n in t.notes if n.startswith("Stand-in")]  # the warning says it
    assert t.notes[-1].startswith("2 labels outside the drawn sample are left out")


def _demo_copy(tmp_path):
    src = PROJECT_ROOT / "data" / "demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    return shutil.copytree(src, tmp_path / "demo")


def test_every_label_wrong_gives_a_real_interval_and_says_the_judge_is_lenient(tmp_path):
    """Moved from test_pages_agree, which rendered the Overview for it: every label of the
    sample "wrong" gives 0 % with an interval that is not zero-width, and the judge, above it,
    is said too lenient."""
    from ragdash import labels
    from ragdash.labels.store import label_row, labelable, save_labels
    from ragdash.rundir import Run
    from ragdash.view import RunView

    run = Run(_demo_copy(tmp_path))
    run.file("labels").unlink()  # the stand-in labels: the sample stays, labelled again below
    shas = labelable(run).set_index(["qid", "system"])["answer_sha"]
    sample = labels.read_sample(run)
    save_labels(run, [label_row(q, s, "wrong", "ana", "", shas[(q, s)])
                      for q, s in zip(sample["qid"], sample["system"], strict=True)])
    labels.refresh(run)
    found = RunView(run.path).label_findings()
    lo, hi = found["share"]["pooled"]["ci"]
    assert found["share"]["pooled"]["estimate"] == 0 and lo == 0 and hi > 0.01  # never 0-wide
    assert all(e["ci"][0] == 0 and e["ci"][1] > 0.05 for e in found["share"]["systems"].values())
    text = said(trust.summary(found))
    assert "**About 0 % of these 360 answers are correct**" in text
    assert "outside the interval: the judge is too lenient here" in text
