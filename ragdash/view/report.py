"""The Report page's model: the per-question tables it offers for download, each with what it
holds, and the file-name stem of a run's downloads, built by pure functions over a run's view
so the page only lays them out and each table is tested without a browser.

    for name, table in tables(view, n).items(): ...
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import curves, frames, judging
from ragdash.view import RunView


@dataclass(frozen=True)
class Table:
    """One downloadable table and the sentence that says what a row is."""

    frame: pd.DataFrame
    about: str


def file_stem(run_id: str) -> str:
    """A run id as a download's file-name stem: letters, digits, '-', '_' and '.' kept, any
    other character (a path separator, a quote) replaced by '_'."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in run_id)


def tables(view: RunView, n: int) -> dict[str, Table]:
    """The run's per-question tables at budget N, by download name: questions at N, scores at
    every budget, Table 3.1, and with judgments Table 3.3 and the LLM errors, and the signal
    agreement when measured. Needs the run's examples and ir_scores."""
    run = view.run
    ir, examples = run.table("ir_scores"), run.table("examples")
    judgments, order = view.judgments(), view.order
    judged = judgments is not None
    out = {
        f"questions_at_N{n}": Table(
            frames.per_question(examples, ir, n, judgments, order),
            f"One row per question: metadata, Score_IR of each retriever at N = {n} (`ir:` "
            "columns)" + (", judge scores (`judge:`)." if judged else ".")),
        "scores_all_budgets": Table(
            frames.long_scores(ir, judgments),
            "One row per question × retriever × budget: Score_IR, part scores, context tokens"
            + (", judge score." if judged else ".")),
        "table_3_1": Table(curves.summary_table(ir, order).reset_index(),
                           "Mean Score_IR per budget and retriever."),
    }
    if judged:
        out["table_3_3"] = Table(judging.table_3_3(judgments, order).reset_index(),
                                 "Judge-score shares per system, judged count and errors.")
        out["llm_errors"] = Table(judging.errors_table(run.table("answers"), judgments),
                                  "Failed generation and judge calls.")
    agreement = view.signal_agreement()
    if agreement is not None and not agreement[0].empty:
        out["signal_agreement"] = Table(
            agreement[0], f"Which signal agrees with the truth ({agreement[1]}): AUC with its "
            "95 % interval, Spearman, LLM calls and tokens per signal, best first.")
    return out
