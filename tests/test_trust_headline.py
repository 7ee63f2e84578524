"""The trust headline is generated from the numbers it describes."""

from __future__ import annotations

from ragdash.labels import headline


def _entry(pct: float, lo: float, hi: float) -> dict:
    return {"pct": pct, "ci": [lo, hi], "method": "m"}


def _ppi(judge: float, retr: tuple[float, float, float] | None = (45, 30, 60)) -> dict:
    pooled = {"labels_only": _entry(40, 28, 52), "judge_only": _entry(judge, judge - 5,
                                                                      judge + 5),
              "ppi_judge": _entry(40, 30, 50), "ppi_retrieval": {"pct": None, "ci": None},
              "n_labelled": 60, "n_unlabelled": 300}
    if retr:
        pooled["ppi_retrieval"] = _entry(*retr)
    return {"pooled": pooled}


def test_headline_names_estimate_interval_and_labels():
    lines = headline.sentences(_ppi(48))
    assert lines[0] == ("**About 40 % of answers are correct** (95% interval 30–50 %), from 60 "
                        "labels with the judge's scores (PPI) on 360 answers.")


def test_judge_above_below_or_same_is_said_from_the_numbers():
    assert "8 points above, within the interval." in headline.sentences(_ppi(48))[1]
    assert "15 points above, outside the interval: the judge is too lenient" in \
        headline.sentences(_ppi(55))[1]
    assert "12 points below, outside the interval: the judge is too strict" in \
        headline.sentences(_ppi(28))[1]
    assert "the same, within the interval." in headline.sentences(_ppi(40.2))[1]


def test_retrieval_alone_is_compared_by_interval_width():
    assert headline.sentences(_ppi(48, (42, 32, 52)))[2].endswith("about as precise.")
    assert "less precise: the judge adds information" in headline.sentences(_ppi(48))[2]
    assert len(headline.sentences(_ppi(48, None))) == 2


def test_no_interval_no_headline():
    ppi = _ppi(48)
    for k in ("labels_only", "ppi_judge", "ppi_retrieval"):
        ppi["pooled"][k] = {"pct": None, "ci": None, "reason": "too few labels"}
    assert headline.sentences(ppi) == []
    assert headline.best(ppi["pooled"]) is None
