"""Can the judge's scores be trusted? Four checks that need no second judge.

A judge that gives every answer the same score, scores by candidate position, scores the same
answer differently, or ignores whether an answer states the true answer produces thresholds and
estimates that mean nothing (Qwen2.5 0.5B and 1.5B with the paper's one-call rubric fail all of
these). Each check returns a value, a limit and a plain-language finding:

- `spread`: the share of the most frequent score (fails at or above 90 %).
- `consistency`: among the questions where two or more systems gave the very same answer text,
  the share whose copies got one score (fails below 80 %).
- `position`: in grouped judging, whether the score depends on the candidate's place in the
  prompt (chi-square test of independence; fails when p < 0.01 and Cramér's V > 0.2).
- `reference_match`: whether answers that contain the true answer (normalised as SQuAD does:
  lower case, no punctuation or articles; yes/no answers left out), or match it with ROUGE-L
  >= 0.5 where true answers are long (over 8 words: people's own words are never contained),
  are judged 5 more often than answers that do not (Cohen's kappa; fails below 0.2; not
  applicable where kappa is undefined, as when every answer is a refusal judged 1, or where no
  long answer matches: a long answer in other words is no evidence against the judge).

Answers the refusal rule scored are left out of every check: they never reached the judge.
A check without enough data is reported as not applicable, never as passed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ragdash.analysis.reference import normalize
from ragdash.analysis.sentences import plural

SPREAD_MAX = 0.9
CONSISTENCY_MIN = 0.8
POSITION_P, POSITION_V = 0.01, 0.2
KAPPA_MIN = 0.2
MIN_PAIRS = 10
LONG_ANSWER_WORDS = 8
"""True answers longer than this (median words) are matched by ROUGE-L, not containment."""
ROUGE_MIN = 0.5


@dataclass
class Check:
    name: str
    title: str
    status: str  # "ok", "warn" or "n/a"
    value: float | None
    limit: str
    finding: str


def _valid(judgments: pd.DataFrame) -> pd.DataFrame:
    """The scores the judge gave: answers the refusal rule scored (`rule` set) never reached
    it, so they say nothing about it (a run of refusals alone has nothing to audit)."""
    j = judgments[judgments["score"].notna()]
    if "rule" in j.columns:
        j = j[j["rule"].isna()]
    return j.assign(qid=j["qid"].astype(str), score=j["score"].astype(int))


def _with_answers(judgments: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Scored judgments with the text of the answer they judged."""
    keys = ["qid", "system"] + (["budget"] if "budget" in answers.columns
                                and "budget" in judgments.columns else [])
    a = answers[answers["answer"].notna()].astype({"qid": str})
    return _valid(judgments).merge(a[[*keys, "answer"]], on=keys, how="inner")


def spread(judgments: pd.DataFrame) -> Check:
    j = _valid(judgments)
    title = "Scores vary"
    if len(j) < MIN_PAIRS:
        return Check("spread", title, "n/a", None, f"< {SPREAD_MAX:.0%}",
                     f"only {len(j)} answers scored by the judge (the refusal rule's are "
                     "left out)")
    counts = j["score"].value_counts()
    share = float(counts.iloc[0] / len(j))
    ok = share < SPREAD_MAX
    finding = (f"the most frequent score, {counts.index[0]}, goes to {share:.0%} of "
               f"{len(j):,} answers" + ("" if ok else ": the scores carry little information"))
    return Check("spread", title, "ok" if ok else "warn", share, f"< {SPREAD_MAX:.0%}", finding)


def consistency(judgments: pd.DataFrame, answers: pd.DataFrame) -> Check:
    title = "Same answer, same score"
    j = _with_answers(judgments, answers)
    j = j.assign(text=j["answer"].map(normalize))
    groups = j.groupby(["qid", "text"])["score"].agg(["size", "nunique"])
    groups = groups[groups["size"] > 1]
    if len(groups) < MIN_PAIRS // 2:
        return Check("consistency", title, "n/a", None, f">= {CONSISTENCY_MIN:.0%}",
                     f"only {len(groups)} questions with a repeated answer")
    share = float((groups["nunique"] == 1).mean())
    ok = share >= CONSISTENCY_MIN
    finding = (f"{share:.0%} of {len(groups):,} answers given by several systems got one score"
               + ("" if ok else ": identical answers are scored differently"))
    return Check("consistency", title, "ok" if ok else "warn", share,
                 f">= {CONSISTENCY_MIN:.0%}", finding)


def position(judgments: pd.DataFrame) -> Check:
    from scipy.stats import chi2_contingency

    title = "No position bias"
    limit = f"p >= {POSITION_P} or V <= {POSITION_V}"
    j = _valid(judgments)
    j = j[j["position"].notna()] if "position" in j.columns else j.iloc[:0]
    if j.empty or j["position"].nunique() < 2:
        return Check("position", title, "n/a", None, limit,
                     "one answer per call: no position to be biased by")
    table = pd.crosstab(j["position"], j["score"])
    table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return Check("position", title, "n/a", None, limit, "a single score in every position")
    chi2, p, _, _ = chi2_contingency(table)
    v = float(np.sqrt(chi2 / (table.to_numpy().sum() * (min(table.shape) - 1))))
    ok = not (p < POSITION_P and v > POSITION_V)
    means = j.groupby("position")["score"].mean()
    finding = (f"Cramér's V = {v:.2f}, p = {p:.2g}; mean score by position "
               + ", ".join(f"{int(k)}: {m:.1f}" for k, m in means.items())
               + ("" if ok else ": the score depends on where the answer sits in the prompt"))
    return Check("position", title, "ok" if ok else "warn", v, limit, finding)


def long_answers(golds: pd.Series) -> bool:
    """Whether true answers are long (median over `LONG_ANSWER_WORDS` words): people's own
    words, which an answer never contains word for word."""
    words = golds.dropna().astype(str).map(normalize).str.split().str.len()
    return bool(len(words)) and float(words.median()) > LONG_ANSWER_WORDS


def reference_match(judgments: pd.DataFrame, answers: pd.DataFrame,
                    examples: pd.DataFrame) -> Check:
    title = "Agrees with the true answer"
    gold = examples.astype({"qid": str}).set_index("qid")["answer"].map(normalize)
    j = _with_answers(judgments, answers)
    j = j.assign(gold=j["qid"].map(gold))
    j = j[j["gold"].notna() & (j["gold"] != "") & ~j["gold"].isin(("yes", "no"))]
    if len(j) < MIN_PAIRS:
        return Check("reference_match", title, "n/a", None, f"kappa >= {KAPPA_MIN}",
                     f"only {len(j)} judged answers with a short, non yes/no true answer")
    long = long_answers(j["gold"])
    if long:  # long true answers in people's words are never contained: ROUGE-L fits them
        from ragdash.analysis.reference import rouge_l

        raw = examples.astype({"qid": str}).set_index("qid")["answer"]
        contains = np.array([rouge_l(t, raw[q]) >= ROUGE_MIN
                             for q, t in zip(j["qid"], j["answer"], strict=True)])
        what = f"that match the true answer (ROUGE-L >= {ROUGE_MIN})"
    else:
        contains = np.array([g in normalize(t)
                             for g, t in zip(j["gold"], j["answer"], strict=True)])
        what = "that contain the true answer"
    five = (j["score"] == 5).to_numpy()
    said = f"judged 5: {_share(five, contains)} {what}, {_share(five, ~contains)} that do not"
    if (contains.all() and five.all()) or not (contains.any() or five.any()) or (
            long and not contains.any()):
        # kappa is undefined (one class on both sides: every answer a refusal judged 1), or
        # long answers in other words that no answer matches: nothing to hold the judge to
        return Check("reference_match", title, "n/a", None, f"kappa >= {KAPPA_MIN}",
                     f"{said}: nothing to measure agreement on")
    observed = float((contains == five).mean())
    expected = float(contains.mean() * five.mean() + (1 - contains.mean()) * (1 - five.mean()))
    kappa = 0.0 if expected >= 1 else (observed - expected) / (1 - expected)
    ok = kappa >= KAPPA_MIN
    finding = (f"{said} (kappa {kappa:.2f})"
               + ("" if ok else ": the scores ignore the true answer"))
    return Check("reference_match", title, "ok" if ok else "warn", kappa,
                 f"kappa >= {KAPPA_MIN}", finding)


def _share(hit: np.ndarray, among: np.ndarray) -> str:
    """'42% of the 19 answers', or 'there are no answers' when there are none."""
    n = int(among.sum())
    return (f"{hit[among].mean():.0%} of the {plural(n, 'answer')}" if n
            else "there are no answers")


def audit(judgments: pd.DataFrame, answers: pd.DataFrame | None = None,
          examples: pd.DataFrame | None = None) -> list[Check]:
    """All checks that the given tables allow (answers and examples add two)."""
    checks = [spread(judgments), position(judgments)]
    if answers is not None:
        checks.insert(1, consistency(judgments, answers))
        if examples is not None:
            checks.append(reference_match(judgments, answers, examples))
    return checks


def summary(checks: list[Check]) -> dict:
    """JSON-able: {"warnings": n, "checks": [...]} (what run.json and calibration.json keep)."""
    return {"warnings": sum(c.status == "warn" for c in checks),
            "checks": [asdict(c) for c in checks]}
