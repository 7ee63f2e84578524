"""Figures of several runs side by side (plain plotly, no streamlit): how each (run, retriever)
entry is drawn, and the leaderboard as a ranked dot plot with intervals. They take the frames
of `ragdash.view.leaderboard`; the overlaid curves, the pair scatter and the difference
curves are `ragdash.viz.retrieval`'s, drawn with `looks`."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragdash.viz.colors import EXTRA, color_of, symbol_of
from ragdash.viz.retrieval import Looks
from ragdash.viz.style import style, subtitle

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
RUN_COLORS = ("#1c7ed6", "#f76707", "#0ca678", "#ae3ec9", "#d6336c", *EXTRA)


def looks(entries: pd.DataFrame) -> Looks:
    """Names, colours and dashes of entries (columns entry, run, retriever, name): one colour
    per retriever and one dash per run while that tells them apart (several retrievers, at most
    six runs); else one colour per run and one dash per retriever."""
    runs = list(dict.fromkeys(entries["run"]))
    rets = list(dict.fromkeys(entries["retriever"]))
    by_retriever = len(rets) > 1 and len(runs) <= len(DASHES)
    colors, dashes = {}, {}
    symbols = dict(zip(entries["entry"], entries["retriever"].map(symbol_of), strict=True))
    for e, run, ret in entries[["entry", "run", "retriever"]].itertuples(index=False):
        if by_retriever:
            colors[e], dashes[e] = color_of(ret), DASHES[runs.index(run)]
        else:
            colors[e] = RUN_COLORS[runs.index(run) % len(RUN_COLORS)]
            dashes[e] = DASHES[rets.index(ret) % len(DASHES)]
    return Looks(dict(zip(entries["entry"], entries["name"], strict=True)), colors, dashes,
                 symbols)


def leaderboard_dots(board: pd.DataFrame, budget: int, drawn: Looks,
                     level: float = 0.95) -> go.Figure:
    """Mean Score_IR at N per entry with its interval, best at the top; the leader's
    score is a dotted line, so the gap of every other entry reads off at a glance."""
    b = board.iloc[::-1]  # plotly draws the first category at the bottom
    names = [html.escape(n) for n in b["name"]]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=b["score"], y=names, mode="markers",
        marker={"color": [drawn.color(e) for e in b["entry"]], "size": 13,
                "line": {"color": "white", "width": 1}},
        error_x={"type": "data", "symmetric": False, "array": b["hi"] - b["score"],
                 "arrayminus": b["score"] - b["lo"], "color": "#868e96", "thickness": 2,
                 "width": 6},
        customdata=np.stack([b["lo"], b["hi"], b["gap"], b["rank"], b["n"]], axis=1),
        hovertemplate=("<b>%{y}</b><br>rank %{customdata[3]}<br>mean Score_IR = %{x:.3f}"
                       "<br>95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f}"
                       "<br>vs leader %{customdata[2]:+.3f}<br>%{customdata[4]} questions"
                       "<extra></extra>"),
        showlegend=False))
    top = float(board["score"].iloc[0])
    fig.add_vline(x=top, line={"color": "#2f9e44", "dash": "dot", "width": 1.5},
                  annotation_text=f"leader {top:.3f}", annotation_position="top",
                  annotation_font={"color": "#2f9e44"})
    lo = float(np.nanmin(board["lo"])) if board["lo"].notna().any() else 0.0
    hi = float(np.nanmax(board["hi"])) if board["hi"].notna().any() else top
    style(fig, subtitle(f"Leaderboard: mean Score_IR at N = {budget}, best at the top",
                        f"dots: mean over the shared questions; bars: {level:.0%} "
                        "interval; dotted line: the leader"),
          f"Mean Score_IR at N = {budget}", None, height=max(260, 70 + 38 * len(board)))
    fig.update_xaxes(range=[max(0.0, lo - 0.04), min(1.02, max(hi, top) + 0.04)],
                     tickformat=".2f")
    fig.update_layout(margin={"l": 20})
    fig.update_yaxes(automargin=True)
    return fig
