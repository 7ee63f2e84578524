"""CRAG's truthfulness score (Yang et al., NeurIPS 2024): each answer is correct (+1), missing
(0: it declines, as the run's refusal rule reads it) or incorrect (−1), so a system that
hallucinates scores below one that abstains. Per system: the mean over its questions with its
95 % interval (`system_means`), and the shares of the three classes.

Whether an answer is correct comes, per answer, from the first source that has it: a person's
label ("correct"; "partly correct" and "wrong" are incorrect, as in the share correct; "cannot
tell" passes on), then the judge (5 is correct), then a reference metric (contains a gold
answer by default). The sources used are named with their counts. An answer whose call failed
is no answer and is left out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragdash.analysis.system_means import system_means

CLASSES = {"correct": 1, "missing": 0, "incorrect": -1}
COLUMNS = ["qid", "system", "truthfulness", "class", "source"]
TABLE_COLUMNS = ["system", "score", "lo", "hi", "n", "correct", "missing", "incorrect"]


def classify(answers: pd.DataFrame, *, refused: pd.Series | None = None,
             labels: pd.DataFrame | None = None, judgments: pd.DataFrame | None = None,
             reference: pd.DataFrame | None = None, truth_metric: str = "contains",
             correct_at: float = 1.0) -> pd.DataFrame:
    """One row per answer with text (COLUMNS): its class, value and source. `answers`: the
    main answers (qid, system, answer, error); `refused`: per answer row, whether the refusal
    rule matches it; `labels`: people's labels (qid, system, score; a "stand-in" labeller is
    not a person); `judgments`: the judge's (qid, system, score); `reference`: the reference
    metrics (qid, system, `truth_metric`), correct at `correct_at` and above."""
    key = ["qid", "system"]
    a = answers.assign(qid=answers["qid"].astype(str))
    text = a["answer"].astype("string").fillna("").str.strip()
    ok = a["error"].isna().to_numpy() & (text != "").to_numpy() if "error" in a else \
        (text != "").to_numpy()
    a = a.assign(refused=(refused.to_numpy(bool) if refused is not None
                          else np.zeros(len(a), bool)))[ok][[*key, "refused"]]
    verdicts: list[pd.DataFrame] = []
    if labels is not None and len(labels):
        human = labels[~labels["labeller"].astype(str).str.startswith("stand-in")]
        human = human[human["score"].notna()]
        if len(human):
            share = human.assign(qid=human["qid"].astype(str),
                                 c=human["score"].astype(int) == 5).groupby(key)["c"].mean()
            verdicts.append(share.ge(0.5).rename("correct").reset_index().assign(
                source="labels"))
    if judgments is not None and len(judgments):
        j = judgments[judgments["score"].notna()]
        verdicts.append(j.assign(qid=j["qid"].astype(str), correct=j["score"].astype(int) == 5,
                                 source="judge")[[*key, "correct", "source"]])
    if reference is not None and truth_metric in reference:
        r = reference[reference[truth_metric].notna()]
        verdicts.append(r.assign(qid=r["qid"].astype(str),
                                 correct=r[truth_metric].astype(float) >= correct_at,
                                 source=f"reference metric: {truth_metric}")[
            [*key, "correct", "source"]])
    found = (pd.concat(verdicts, ignore_index=True).drop_duplicates(key)  # the first source
             if verdicts else pd.DataFrame(columns=[*key, "correct", "source"]))
    out = a.merge(found, on=key, how="left")
    cls = np.where(out["refused"], "missing",
                   np.where(out["correct"].isna(), None,
                            np.where(out["correct"].fillna(False).astype(bool), "correct",
                                     "incorrect")))
    out = out.assign(**{"class": cls}, source=np.where(out["refused"], "refusal rule",
                                                       out["source"]))
    out = out[out["class"].notna()]
    return out.assign(truthfulness=out["class"].map(CLASSES).astype(float))[COLUMNS] \
        .reset_index(drop=True)


def scores(classes: pd.DataFrame, systems: Sequence[str]) -> pd.DataFrame:
    """Per system (TABLE_COLUMNS): the truthfulness score (mean over its questions, in
    [−1, 1]) with its 95 % interval, n, and the shares of each class."""
    means = system_means(classes, ["truthfulness"], systems)
    shares = (classes.groupby("system")["class"].value_counts(normalize=True)
              .unstack(fill_value=0.0).reindex(columns=list(CLASSES), fill_value=0.0))
    out = means.rename(columns={"mean": "score"}).drop(columns="signal").merge(
        shares.reset_index(), on="system", how="left")
    return out.fillna({c: 0.0 for c in CLASSES})[TABLE_COLUMNS]


def sources_text(classes: pd.DataFrame) -> str:
    """Where the classes came from, most used first: 'the judge (300), the refusal rule (12)'."""
    words = {"labels": "people's labels", "judge": "the judge", "refusal rule": "the refusal rule"}
    counts = classes["source"].value_counts()
    return ", ".join(f"{words.get(s, s)} ({n:,})" for s, n in counts.items())


def display(table: pd.DataFrame, name=str) -> pd.DataFrame:
    """The table for people: system, score [interval], the shares of each class, n."""
    from ragdash.analysis.system_means import cell

    return pd.DataFrame({
        "system": table["system"].map(name),
        "truthfulness (−1 to 1)": [cell(r.score, r.lo, r.hi, r.n) for r in
                                   table.itertuples(index=False)],
        "correct": table["correct"].map("{:.0%}".format),
        "missing (declined)": table["missing"].map("{:.0%}".format),
        "incorrect": table["incorrect"].map("{:.0%}".format),
        "questions": table["n"]})


def sentence(table: pd.DataFrame, name=str) -> str:
    """The table in words: the highest score (ties named together), the next one and whether
    their intervals overlap, and the systems below 0 (more wrong answers than right ones)."""
    scored = table[table["n"] > 0].sort_values("score", ascending=False, kind="stable")
    if scored.empty:
        return "No answer could be scored."
    top = scored.iloc[0]
    tied = scored[(scored["score"] - top["score"]).abs() < 1e-9]
    if len(tied) > 1:
        words = (" and ".join(name(s) for s in tied["system"])
                 + f" score highest ({top['score']:+.2f})")
    else:
        words = f"{name(top['system'])} scores highest ({top['score']:+.2f})"
    rest = scored.iloc[len(tied):]
    if len(rest):
        second = rest[(rest["score"] - rest.iloc[0]["score"]).abs() < 1e-9]
        overlap = tied["lo"].min() <= second["hi"].max()
        words += (f", then {' and '.join(name(s) for s in second['system'])} "
                  f"({second.iloc[0]['score']:+.2f})"
                  + ("; their intervals overlap" if overlap else ", below the leader's "
                     "interval"))
    below = scored[scored["score"] < 0]
    if len(below):
        words += (". Below 0, more wrong answers than right ones: "
                  + ", ".join(f"{name(s)} ({v:+.2f})" for s, v in
                              zip(below["system"], below["score"], strict=True)))
    return words + "."
