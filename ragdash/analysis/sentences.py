"""The sentences the dashboard and the HTML report say about a run's figures, each written from
the numbers it describes (direction, size, counts and n), so a sentence cannot contradict the
figure beside it: the h/k rule's bias, how to read the confusion matrix, what a paired test
found and how many judged answers an LLM-based figure rests on. Plain text (no Markdown or
HTML): pages and the report format it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ragdash.analysis.compare import MIN_DIFFERING
from ragdash.constants import CLASSES

WIDE_CI_PP = 20.0
"""An interval of the rule's bias wider than this many points is called too wide to tell."""
_ESTIMATED = {"1": "lacking information", "2-4": "at risk (2–4)", "5": "correct"}
_JUDGED = {"1": "1", "2-4": "2–4", "5": "5"}


def plural(n: int, word: str) -> str:
    """'1 answer', '2 answers', '1,200 answers'."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


_plural = plural


def judged_basis(n_answers: int, n_questions: int, total_questions: int | None = None) -> str:
    """'300 judged answers from 60 questions', or, when only some questions were judged,
    '15 judged answers from 5 of the 12 questions (7 not judged)'."""
    head = f"{_plural(n_answers, 'judged answer')} from "
    if total_questions is None or n_questions >= total_questions:
        return head + _plural(n_questions, "question")
    return (head + f"{n_questions:,} of the {total_questions:,} questions "
            f"({total_questions - n_questions:,} not judged)")


def _level(level: float) -> str:
    return f"{level * 100:.0f} %"


def rule_bias(bias: dict, total_questions: int | None = None) -> str:
    """Whether the h/k rule over- or underestimates the share of correct answers, or matches
    the judge within the interval of the difference, by how many points and on how many
    answers (`ragdash.analysis.threshold_panel.rule_bias`'s numbers)."""
    if bias["n"] == 0:
        return "No judged answer: the h/k rule's estimate cannot be checked against the judge."
    est, act, d, ci = bias["est_pct"], bias["act_pct"], bias["diff_pp"], bias["ci"]
    basis = judged_basis(bias["n"], bias["questions"], total_questions)
    if ci is not None:
        interval = (f"{_level(bias['level'])} CI of the difference {ci[0]:+.1f} to {ci[1]:+.1f}"
                    " points")
        matches = ci[0] <= 0 <= ci[1]
    else:
        interval = "no interval: fewer than 2 questions"
        matches = abs(d) < 0.05
    figures = (f"{est:.1f} % estimated vs {act:.1f} % judged 5 ({interval}; {basis}; "
               f"estimated correct: Score_IR > k = {bias['k']:.3f} at N = {bias['budget']}).")
    if matches and ci is not None and ci[1] - ci[0] > WIDE_CI_PP:
        return (f"The h/k rule is within noise of the judge, but the interval is too wide to "
                f"tell (difference {d:+.1f} points; judge more answers to narrow it): {figures}")
    if matches:
        return (f"The h/k rule matches the judge within the {_level(bias['level'])} CI "
                f"(difference {d:+.1f} points): {figures}")
    over = (f"{_plural(bias['over'], 'answer')} above k {'was' if bias['over'] == 1 else 'were'}"
            " judged below 5 (short of correct with more than k of the relevant text)")
    under = (f"{_plural(bias['under'], 'answer')} at or under k "
             f"{'was' if bias['under'] == 1 else 'were'} judged 5 (correct with at most k of the "
             "relevant text in the context)")
    why = f"{over}; {under}" if d > 0 else f"{under}; {over}"
    word = "overestimates" if d > 0 else "underestimates"
    return (f"The h/k rule {word} correct answers by {abs(d):.1f} points: {figures} "
            f"{why[0].upper()}{why[1:]}.")


def _cells(conf: pd.DataFrame, below: bool) -> tuple[int, list[str]]:
    """Total and 'N estimated X but judged Y' for the cells below (or above) the diagonal."""
    z = conf.to_numpy()
    cells = [(int(z[i, j]), est, act) for i, est in enumerate(CLASSES)
             for j, act in enumerate(CLASSES) if (i > j if below else i < j) and z[i, j]]
    cells.sort(key=lambda c: -c[0])
    return sum(c[0] for c in cells), [f"{n:,} estimated {_ESTIMATED[est]} but judged "
                                      f"{_JUDGED[act]}" for n, est, act in cells]


def confusion_reading(conf: pd.DataFrame, h: float, k: float, budget: int) -> list[str]:
    """How to read the confusion matrix, from its counts: rows are the classes the rule
    estimates and columns the judge's, both in `CLASSES` order (1, 2–4, 5), drawn with the
    first row on top (`ragdash.viz.calibration.confusion`), so a cell below the diagonal is an
    answer estimated better than judged (the rule is optimistic) and one above it, worse
    (pessimistic). Returns the sentences in reading order, the verdict first."""
    if list(conf.index) != list(CLASSES) or list(conf.columns) != list(CLASSES):
        raise ValueError(f"confusion matrix: rows and columns must be {list(CLASSES)}, got "
                         f"{list(conf.index)} × {list(conf.columns)}")
    total = int(conf.to_numpy().sum())
    right = int(np.trace(conf.to_numpy()))
    n_below, below = _cells(conf, below=True)
    n_above, above = _cells(conf, below=False)
    if n_below == n_above == 0:
        verdict = "The rule puts every answer in the class the judge gave it."
    elif n_below > n_above:
        verdict = (f"The rule errs mostly on the optimistic side: {plural(n_below, 'answer')} "
                   f"below the diagonal against {n_above:,} above.")
    elif n_above > n_below:
        verdict = (f"The rule errs mostly on the pessimistic side: {plural(n_above, 'answer')} "
                   f"above the diagonal against {n_below:,} below.")
    else:
        verdict = (f"The rule errs as often on each side: {plural(n_below, 'answer')} below the "
                   f"diagonal and {n_above:,} above.")
    out = [verdict,
           f"Rows: the class the rule estimates from Score_IR (h = {h:.3f}, k = {k:.3f}, "
           f"N = {budget}); columns: the judge's score; {_plural(total, 'judged answer')}.",
           f"On the diagonal the rule is right: {_plural(right, 'answer')} "
           f"({100 * right / max(total, 1):.0f} %)."]
    out.append(f"Below the diagonal the rule is optimistic (it estimates a better outcome than "
               f"the judge gave): {_plural(n_below, 'answer')}, " + "; ".join(below) + "."
               if n_below else "Below the diagonal: no answer; the rule is never optimistic "
               "here.")
    out.append(f"Above the diagonal the rule is pessimistic (the answer was better than its "
               f"retrieved text suggests): {_plural(n_above, 'answer')}, " + "; ".join(above)
               + "." if n_above else "Above the diagonal: no answer; the rule is never "
               "pessimistic here.")
    return out


def p_text(p: float | None) -> str:
    """A p-value as tables and tiles show it: two significant digits, "—" without a test."""
    return "—" if p is None or pd.isna(p) else f"{p:.2g}"


def paired_test_phrase(pair: dict) -> str:
    """What the paired test found, from `ragdash.analysis.compare.paired`'s counts: its p-value,
    or why no test was run (every question ties, or too few differ)."""
    if pair.get("pvalue") is not None:
        return f"Wilcoxon p = {p_text(pair['pvalue'])}"
    differ = int(pair["win"]) + int(pair["loss"])
    if differ == 0:
        return f"no test: all {_plural(int(pair['n']), 'question')} tie"
    return (f"no test: only {differ:,} of the {int(pair['n']):,} questions "
            f"{'differs' if differ == 1 else 'differ'}, too few for a Wilcoxon signed-rank test "
            f"(it needs {MIN_DIFFERING})")


def lead_detail(pair: dict, significant: bool, level: float = 0.95) -> str:
    """Why a lead is clear or not, from the paired counts, interval and test."""
    n, win, loss, tie = (int(pair[c]) for c in ("n", "win", "loss", "tie"))
    if win + loss == 0:
        return f"No lead: both score the same on every one of the {n:,} questions (no test)."
    why = "A clear lead" if significant else "Within noise, not a significant lead"
    return (f"{why}: higher on {win:,}, lower on {loss:,} and tied on {tie:,} of "
            f"{_plural(n, 'question')}; paired {_level(level)} CI {pair['lo']:+.3f} to "
            f"{pair['hi']:+.3f}; {paired_test_phrase(pair)}.")
