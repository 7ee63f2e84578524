"""Figures of retrieval quality (plain plotly, no streamlit): mean Score_IR over the budget N with
confidence bands, its distribution at one N, breakdowns by question metadata, chunk-level IR
metrics, and paired comparisons of two retrievers. They take the frames of
`ragdash.analysis.curves` and `ragdash.analysis.compare`."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragdash.viz.colors import color_of, label, symbol_of
from ragdash.viz.style import rgba, style, subtitle


@dataclass(frozen=True)
class Looks:
    """How series are drawn: display names, colours, line dashes and marker symbols by series
    name (a retriever, or a `run::retriever` entry); a name not given falls back to the
    retriever's label, colour and symbol and a solid line."""

    names: Mapping[str, str] = field(default_factory=dict)
    colors: Mapping[str, str] = field(default_factory=dict)
    dashes: Mapping[str, str] = field(default_factory=dict)
    symbols: Mapping[str, str] = field(default_factory=dict)

    def name(self, r: str) -> str:
        return self.names.get(r) or label(r)

    def color(self, r: str) -> str:
        return self.colors.get(r) or color_of(r)

    def dash(self, r: str) -> str:
        return self.dashes.get(r, "solid")

    def symbol(self, r: str) -> str:
        return self.symbols.get(r) or symbol_of(r)


RETRIEVERS = Looks()


def score_curves(bands: pd.DataFrame, order: Sequence[str], level: float = 0.95,
                 looks: Looks = RETRIEVERS, legend: str = "Retriever") -> go.Figure:
    """Mean Score_IR vs N per retriever (or per entry of several runs, drawn by `looks`) with
    its band (analysis.curves.mean_curves)."""
    fig = go.Figure()
    for r in order:
        g = bands[bands["retriever"] == r].sort_values("budget")
        if g.empty:
            continue
        c, name = looks.color(r), looks.name(r)
        fig.add_trace(go.Scatter(
            x=np.concatenate([g["budget"], g["budget"][::-1]]),
            y=np.concatenate([g["hi"], g["lo"][::-1]]), fill="toself", fillcolor=rgba(c, 0.15),
            mode="lines", line={"width": 0}, hoverinfo="skip", showlegend=False,
            legendgroup=r))  # no markers: plotly draws them on short bands by default
        fig.add_trace(go.Scatter(
            x=g["budget"], y=g["mean"], mode="lines+markers", name=name, legendgroup=r,
            line={"color": c, "width": 2.5, "dash": looks.dash(r)},
            marker={"symbol": looks.symbol(r), "size": 10, "line": {"width": 2, "color": c}},
            customdata=np.stack([g["lo"], g["hi"], g["n"]], axis=1),
            hovertemplate=(f"<b>{html.escape(name)}</b><br>N = %{{x}} tokens<br>mean Score_IR = "
                           "%{y:.3f}<br>95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f}"
                           "<br>%{customdata[2]} questions<extra></extra>")))
    style(fig, subtitle("Mean Score_IR by token budget N",
                        f"share of the relevant parts found in the first N tokens; bands: "
                        f"{level:.0%} interval over questions"),
          "Token budget N", "Mean Score_IR", legend=legend)
    fig.update_yaxes(range=[0, 1.02], tickformat=".1f")
    # the legend below the plot: on a narrow column a side legend squeezed the plot and
    # clipped the axis title (the paper's Figure 3.1)
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
                      margin={"b": 90}, height=460)
    return fig


def score_distribution(at: pd.DataFrame, order: Sequence[str], budget: int) -> go.Figure:
    """Box plots of Score_IR at one budget per retriever (points shown for small runs)."""
    fig = go.Figure()
    n = at.groupby("retriever").size().max() if len(at) else 0
    for r in order:
        s = at.loc[at["retriever"] == r, "score"]
        if s.empty:
            continue
        fig.add_trace(go.Box(
            y=s, name=label(r), marker_color=color_of(r), boxmean=True,
            boxpoints="all" if n <= 400 else "outliers", jitter=0.4, pointpos=0,
            marker={"size": 4, "opacity": 0.55},
            hovertemplate=f"<b>{label(r)}</b><br>Score_IR = %{{y:.3f}}<extra></extra>"))
    style(fig, subtitle(f"Distribution of Score_IR at N = {budget}",
                        "one point per question; box: quartiles, dashed line: mean"),
          "Retriever", f"Score_IR at N = {budget}")
    fig.update_layout(showlegend=False)
    fig.update_yaxes(range=[-0.02, 1.02], tickformat=".1f")
    return fig


def score_histogram(at: pd.DataFrame, order: Sequence[str], budget: int) -> go.Figure:
    """Overlaid share-of-questions histograms of Score_IR at one budget (10 bins)."""
    fig = go.Figure()
    for r in order:
        s = at.loc[at["retriever"] == r, "score"]
        if s.empty:
            continue
        fig.add_trace(go.Histogram(
            x=s, name=label(r), marker_color=color_of(r), opacity=0.65, histnorm="percent",
            xbins={"start": 0, "end": 1.0001, "size": 0.1},
            hovertemplate=f"<b>{label(r)}</b><br>Score_IR %{{x}}<br>%{{y:.1f}}% of questions"
                          "<extra></extra>"))
    style(fig, f"Share of questions per Score_IR bin at N = {budget}",
          f"Score_IR at N = {budget}", "% of questions", legend="Retriever")
    fig.update_layout(barmode="group", bargap=0.1)
    return fig


def breakdown_bars(df: pd.DataFrame, order: Sequence[str], by: str, budget: int) -> go.Figure:
    """Mean Score_IR per group of a metadata column × retriever, with ±1 s.e. error bars."""
    fig = go.Figure()
    for r in order:
        g = df[df["retriever"] == r]
        if g.empty:
            continue
        fig.add_trace(go.Bar(
            x=g["group"], y=g["mean"], name=label(r), marker_color=color_of(r),
            error_y={"type": "data", "array": g["sem"].fillna(0), "thickness": 1},
            customdata=g["n"], hovertemplate=(f"<b>{label(r)}</b><br>{by} = %{{x}}<br>mean "
                                              "Score_IR = %{y:.3f}<br>%{customdata} questions"
                                              "<extra></extra>")))
    style(fig, subtitle(f"Mean Score_IR at N = {budget} by question {by}",
                        "error bars: ±1 standard error"),
          f"Question {by}", f"Mean Score_IR at N = {budget}", legend="Retriever")
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.05], tickformat=".1f")
    return fig


def metrics_bars(metrics: pd.DataFrame, order: Sequence[str]) -> go.Figure:
    """Chunk-level IR metrics (Recall@k, P@k, MRR, nDCG@k) per retriever."""
    cols = [c for c in metrics.columns if c not in ("retriever", "questions_with_relevant")]
    fig = go.Figure()
    for r in order:
        row = metrics[metrics["retriever"] == r]
        if row.empty:
            continue
        fig.add_trace(go.Bar(
            x=cols, y=row.iloc[0][cols].astype(float), name=label(r), marker_color=color_of(r),
            hovertemplate=f"<b>{label(r)}</b><br>%{{x}} = %{{y:.3f}}<extra></extra>"))
    style(fig, subtitle("Classic IR metrics at chunk level",
                        "a chunk is relevant when it contains a relevant part"),
          "Metric", "Value (mean over questions)", legend="Retriever")
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.05], tickformat=".1f")
    return fig


# --- comparisons ------------------------------------------------------------------------------


def pair_scatter(matrix: pd.DataFrame, a: str, b: str, budget: int,
                 looks: Looks = RETRIEVERS) -> go.Figure:
    """Per-question Score_IR of `a` (x) vs `b` (y); points coloured by the winner."""
    m = matrix[[a, b]].dropna()
    d = m[a] - m[b]
    la, lb = html.escape(looks.name(a)), html.escape(looks.name(b))
    ca, cb = looks.color(a), looks.color(b)
    if ca == cb:  # the same retriever in two runs: tell the winners apart all the same
        cb = "#5f3dc4"
    fig = go.Figure()
    for name, mask, color in ((f"{la} higher", d > 1e-9, ca),
                              (f"{lb} higher", d < -1e-9, cb),
                              ("tie", d.abs() <= 1e-9, "#adb5bd")):
        sub = m[mask]
        fig.add_trace(go.Scatter(
            x=sub[a], y=sub[b], mode="markers", name=f"{name} ({int(mask.sum())})",
            marker={"color": color, "size": 8, "opacity": 0.75,
                    "line": {"width": 0.5, "color": "white"}},
            text=sub.index, hovertemplate=(f"question %{{text}}<br>{la} = %{{x:.3f}}<br>"
                                           f"{lb} = %{{y:.3f}}<extra></extra>")))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": "#868e96",
                             "dash": "dot", "width": 1}, hoverinfo="skip", showlegend=False))
    style(fig, subtitle(f"Per-question Score_IR at N = {budget}",
                        f"one point per question; above the diagonal {lb} does better"),
          f"{la} Score_IR", f"{lb} Score_IR", height=520)
    fig.update_layout(legend={"orientation": "h", "y": -0.18, "yanchor": "top", "x": 0})
    fig.update_xaxes(range=[-0.03, 1.03], tickformat=".1f", constrain="domain")
    fig.update_yaxes(range=[-0.03, 1.03], tickformat=".1f", scaleanchor="x", scaleratio=1,
                     constrain="domain")
    return fig


def difference_curves(curves: dict[tuple[str, str], pd.DataFrame],
                      looks: Looks = RETRIEVERS) -> go.Figure:
    """Mean paired difference a − b vs N with confidence bands, one line per pair."""
    fig = go.Figure()
    for (a, b), g in curves.items():
        if g.empty:
            continue
        c = looks.color(a)
        name = html.escape(f"{looks.name(a)} − {looks.name(b)}")
        tied = g["lo"].isna()  # every question ties there: no band, and the hover says so
        fig.add_trace(go.Scatter(
            x=np.concatenate([g["budget"], g["budget"][::-1]]),
            y=np.concatenate([g["hi"].fillna(g["mean"]), g["lo"].fillna(g["mean"])[::-1]]),
            fill="toself", fillcolor=rgba(c, 0.13),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(
            x=g["budget"], y=g["mean"], mode="lines+markers", name=name, legendgroup=name,
            line={"color": c, "width": 2.5, "dash": "solid"},
            marker={"color": looks.color(b), "size": 8, "line": {"color": c, "width": 2}},
            text=["every question ties" if t else f"95% CI {lo:+.3f} to {hi:+.3f}"
                  for t, lo, hi in zip(tied, g["lo"], g["hi"], strict=True)],
            hovertemplate=(f"<b>{name}</b><br>N = %{{x}}<br>mean difference = %{{y:+.3f}}"
                           "<br>%{text}<extra></extra>")))
    fig.add_hline(y=0, line={"color": "#868e96", "width": 1})
    style(fig, subtitle("Difference in mean Score_IR across budgets",
                        "paired over questions; bands: 95% interval; above 0 the "
                        "first one is better"),
          "Token budget N", "Mean difference in Score_IR", legend="Pair")
    fig.update_layout(legend={"orientation": "h", "y": -0.22, "yanchor": "top", "x": 0})
    fig.update_yaxes(tickformat="+.2f")
    return fig


def method_curves(bands: Mapping[str, pd.DataFrame], order: Sequence[str],
                  level: float = 0.95) -> go.Figure:
    """Mean Score_IR vs N per retriever under several matching methods ({method: its
    mean_curves}, e.g. substring and semantic): one colour per retriever, the first
    method's line solid, the others dotted or dashed, each with its band."""
    dashes = ("solid", "dot", "dash", "dashdot")
    parts, names, colors, styles, symbols = [], {}, {}, {}, {}
    for i, (method, b) in enumerate(bands.items()):
        for r in order:
            key = f"{r}::{method}"
            parts.append(b[b["retriever"] == r].assign(retriever=key))
            names[key], colors[key] = f"{label(r)} · {method}", color_of(r)
            styles[key], symbols[key] = dashes[i % len(dashes)], symbol_of(r)
    keys = [f"{r}::{m}" for r in order for m in bands]
    data = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["retriever", "budget", "mean", "lo", "hi", "n"])
    fig = score_curves(data, keys, level, Looks(names, colors, styles, symbols),
                       legend="Retriever · matching")
    fig.update_layout(title_text=subtitle(
        "Mean Score_IR by token budget N, by matching method",
        f"{' vs '.join(bands)}: same retriever, same colour; bands: {level:.0%} "
        "interval over questions"))
    return fig
