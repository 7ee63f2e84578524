"""Do the signals rank the systems the same way? The Compare retrievers and Compare runs pages'
section: the rank agreement grouped by verdict, every signal's mean with its 95 % CI per system
(`ragdash.analysis.system_means`) and each signal's order with its Kendall's tau."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from ragdash.analysis.system_means import DASH, RankSummary, SignalBoard
from ragdash.constants import label
from ragdash.ui import widgets
from ragdash.view.signal_board import orders_table

JUDGE_NOTE = ("LLM judge: the 1–5 score as a quality order (5 → 1, 3 → 0.5, 2 → 0.25, 1 and 4 → 0; "
              "the paper's 4 means fully incorrect), averaged")


def summary_markdown(summary: RankSummary) -> str:
    """The rank agreement as Markdown: the headline, a bullet per verdict (its title in bold,
    then its signals), the noise sentence; every name escaped."""
    lines = [widgets.md(summary.headline), ""]
    lines += [f"- **{widgets.md(title)}**: {widgets.md(', '.join(who))}"
              for title, who in summary.groups]
    if summary.noise:
        lines += ["", widgets.md(summary.noise)]
    return "\n".join(lines)


def show(board: SignalBoard, key: str, name: Callable[[str], str] = label,
         row_title: str = "System", note: str = "",
         cost: Mapping[str, tuple[float, float]] | None = None) -> None:
    """The section: the agreement by verdict (a callout), the table (systems as rows, signals as
    columns, "mean [low–high]", – where a system has no value), the orders with tau and, with
    `cost` (`RunView.signal_costs`), the LLM calls and tokens each signal took."""
    st.info(summary_markdown(board.summary), icon=":material/swap_vert:")
    table = board.table(name)
    st.dataframe(
        table, hide_index=True, width="stretch", key=f"{key}_means",
        column_config={"system": st.column_config.TextColumn(row_title, pinned=True),
                       "questions": st.column_config.NumberColumn(
                           "Questions", format="%d",
                           help="Questions with a value; a cell over fewer says n=…")})
    st.caption("Each cell: mean over the questions [95 % interval: Clopper–Pearson at the "
               "mean's effective number of questions, never of zero width, even where every "
               f"question sits at 0]; {DASH} where the system has no value "
               f"(no Score_IR without retrieval, no metric without the metrics stage). "
               f"{JUDGE_NOTE}. {note}".strip())
    orders = orders_table(board, name, cost)
    if orders.empty:
        return
    st.markdown("**Each signal's order of the systems, best first**")
    st.dataframe(
        orders, hide_index=True, width="stretch", key=f"{key}_orders",
        column_config={
            "signal": st.column_config.TextColumn("Signal", width="medium"),
            "order": st.column_config.TextColumn("Order (best first; = a tie)", width="large"),
            "tau": st.column_config.TextColumn(
                "Kendall's tau",
                help="Kendall's tau-b between this order and the reference's over the "
                     "systems both have: 1 the same order, 0 unrelated, −1 reversed; – when "
                     "one order ties every system. [95 % bootstrap interval: questions "
                     "resampled, the means and tau recomputed.]"),
            "pairs": st.column_config.TextColumn("Pairs of systems"),
            "cost": st.column_config.TextColumn(
                "LLM cost", help="LLM calls and tokens (in + out) the signal took on this run: "
                "none for Score_IR and the reference metrics; – not recorded")})
