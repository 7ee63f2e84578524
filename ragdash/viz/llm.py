"""Figures of the LLM stages (plain plotly, no streamlit): judge scores per system (the paper's
Table 3.3, §3.2) and per budget, RAG vs LLM only, latency and tokens. They take the frames of
`ragdash.analysis.judging`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ragdash.constants import LLM_ONLY, SCORE_LABELS, SCORES
from ragdash.viz.colors import SCORE_COLORS, color_of, label
from ragdash.viz.style import style, subtitle


def judge_stacked(dist: pd.DataFrame, order: Sequence[str]) -> go.Figure:
    """Horizontal 100% stacked bars of judge scores 1–5 per system (the paper's Table 3.3)."""
    fig = go.Figure()
    systems = [s for s in order if s in set(dist["system"])]
    ylabels = [f"{label(s)}" for s in systems]
    for s in SCORES:
        g = dist[dist["score"] == s].set_index("system").reindex(systems)
        fig.add_trace(go.Bar(
            y=ylabels, x=g["share"] * 100, orientation="h", name=SCORE_LABELS[s],
            marker_color=SCORE_COLORS[s], text=[f"{v:.0%}" if v >= 0.04 else "" for v in
                                                g["share"].fillna(0)],
            textposition="inside", insidetextanchor="middle",
            customdata=np.stack([g["count"], g["n_valid"]], axis=1),
            hovertemplate=(f"%{{y}}<br>{SCORE_LABELS[s]}<br>%{{x:.1f}}% "
                           "(%{customdata[0]} of %{customdata[1]})<extra></extra>")))
    plot = max(160, 48 * len(systems))  # the bars' height in pixels
    style(fig, subtitle("Judge scores per system",
                        "share of valid judgments; judge errors are counted apart"),
          "% of judged answers", "System", height=plot + 70 + 130, legend="Judge score")
    # the legend starts 60 px under the bars, below the axis title (at -0.25 of a short plot
    # it lay on "% of judged answers")
    fig.update_layout(barmode="stack", margin={"b": 130},
                      legend={"orientation": "h", "y": -60 / plot, "yanchor": "top", "x": 0,
                              "traceorder": "normal"})
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 100], ticksuffix="%")
    return fig


def sweep_stacked(sweep: pd.DataFrame, system: str) -> go.Figure:
    """Judge-score shares of one system's answers at each budget (a budget sweep)."""
    fig = go.Figure()
    budgets = sorted(sweep["budget"].unique())
    for s in SCORES:
        g = sweep[sweep["score"] == s].set_index("budget").reindex(budgets)
        fig.add_trace(go.Bar(
            x=[str(b) for b in budgets], y=g["share"] * 100, name=SCORE_LABELS[s],
            marker_color=SCORE_COLORS[s], customdata=g["count"],
            hovertemplate=f"N = %{{x}}<br>{SCORE_LABELS[s]}: %{{y:.1f}}% "
                          "(%{customdata})<extra></extra>"))
    style(fig, f"Judge scores of {label(system)} answers by token budget N", "Token budget N",
          "% of judged answers", legend="Judge score")
    fig.update_layout(barmode="stack", legend={"traceorder": "normal"})
    fig.update_yaxes(range=[0, 100], ticksuffix="%")
    return fig


def rag_gain_bars(gain: pd.DataFrame) -> go.Figure:
    """Share judged correct with retrieval vs LLM only on the same questions, per system."""
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=[label(s) for s in gain["system"]], y=gain["rag_correct"] * 100,
        name="with retrieval (the retriever's colour)",
        marker_color=[color_of(s) for s in gain["system"]],
        text=[f"{v:.0%}" for v in gain["rag_correct"]], textposition="outside",
        hovertemplate="%{x}: %{y:.1f}% judged 5 with retrieval<extra></extra>"))
    fig.add_trace(go.Bar(
        x=[label(s) for s in gain["system"]], y=gain["llm_only_correct"] * 100,
        name="LLM only, same questions", marker_color=color_of(LLM_ONLY),
        text=[f"{v:.0%}" for v in gain["llm_only_correct"]], textposition="outside",
        hovertemplate="%{x}: LLM only %{y:.1f}% judged 5<extra></extra>"))
    style(fig, subtitle("Share of answers judged fully correct (5): RAG vs LLM only",
                        "on the questions both answers were judged"),
          "Retriever", "% judged 5", legend="")
    fig.update_layout(barmode="group", bargap=0.25, height=460,
                      legend={"orientation": "h", "y": -0.22, "yanchor": "top", "x": 0})
    fig.update_traces(textfont_size=12, cliponaxis=False)
    fig.update_yaxes(range=[0, 110], ticksuffix="%")
    return fig


def crosstab_heatmap(ct: pd.DataFrame, system: str) -> go.Figure:
    """LLM-only judge score (rows) vs a RAG system's (columns), counts."""
    fig = go.Figure(go.Heatmap(
        z=ct.to_numpy(), x=[str(c) for c in ct.columns], y=[str(i) for i in ct.index],
        colorscale="Blues", text=ct.to_numpy(), texttemplate="%{text}", showscale=False,
        hovertemplate=(f"LLM only = %{{y}}<br>{label(system)} = %{{x}}<br>%{{z}} questions"
                       "<extra></extra>")))
    style(fig, subtitle(f"Judge score without vs with retrieval ({label(system)})",
                        "questions per pair of scores; the diagonal is unchanged"),
          f"{label(system)} judge score", "LLM-only judge score", height=380)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def latency_box(answers: pd.DataFrame, order: Sequence[str]) -> go.Figure:
    """Generation latency per system (seconds)."""
    fig = go.Figure()
    for s in order:
        v = answers.loc[answers["system"] == s, "latency_s"].dropna()
        if v.empty:
            continue
        fig.add_trace(go.Box(y=v, name=label(s), marker_color=color_of(s), boxmean=True,
                             hovertemplate=f"{label(s)}: %{{y:.2f}} s<extra></extra>"))
    style(fig, "Generation latency per call", "System", "Seconds per answer")
    fig.update_layout(showlegend=False)
    return fig


def tokens_bars(use: pd.DataFrame) -> go.Figure:
    """Mean prompt and answer tokens per call, per system."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Prompt tokens", "Answer tokens"))
    for col, field in enumerate(("tokens_in_mean", "tokens_out_mean"), start=1):
        fig.add_trace(go.Bar(
            x=[label(s) for s in use["system"]], y=use[field],
            marker_color=[color_of(s) for s in use["system"]], showlegend=False,
            text=[f"{v:,.0f}" for v in use[field]], textposition="outside",
            hovertemplate="%{x}: %{y:,.0f} tokens<extra></extra>"), row=1, col=col)
    style(fig, "Mean tokens per generation call", height=380)
    fig.update_yaxes(title_text="Tokens per call", row=1, col=1)
    fig.update_xaxes(title_text="System")
    return fig
