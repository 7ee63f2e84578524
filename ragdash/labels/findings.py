"""What a run's labels say: the judge's agreement with them (and with the reference metrics),
and the share correct per system with prediction-powered intervals. `ragdash calibrate` stores
it in calibration.json (`labels`, `agreement`, `ppi`); `refresh` updates those sections after
labels change; `current` reads them, or works them out when stale or absent (a run with no
judge has no calibration.json)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pandas as pd

from ragdash.analysis.judge_audit import long_answers
from ragdash.calibration.agreement import (
    inter_annotator,
    judge_vs_labels,
    judge_vs_reference,
    verdict,
)
from ragdash.calibration.ppi import LEVEL
from ragdash.calibration.ppi_shares import features, retrieval_probability, share_table
from ragdash.labels.design import changed, read_design, with_strata
from ragdash.labels.judged import judge_scores
from ragdash.labels.store import STAND_IN, current_labels, labelable, locked, read_sample
from ragdash.run_spec import ir_scores, run_spec
from ragdash.rundir import Run

SECTIONS = ("labels", "agreement", "ppi", "share")


def _digest(run: Run, key: str, digits: int) -> str | None:
    """The first `digits` hex digits of the sha1 of run file `key`, None without it. Whether it
    exists is asked through the run's reader, so a cache keyed on the files a computation looked
    at (`rundir.Memo`) follows this file too."""
    if not run.has(key):
        return None
    return hashlib.sha1(run.file(key).read_bytes()).hexdigest()[:digits]


def fingerprint(run: Run) -> str:
    """A hash of labels.parquet ("none" without it) and of reference.parquet when the run has
    one: calibration.json's sections are current while both are unchanged."""
    labels = _digest(run, "labels", 16) or "none"
    ref = _digest(run, "reference", 8)
    return labels if ref is None else f"{labels}+{ref}"


def _ir_scores(run: Run) -> pd.DataFrame | None:
    """Score_IR by the method calibration fits on (None without ir_scores)."""
    if not run.has("ir_scores"):
        return None
    return ir_scores(run, run_spec(run).calibration.scores)


def answer_table(run: Run, labels: pd.DataFrame, judge: pd.DataFrame | None,
                 answers: pd.DataFrame) -> pd.DataFrame:
    """The table `share_table` reads: qid, system, y (labels), judged5, and with Score_IR the
    ir@<budget> features and p_retrieval (the retrieval model fitted on the judge's scores;
    left out when it cannot be fitted, e.g. every answer judged alike: the labels then fit it,
    by cross-fitting)."""
    scored = labels[labels["score"].notna()]
    y = (scored.assign(y=(scored["score"] == 5).astype(float))
         .groupby(["qid", "system"], as_index=False)["y"].mean())
    frame = answers[["qid", "system"]].merge(y, on=["qid", "system"], how="left")
    judged = frame[["qid", "system"]].merge(judge if judge is not None else pd.DataFrame(
        columns=["qid", "system", "judge"]), on=["qid", "system"], how="left")["judge"]
    frame["judged5"] = np.where(judged.isna(), np.nan, (judged == 5).astype(float))
    ir = _ir_scores(run)
    if ir is None:
        return frame
    frame = frame.merge(features(ir).astype({"qid": str}), on=["qid", "system"], how="left")
    if judge is not None:
        try:
            p = retrieval_probability(ir, judge.rename(columns={"judge": "score"}))
        except ValueError:
            return frame
        frame = frame.merge(p.astype({"qid": str}), on=["qid", "system"], how="left")
    return frame


def auxiliaries(run: Run, frame: pd.DataFrame, judge: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` (an `answer_table`) with what the regression estimate's predictor reads
    (`ragdash.calibration.assisted.AUXILIARIES`), each known before any label: the judge's
    1–5 score, Score_IR at the generation budget (`ir`), the reference metrics and claim
    recall at the generation budget where they ran (NaN where an answer has none)."""
    from ragdash.analysis.frames import primary
    from ragdash.calibration.assisted import AUXILIARIES
    from ragdash.run_spec import main_reference

    keys = ["qid", "system"]
    out = frame.drop(columns=[c for c in AUXILIARIES if c in frame and c != "judged5"])
    if judge is not None:
        out = out.merge(judge[[*keys, "judge"]], on=keys, how="left")
    budget = run_spec(run).generation.budget
    ir = [c for c in out.columns if c.startswith("ir@")]
    if ir:
        at = f"ir@{budget}" if f"ir@{budget}" in ir else max(ir, key=lambda c: int(c[3:]))
        out["ir"] = out[at]
    for table in (main_reference(run), primary(run.table("metrics"), budget)):
        if table is None or table.empty:
            continue
        cols = [c for c in AUXILIARIES if c in table and c not in out]
        table = table.astype({"qid": str, "system": str}).drop_duplicates(keys)
        out = out.merge(table[[*keys, *cols]].astype({c: float for c in cols}), on=keys,
                        how="left")
    return out


def in_sample(labels: pd.DataFrame, sample: pd.DataFrame | None) -> pd.DataFrame:
    """The labels of answers in the drawn sample: the only ones an estimate may use (others
    are not a random sample; they still count in the agreement tables)."""
    if sample is None or labels.empty:
        return labels.iloc[:0]
    return labels.merge(sample[["qid", "system"]], on=["qid", "system"])


def share_section(frame: pd.DataFrame, labels: pd.DataFrame, estimand: str, order: list[str],
                  level: float = LEVEL) -> dict:
    """The share correct pooled and per system from the sample's labels (`labels` already in
    the sample and current): {"estimand", "pooled", "systems", "cannot_tell", "covers"}.
    Pooled, the regression estimate (`ragdash.calibration.assisted`) with a predictor
    cross-fitted on the labels over `frame`'s auxiliaries (`auxiliaries`); per system, and
    pooled where no predictor can be fitted, the stratified one
    (`ragdash.calibration.survey`): on a system's 20–30 labels the regression estimate's
    floor made it wider, not narrower (benchmarks/bench_ppi_coverage.py). An answer labelled
    only "cannot tell" is left out and bounds the estimate; the pooled interval needs labels
    in every system."""
    from ragdash.calibration import assisted, survey

    scored = labels[labels["score"].notna()]
    y_of = (scored.assign(y=(scored["score"] == 5).astype(float))
            .groupby(["qid", "system"], as_index=False)["y"].mean())
    keyed = frame[["qid", "system"]]
    y = keyed.merge(y_of, on=["qid", "system"], how="left")["y"].to_numpy(float)
    unsure = keyed.merge(labels[["qid", "system"]].drop_duplicates().assign(any=True),
                         on=["qid", "system"], how="left")["any"].fillna(False).to_numpy(bool)
    unsure = unsure & np.isnan(y)
    systems = {}
    for system in order:
        at = (frame["system"] == system).to_numpy()
        systems[system] = survey.share(frame[at], y[at], estimand, level,
                                       cannot_tell=unsure[at]).to_dict()
    covered = [s for s in order if systems[s]["labels"]]
    pooled = assisted.share(frame, y, assisted.cross_fitted(frame, y), estimand, level,
                            min_labels=survey.MIN_POOLED_LABELS, cannot_tell=unsure,
                            target=survey.TARGET_HALF)
    out = pooled.to_dict()
    if pooled.labels and len(covered) < len(order):
        out.update(estimate=None, ci=None, se=None, bounds=None,  # the covered ones' alone
                   reason=f"the labels cover {len(covered)} of {len(order)} systems: "
                          "no interval over all of them")
    five = frame["judged5"].fillna(0).to_numpy(float) >= 0.5
    judge = {s: float(five[(frame["system"] == s).to_numpy()].mean()) for s in order}
    return {"estimand": estimand, "estimand_text": survey.ESTIMANDS[estimand], "level": level,
            "pooled": out, "systems": systems, "cannot_tell": int(unsure.sum()),
            "covers": [len(covered), len(order)],
            "judge": {"pooled": float(five.mean()) if five.size else None, **judge},
            "unjudged": int(frame["judged5"].isna().sum()), "strata_changed": changed(frame),
            "version": survey.VERSION}


def _labels_summary(run: Run, labels: pd.DataFrame, stale: int) -> dict:
    sample = read_sample(run)
    names = sorted(set(labels["labeller"]))
    outside = 0
    if sample is not None and not labels.empty:
        inside = labels.merge(sample[["qid", "system"]], on=["qid", "system"])
        outside = len(labels) - len(inside)
    return {"n": len(labels), "answers": int(labels[["qid", "system"]].drop_duplicates()
                                             .shape[0]),
            "cannot_tell": int(labels["score"].isna().sum()), "stale": stale,
            "labellers": {str(k): int(v) for k, v in labels.groupby("labeller").size().items()},
            "stand_in": [n for n in names if n.startswith(STAND_IN)],
            "sample": None if sample is None else {
                "rule": str(sample["rule"].iloc[0]), "seed": int(sample["seed"].iloc[0]),
                "size": len(sample)},
            "outside_sample": outside, "fingerprint": fingerprint(run)}


def _agreement(run: Run, labels: pd.DataFrame, judge: pd.DataFrame | None, n_boot: int,
               seed: int, level: float, stand_in: list[str]) -> dict:
    from ragdash.run_spec import main_reference

    scored = labels[labels["score"].notna()]
    out: dict = {"n_boot": n_boot, "level": level,
                 "annotators": inter_annotator(scored) if len(scored) else []}
    if judge is None:
        failed = run.has("judgments")
        out["labels"] = {"n": 0, "message": "every judgment failed" if failed
                         else "the run has no judge scores"}
        out["reference"] = {}
        out["verdict"] = (("Every judgment failed" if failed else "No judge in this run")
                          + ": the share correct comes from the labels and retrieval alone.")
        return out
    out["labels"] = judge_vs_labels(scored.merge(judge, on=["qid", "system"]), n_boot, seed,
                                    level)
    ref = main_reference(run)
    if ref is not None:
        ref = ref[ref["em"].notna()].astype({"qid": str, "system": str})
        both = ref.merge(judge, on=["qid", "system"])
        out["reference"] = judge_vs_reference(both, n_boot, seed, level) if len(both) else {}
    else:
        out["reference"] = {}
    names = sorted(set(scored["labeller"]))
    only_stand_in = bool(names) and set(names) <= set(stand_in)
    examples = run.table("examples")
    long = examples is not None and "answer" in examples and long_answers(examples["answer"])
    out["verdict"] = verdict(out, stand_in[0].removeprefix(STAND_IN) if only_stand_in
                             else None, long_answers=long)
    return out


def evaluate(run: Run, n_boot: int | None = None, seed: int | None = None,
             level: float = LEVEL) -> dict:
    """{"labels": who labelled what, "agreement": judge vs labels / reference metrics /
    between labellers with the verdict, "ppi": the share correct per system and pooled}."""
    from ragdash.analysis.frames import order_systems

    spec = run_spec(run)
    n_boot = spec.calibration.n_boot if n_boot is None else n_boot
    seed = spec.calibration.seed if seed is None else seed
    answers = labelable(run)
    labels, stale = current_labels(run, answers)
    judge = judge_scores(run)
    summary = _labels_summary(run, labels, stale)
    sampled = in_sample(labels, read_sample(run))
    frame = answer_table(run, sampled, judge, answers)
    order = order_systems(frame["system"].unique(), spec.compared)
    ppi = share_table(frame, level, seed=seed, order=order)
    return {"labels": summary,
            "agreement": _agreement(run, labels, judge, n_boot, seed, level,
                                    summary["stand_in"]),
            "ppi": ppi, "share": share_section(with_strata(auxiliaries(run, frame, judge),
                                                           read_design(run)), sampled,
                                               estimand(run), order, level)}


def estimand(run: Run) -> str:
    """The estimand the run's config names (calibration.estimand)."""
    return run_spec(run).calibration.estimand


def _share_version() -> int:
    """The share section's method version: a stored section of another is worked out again."""
    from ragdash.calibration.survey import VERSION

    return VERSION


def refresh(run: Run) -> bool:
    """Bring calibration.json's labels, agreement and ppi up to date with labels.parquet (a run
    without calibration.json is left alone); True when it rewrote them."""
    cal = run.calibration()
    if cal is None or ((cal.labels or {}).get("fingerprint") == fingerprint(run)
                       and (cal.share or {}).get("estimand") == estimand(run)
                       and (cal.share or {}).get("version") == _share_version()):
        return False
    sections = evaluate(run)
    with locked(run):
        cal = run.calibration() or cal
        run.write_json("calibration", replace(cal, **sections).to_dict())
    return True


def current(run: Run) -> dict | None:
    """The labels, agreement and ppi sections: calibration.json's when current, else worked
    out now (nothing written); None when the run has no answers."""
    cal = run.calibration()
    if cal is not None and all(getattr(cal, k) is not None for k in SECTIONS) and \
            cal.labels.get("fingerprint") == fingerprint(run) and \
            cal.share.get("estimand") == estimand(run) and \
            cal.share.get("version") == _share_version():
        return {k: getattr(cal, k) for k in SECTIONS}
    if not run.has("answers"):
        return None
    return evaluate(run)
