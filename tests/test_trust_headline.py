"""The trust headline, tiles and `label status --json` are generated from the share section's
numbers: the estimand, the interval, the labels, the judge's gap, what was left out, and the
labels needed for ±5 points."""

from __future__ import annotations

from ragdash.labels import headline


def _share(judge: float = 0.48, ci=(0.30, 0.50), to_target: int | None = 190,
           estimand: str = "these answers", **pooled) -> dict:
    entry = {"estimate": 0.40, "ci": list(ci) if ci else None, "labels": 60, "answers": 360,
             "method": "m", "reason": "" if ci else "too few labels for an interval",
             "bounds": None, "to_target": to_target, **pooled}
    system = {"estimate": 0.5, "ci": None, "labels": 9, "answers": 60, "method": "m",
              "reason": "too few labels for an interval (9; from 20 on)"}
    return {"estimand": estimand, "estimand_text": "t", "level": 0.95, "pooled": entry,
            "systems": {"bm25": system}, "cannot_tell": 0, "judge": {"pooled": judge}}


LABELS = {"outside_sample": 0, "stale": 0}


def test_headline_names_estimand_estimate_interval_labels_and_rule():
    lines = headline.sentences(_share(), LABELS, "judge")
    assert lines[0] == ("**About 40 % of these 360 answers are correct** (95% interval 30–50 %; "
                        "60 labels, stratified by system and the judge's verdict).")
    other = headline.sentences(_share(estimand="new questions"), LABELS, "uniform")[0]
    assert other.startswith("**About 40 % of answers to new questions like these are correct**")
    assert "drawn uniformly at random" in other


def test_judge_above_below_or_same_is_said_from_the_numbers():
    assert "8 points above, within the interval." in headline.sentences(_share(0.48), LABELS)[1]
    assert "15 points above, outside the interval: the judge is too lenient" in \
        headline.sentences(_share(0.55), LABELS)[1]
    assert "12 points below, outside the interval: the judge is too strict" in \
        headline.sentences(_share(0.28), LABELS)[1]
    assert "the same, within the interval." in headline.sentences(_share(0.402), LABELS)[1]


def test_the_planner_counts_the_labels_for_five_points_or_says_it_is_there():
    assert headline.sentences(_share(), LABELS)[-1] == (
        "About 190 labels in all (130 more) bring the pooled interval to ±5 points.")
    assert headline.sentences(_share(ci=(0.36, 0.44), to_target=60), LABELS)[-1] == (
        "The pooled interval is within ±5 points.")
    assert headline.sentences(_share(to_target=None), LABELS)[-1].startswith(
        "No number of labels brings the pooled interval within ±5 points")


def test_within_target_is_said_only_of_an_interval_that_is():
    """An interval of ±10 points is never "within ±5 points", whatever the count says (150
    labels all wrong once gave "interval 0–13 %" and "within ±5 points")."""
    for ci in ((0.0, 0.129), (0.30, 0.50), (0.399, 0.501)):
        line = headline.planner(_share(ci=ci, to_target=60)["pooled"])
        assert "within" not in line, (ci, line)
    assert headline.planner(_share(ci=(0.30, 0.50), to_target=60)["pooled"]) == (
        "The pooled interval is ±10.0 points: the answers labelled only \"cannot tell\" "
        "widen it")
    assert headline.planner(_share(ci=None, to_target=60)["pooled"]) == ""


def test_a_judge_changed_since_the_draw_is_said():
    lines = headline.sentences(_share() | {"strata_changed": 40}, LABELS)
    assert ("The judge's verdict changed on 40 answers since the sample was drawn: every "
            "estimate keeps the strata the sample was drawn in.") in lines
    assert not any("verdict changed" in line for line in headline.sentences(_share(), LABELS))


def test_left_out_labels_and_cannot_tell_bounds_are_said():
    lines = headline.sentences(_share(bounds=[0.38, 0.45]) | {"cannot_tell": 4},
                               {"outside_sample": 9, "stale": 2})
    text = " ".join(lines)
    assert "4 sampled answers labelled only \"cannot tell\" are left out: all wrong they " \
           "give 38 %, all correct 45 %" in text
    assert "Left out of every estimate: 9 labels outside the drawn sample (not random) and " \
           "2 stale labels" in text
    one = " ".join(headline.sentences(_share(bounds=[0.38, 0.45]) | {"cannot_tell": 1},
                                      {"outside_sample": 1, "stale": 1}))
    assert "1 sampled answer labelled only \"cannot tell\" is left out: all wrong it gives" in one
    assert "1 label outside the drawn sample (not random) and stale 1 label" not in one
    assert "1 label outside the drawn sample (not random) and 1 stale label" in one
    small = headline.sentences(_share(bounds=[0.40, 0.405]) | {"cannot_tell": 1}, LABELS)
    assert "cannot tell" not in " ".join(small)  # moves the figure by under a point


def test_no_pooled_interval_says_why_and_gives_no_figure():
    share = _share(ci=None)
    share["pooled"]["reason"] = "the labels cover 1 of 6 systems: no interval over all of them"
    lines = headline.sentences(share, LABELS)
    assert lines[0] == ("60 labels of the sample so far: the labels cover 1 of 6 systems: no "
                        "interval over all of them.")
    assert not any("%" in line for line in lines)


def test_tiles_give_a_range_only_with_an_interval():
    share = _share()
    assert headline.tile(share["systems"]["bm25"]) == ("—", "9 labels · too few for an interval")
    assert headline.tile(share["pooled"]) == ("40 %", "30–50 % · 60 labels")


def test_status_json_gives_fractions_and_null_intervals():
    got = headline.status_json(_share())
    assert got["estimand"] == "these answers"
    assert got["pooled"] == {"estimate": 0.40, "ci": [0.30, 0.50], "labels": 60, "method": "m"}
    assert got["systems"]["bm25"]["ci"] is None and got["systems"]["bm25"]["labels"] == 9


def test_status_json_counts_what_is_left_out():
    """Labels outside the sample, stale ones, "cannot tell" and verdicts changed since the
    draw are counted in `label status --json` as on the pages."""
    share = _share() | {"cannot_tell": 4, "strata_changed": 3}
    got = headline.status_json(share, {"outside_sample": 9, "stale": 2})
    assert got["left_out"] == {"outside_sample": 9, "stale": 2, "cannot_tell": 4}
    assert got["strata_changed"] == 3


def test_one_label_is_one_label():
    share = _share(ci=None)
    share["pooled"].update(labels=1, reason="too few labels for an interval (1; from 10 on)")
    assert headline.sentences(share, LABELS)[0].startswith("1 label of the sample so far")
    assert headline.tile({"labels": 1, "ci": None}) == ("—", "1 label · too few for an "
                                                              "interval")


def test_the_label_page_says_how_wide_each_interval_is_now():
    share = _share()
    share["systems"]["sim"] = {"estimate": 0.6, "ci": [0.5, 0.7], "labels": 40, "answers": 60,
                               "to_target": 120, "target": 10}
    assert headline.intervals_now(share, name=str.upper) == (
        "Intervals now: pooled ±10.0 points; BM25: 9 labels · SIM: ±10 (≈120 for ±10). About "
        "190 labels in all (130 more) bring the pooled interval to ±5 points.")
    none = _share(ci=None, to_target=None)
    assert headline.intervals_now(none).startswith(
        "Intervals now: pooled: too few labels for an interval; bm25: 9 labels.")
