"""Plotly figures of the dashboard and the HTML report (plain plotly, no streamlit).

Every figure has a title and labelled axes, uses the one colour per retriever of
`ragdash.ui.colors`, and takes the frames of `ragdash.analysis`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ragdash.analysis import (
    CLASS_LABELS,
    SCORE_LABELS,
    SCORES,
    ThresholdData,
    downsample_sorted,
)
from ragdash.calibrate import CLASSES
from ragdash.ui.colors import CLASS_COLORS, SCORE_COLORS, color_of, label

FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"


def style(fig: go.Figure, title: str, x: str | None = None, y: str | None = None,
          height: int = 420, legend: str | None = None) -> go.Figure:
    """House style: white template, title with optional subtitle line, axis titles, legend."""
    fig.update_layout(
        template="plotly_white", height=height, font={"family": FONT, "size": 13},
        title={"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        margin={"l": 60, "r": 20, "t": 70, "b": 55}, hoverlabel={"font": {"family": FONT}},
        legend={"title": {"text": legend or ""}},
    )
    if x is not None:
        fig.update_xaxes(title_text=x)
    if y is not None:
        fig.update_yaxes(title_text=y)
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _subtitle(title: str, sub: str) -> str:
    return f"{title}<br><sup style='color:#666'>{sub}</sup>"


# --- retrieval --------------------------------------------------------------------------------


def score_curves(bands: pd.DataFrame, order: Sequence[str], level: float = 0.95) -> go.Figure:
    """Mean Score_IR vs N per retriever with its bootstrap band (analysis.bootstrap_curves)."""
    fig = go.Figure()
    for r in order:
        g = bands[bands["retriever"] == r].sort_values("budget")
        if g.empty:
            continue
        c = color_of(r)
        fig.add_trace(go.Scatter(
            x=np.concatenate([g["budget"], g["budget"][::-1]]),
            y=np.concatenate([g["hi"], g["lo"][::-1]]), fill="toself", fillcolor=_rgba(c, 0.15),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=r))
        fig.add_trace(go.Scatter(
            x=g["budget"], y=g["mean"], mode="lines+markers", name=label(r), legendgroup=r,
            line={"color": c, "width": 2.5}, marker={"size": 6},
            customdata=np.stack([g["lo"], g["hi"], g["n"]], axis=1),
            hovertemplate=(f"<b>{label(r)}</b><br>N = %{{x}} tokens<br>mean Score_IR = "
                           "%{y:.3f}<br>95% CI %{customdata[0]:.3f}–%{customdata[1]:.3f}"
                           "<br>%{customdata[2]} questions<extra></extra>")))
    style(fig, _subtitle("Mean Score_IR by token budget N",
                         f"share of the relevant parts found in the first N tokens; bands: "
                         f"{level:.0%} bootstrap interval over questions"),
          "Token budget N", "Mean Score_IR", legend="Retriever")
    fig.update_yaxes(range=[0, 1.02], tickformat=".1f")
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
    style(fig, _subtitle(f"Distribution of Score_IR at N = {budget}",
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
    style(fig, _subtitle(f"Mean Score_IR at N = {budget} by question {by}",
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
    style(fig, _subtitle("Classic IR metrics at chunk level",
                         "a chunk is relevant when it contains a relevant part"),
          "Metric", "Value (mean over questions)", legend="Retriever")
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.05], tickformat=".1f")
    return fig


# --- comparisons ------------------------------------------------------------------------------


def pair_scatter(matrix: pd.DataFrame, a: str, b: str, budget: int) -> go.Figure:
    """Per-question Score_IR of `a` (x) vs `b` (y); points coloured by the winner."""
    m = matrix[[a, b]].dropna()
    d = m[a] - m[b]
    fig = go.Figure()
    for name, mask, color in ((f"{label(a)} higher", d > 1e-9, color_of(a)),
                              (f"{label(b)} higher", d < -1e-9, color_of(b)),
                              ("tie", d.abs() <= 1e-9, "#adb5bd")):
        sub = m[mask]
        fig.add_trace(go.Scatter(
            x=sub[a], y=sub[b], mode="markers", name=f"{name} ({int(mask.sum())})",
            marker={"color": color, "size": 8, "opacity": 0.75,
                    "line": {"width": 0.5, "color": "white"}},
            text=sub.index, hovertemplate=(f"question %{{text}}<br>{label(a)} = %{{x:.3f}}<br>"
                                           f"{label(b)} = %{{y:.3f}}<extra></extra>")))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": "#868e96",
                             "dash": "dot", "width": 1}, hoverinfo="skip", showlegend=False))
    style(fig, _subtitle(f"Per-question Score_IR at N = {budget}: {label(a)} vs {label(b)}",
                         "one point per question; above the diagonal the second retriever "
                         "does better"),
          f"{label(a)} Score_IR", f"{label(b)} Score_IR", height=520)
    fig.update_layout(legend={"orientation": "h", "y": -0.18, "yanchor": "top", "x": 0})
    fig.update_xaxes(range=[-0.03, 1.03], tickformat=".1f", constrain="domain")
    fig.update_yaxes(range=[-0.03, 1.03], tickformat=".1f", scaleanchor="x", scaleratio=1,
                     constrain="domain")
    return fig


def difference_curves(curves: dict[tuple[str, str], pd.DataFrame]) -> go.Figure:
    """Mean paired difference a − b vs N with bootstrap bands, one line per pair."""
    fig = go.Figure()
    for (a, b), g in curves.items():
        if g.empty:
            continue
        c = color_of(a)
        name = f"{label(a)} − {label(b)}"
        fig.add_trace(go.Scatter(
            x=np.concatenate([g["budget"], g["budget"][::-1]]),
            y=np.concatenate([g["hi"], g["lo"][::-1]]), fill="toself", fillcolor=_rgba(c, 0.13),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(
            x=g["budget"], y=g["mean"], mode="lines+markers", name=name, legendgroup=name,
            line={"color": c, "width": 2.5, "dash": "solid"},
            marker={"color": color_of(b), "size": 8, "line": {"color": c, "width": 2}},
            customdata=np.stack([g["lo"], g["hi"]], axis=1),
            hovertemplate=(f"<b>{name}</b><br>N = %{{x}}<br>mean difference = %{{y:+.3f}}"
                           "<br>95% CI %{customdata[0]:+.3f} to %{customdata[1]:+.3f}"
                           "<extra></extra>")))
    fig.add_hline(y=0, line={"color": "#868e96", "width": 1})
    style(fig, _subtitle("Difference in mean Score_IR across budgets",
                         "paired over questions; bands: 95% bootstrap interval; above 0 the "
                         "first retriever is better"),
          "Token budget N", "Mean difference in Score_IR", legend="Pair")
    fig.update_yaxes(tickformat="+.2f")
    return fig


# --- LLM results ------------------------------------------------------------------------------


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
    style(fig, _subtitle("Judge scores per system",
                         "share of valid judgments; judge errors are counted apart"),
          "% of judged answers", "System", height=max(300, 70 + 48 * len(systems)),
          legend="Judge score")
    fig.update_layout(barmode="stack", legend={"orientation": "h", "y": -0.25, "x": 0,
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
        hovertemplate="%{x}: %{y:.1f}% correct with retrieval<extra></extra>"))
    fig.add_trace(go.Bar(
        x=[label(s) for s in gain["system"]], y=gain["llm_only_correct"] * 100,
        name="LLM only, same questions", marker_color=color_of("llm_only"),
        text=[f"{v:.0%}" for v in gain["llm_only_correct"]], textposition="outside",
        hovertemplate="%{x}: LLM only %{y:.1f}% correct<extra></extra>"))
    style(fig, _subtitle("Share of answers judged fully correct (5): RAG vs LLM only",
                         "on the questions both answers were judged"),
          "Retriever", "% judged correct", legend="")
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
    style(fig, _subtitle(f"Judge score without vs with retrieval ({label(system)})",
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


# --- thresholds -------------------------------------------------------------------------------


def threshold_curves(data: ThresholdData, est: pd.DataFrame, h: float, k: float,
                     cols: int = 3, points: int = 400) -> go.Figure:
    """The paper's Figure 3.2: sorted Score_IR per retriever, bands under h / between / above k
    with their percentages. Shapes and annotations are set in one layout update (adding them
    one by one per subplot is ten times slower), so a slider move redraws fast."""
    rets = data.retrievers
    rows = -(-len(rets) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[label(r) for r in rets],
                        horizontal_spacing=0.06, vertical_spacing=0.22 if rows > 1 else 0.1)
    shares = est.set_index("retriever")
    lo_h, hi_k = min(h, k), k
    shapes, notes = [], list(fig.layout.annotations)
    colors = {"5": "#1b5e20", "2-4": "#8a5a00", "1": "#343a40"}
    for i, r in enumerate(rets):
        row, col = i // cols + 1, i % cols + 1
        idx, vals = downsample_sorted(data.sorted_ir[r], points)
        n = len(data.sorted_ir[r])
        fig.add_trace(go.Scatter(
            x=idx, y=vals, mode="lines", line={"color": color_of(r), "width": 2.5},
            name=label(r), showlegend=False,
            hovertemplate=f"{label(r)}: example %{{x}} of {n}<br>Score_IR %{{y:.3f}}"
                          "<extra></extra>"), row=row, col=col)
        xa, ya = ("x", "y") if i == 0 else (f"x{i + 1}", f"y{i + 1}")
        for y0, y1, cls in ((0, lo_h, "1"), (lo_h, hi_k, "2-4"), (hi_k, 1.0, "5")):
            if y1 > y0:
                shapes.append({"type": "rect", "xref": f"{xa} domain", "yref": ya, "x0": 0,
                               "x1": 1, "y0": y0, "y1": y1, "fillcolor": CLASS_COLORS[cls],
                               "opacity": 0.13, "line": {"width": 0}, "layer": "below"})
        for y, cls in ((k, "5"), (h, "1")):
            shapes.append({"type": "line", "xref": f"{xa} domain", "yref": ya, "x0": 0, "x1": 1,
                           "y0": y, "y1": y, "line": {"color": CLASS_COLORS[cls], "width": 1.5}})
        s = shares.loc[r]
        # the curve rises left to right: the top left and the bottom right are free
        for x, y, ref, yanchor, anchor, cls, v, rule in (
                (0.02, 0.97, f"{ya} domain", "top", "left", "5", s["est_5"],
                 f"above k = {k:.3f}"),
                (0.02, (lo_h + hi_k) / 2, ya, "middle", "left", "2-4", s["est_2_4"],
                 "in between"),
                (0.98, 0.03, f"{ya} domain", "bottom", "right", "1", s["est_1"],
                 f"under h = {h:.3f}")):
            notes.append({"x": x, "y": y, "xref": f"{xa} domain", "yref": ref,
                          "xanchor": anchor, "yanchor": yanchor, "showarrow": False,
                          "align": anchor, "bgcolor": "rgba(255,255,255,0.8)",
                          "text": f"<b>{v:.1%}</b> {rule}: {CLASS_LABELS[cls]}",
                          "font": {"color": colors[cls], "size": 12}})
    fig.update_layout(shapes=shapes, annotations=notes)
    style(fig, _subtitle(f"Sorted Score_IR at N = {data.budget} with the thresholds",
                         f"above k = {k:.3f}: estimated correct · between: risk of "
                         f"hallucination · under h = {h:.3f}: lacks information"),
          height=320 * rows + 120)
    fig.update_layout(margin={"t": 120})
    fig.update_xaxes(title_text="Index of example (sorted)", title_font={"size": 11})
    fig.update_yaxes(title_text="Score_IR", range=[-0.02, 1.02], tickformat=".1f",
                     title_font={"size": 11})
    return fig


def ir_by_judge(data: ThresholdData, h: float, k: float, retriever: str | None = None,
                points: int = 400) -> go.Figure:
    """The paper's Figure 3.1: sorted Score_IR of the answers in each judge group."""
    p = data.pairs
    if retriever:
        p = p[p["retriever"] == retriever]
    fig = go.Figure()
    groups = (("5", [5], "judge 5 (correct)"), ("2-4", [2, 3, 4], "judge 2–4"),
              ("1", [1], "judge 1 (not enough information)"))
    for cls, scores, name in groups:
        v = np.sort(p.loc[p["judge"].isin(scores), "ir"].to_numpy(float))
        if len(v) == 0:
            continue
        idx, vals = downsample_sorted(v, points)
        share = idx / max(len(v) - 1, 1) * 100
        fig.add_trace(go.Scatter(
            x=share, y=vals, mode="lines", name=f"{name}: {len(v):,} answers",
            line={"color": CLASS_COLORS[cls], "width": 2.5},
            hovertemplate=f"{name}<br>%{{x:.0f}}% of the group<br>Score_IR %{{y:.3f}}"
                          "<extra></extra>"))
    fig.add_hline(y=k, line={"color": CLASS_COLORS["5"], "dash": "dash", "width": 1.2},
                  annotation_text=f"k = {k:.3f}", annotation_position="top left")
    fig.add_hline(y=h, line={"color": CLASS_COLORS["1"], "dash": "dash", "width": 1.2},
                  annotation_text=f"h = {h:.3f}", annotation_position="bottom right")
    who = label(retriever) if retriever else "all retrievers"
    style(fig, _subtitle(f"Score_IR at N = {data.budget} grouped by judge score ({who})",
                         "each group sorted by Score_IR; x: position within the group"),
          "Position within the group (% of its answers)", f"Score_IR at N = {data.budget}",
          legend="Judge group")
    fig.update_yaxes(range=[-0.02, 1.02], tickformat=".1f")
    fig.update_xaxes(ticksuffix="%")
    return fig


def objective(data: ThresholdData, h: float, k: float) -> go.Figure:
    """Agreement of each rule with the judge over the threshold, current and fitted values."""
    fig = go.Figure()
    for name, df, cur, fit, cls in (
            ("k: Score_IR > k ⇔ judge 5", data.objective_k, k, data.fit_k, "5"),
            ("h: Score_IR < h ⇔ judge 1", data.objective_h, h, data.fit_h, "1")):
        fig.add_trace(go.Scatter(
            x=df["threshold"], y=df["agreement"] * 100, mode="lines", name=name,
            line={"color": CLASS_COLORS[cls], "width": 2.5, "shape": "hv"},
            hovertemplate="threshold %{x:.3f}<br>agreement %{y:.1f}%<extra></extra>"))
        acc = float(np.interp(cur, df["threshold"], df["agreement"])) * 100
        fig.add_trace(go.Scatter(
            x=[cur], y=[acc], mode="markers", marker={"color": CLASS_COLORS[cls], "size": 12,
                                                      "line": {"color": "white", "width": 2}},
            name=f"current {name[0]} = {cur:.3f}", showlegend=False,
            hovertemplate=f"current {name[0]} = {cur:.3f}<br>agreement {acc:.1f}%<extra></extra>"))
        if fit is not None:
            fig.add_vline(x=fit, line={"color": CLASS_COLORS[cls], "dash": "dot", "width": 1.2},
                          annotation_text=f"fit {name[0]} = {fit:.3f}",
                          annotation_position="top right" if cls == "5" else "bottom right")
    style(fig, _subtitle("Fit objective: agreement of each rule with the judge",
                         "the paper's 'MLE' is this 0–1 accuracy; dots: current sliders, "
                         "dotted lines: the fit"),
          "Threshold on Score_IR", "Agreement with the judge (%)", legend="Rule")
    fig.update_yaxes(ticksuffix="%")
    fig.update_xaxes(range=[0, 1])
    return fig


def confusion(conf: pd.DataFrame) -> go.Figure:
    """Estimated class (rows) × actual judge class (columns): counts and row shares."""
    z = conf.to_numpy()
    row_share = z / np.maximum(z.sum(axis=1, keepdims=True), 1)
    text = [[f"{z[i, j]:,}<br>{row_share[i, j]:.0%} of row" for j in range(3)] for i in range(3)]
    names = [f"{c}<br>{CLASS_LABELS[c].replace(' ', '<br>', 1)}" for c in CLASSES]
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, colorscale="Blues", text=text, texttemplate="%{text}",
        textfont={"size": 13}, showscale=False,
        hovertemplate="estimated %{y}<br>actual %{x}<br>%{z} answers<extra></extra>"))
    acc = np.trace(z) / max(z.sum(), 1)
    style(fig, _subtitle("Estimated vs actual class (all retrievers)",
                         f"{acc:.1%} of the answers are in the estimated class (diagonal)"),
          "Actual: judge score class", "Estimated from Score_IR", height=420)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(side="bottom", tickangle=0)
    return fig


def estimated_vs_actual(cmp: pd.DataFrame) -> go.Figure:
    """Estimated (hatched) vs actual (solid) share of each class, per retriever."""
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"{c} · {CLASS_LABELS[c]}" for c in CLASSES][::-1])
    rets = list(cmp["retriever"])
    for col, c in enumerate(("5", "2_4", "1"), start=1):
        for kind, pattern, op in (("est", "/", 0.55), ("act", "", 1.0)):
            fig.add_trace(go.Bar(
                x=[label(r) for r in rets], y=cmp[f"{kind}_{c}"],
                marker={"color": [color_of(r) for r in rets], "opacity": op,
                        "pattern": {"shape": pattern, "fgcolor": "white"}},
                name="estimated from Score_IR" if kind == "est" else "actual (judge)",
                showlegend=col == 1, legendgroup=kind,
                text=[f"{v:.0f}%" for v in cmp[f"{kind}_{c}"]], textposition="outside",
                textfont={"size": 11}, cliponaxis=False,
                hovertemplate=("%{x}: %{y:.1f}% " + ("estimated" if kind == "est" else "actual")
                               + "<extra></extra>")), row=1, col=col)
    style(fig, _subtitle("Estimated vs actual share of each outcome per retriever",
                         "hatched: estimated from Score_IR with h and k; solid: judge"),
          height=420, legend="")
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": 1.1, "x": 1,
                                               "xanchor": "right", "yanchor": "bottom"},
                      margin={"t": 110})
    fig.update_xaxes(tickangle=0)
    fig.update_yaxes(title_text="% of answers", row=1, col=1)
    fig.update_yaxes(range=[0, 112], ticksuffix="%")
    return fig


def estimated_only(est: pd.DataFrame) -> go.Figure:
    """Estimated class shares per retriever as 100% stacked bars (no judge needed)."""
    fig = go.Figure()
    for c, key in (("5", "est_5"), ("2-4", "est_2_4"), ("1", "est_1")):
        fig.add_trace(go.Bar(
            y=[label(r) for r in est["retriever"]], x=est[key] * 100, orientation="h",
            name=f"{c} · {CLASS_LABELS[c]}", marker_color=CLASS_COLORS[c],
            text=[f"{v:.0%}" for v in est[key]], textposition="inside",
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>"))
    style(fig, "Estimated outcome shares from Score_IR alone", "% of questions", "Retriever",
          height=max(280, 80 + 45 * len(est)), legend="Estimated class")
    fig.update_layout(barmode="stack", legend={"traceorder": "normal"})
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 100], ticksuffix="%")
    return fig


# --- dataset statistics ----------------------------------------------------------------------


def parts_per_question(stats: pd.DataFrame) -> go.Figure:
    """How many relevant parts the questions have."""
    counts = stats["n_parts"].value_counts().sort_index()
    fig = go.Figure(go.Bar(
        x=counts.index.astype(str), y=counts.to_numpy(), marker_color="#3b5bdb",
        text=[f"{v:,}" for v in counts], textposition="outside",
        hovertemplate="%{x} parts: %{y:,} questions<extra></extra>"))
    style(fig, "Relevant parts per question", "Relevant parts", "Questions", height=340)
    return fig


def part_lengths(parts: pd.Series) -> go.Figure:
    """Distribution of relevant-part lengths in characters."""
    lengths = [len(p) for ps in parts for p in ps]
    fig = go.Figure(go.Histogram(
        x=lengths, nbinsx=40, marker_color="#3b5bdb",
        hovertemplate="%{x} characters: %{y:,} parts<extra></extra>"))
    med = float(np.median(lengths)) if lengths else 0.0
    style(fig, _subtitle("Relevant-part length", f"median {med:,.0f} characters over "
                         f"{len(lengths):,} parts"), "Characters", "Parts", height=340)
    return fig


def metadata_counts(examples: pd.DataFrame, column: str) -> go.Figure:
    """Questions per value of a metadata column (e.g. type or level)."""
    counts = examples[column].astype(str).value_counts()
    fig = go.Figure(go.Bar(
        x=counts.index, y=counts.to_numpy(), marker_color="#748ffc",
        text=[f"{v:,} ({v / counts.sum():.0%})" for v in counts], textposition="outside",
        hovertemplate="%{x}: %{y:,} questions<extra></extra>"))
    style(fig, f"Questions by {column}", column.capitalize(), "Questions", height=340)
    fig.update_yaxes(range=[0, counts.max() * 1.18])
    return fig


def estimator_bars(summary: pd.DataFrame) -> go.Figure:
    """Cross-validated share error of the h/k rule and the logistic estimators (lower is better)."""
    fig = go.Figure()
    palette = ["#868e96", "#4c6ef5", "#12b886", "#fab005"]
    for i, (method, g) in enumerate(summary.groupby("method", sort=False)):
        fig.add_bar(x=g["scheme"], y=g["mae"], name=method, marker_color=palette[i % 4],
                    text=[f"{v:.1f}" for v in g["mae"]], textposition="outside")
    fig.update_layout(barmode="group")
    return style(fig, _subtitle("Predicting the per-retriever shares: which estimator is closer?",
                                "mean absolute error of the estimated shares (1 / 2–4 / 5) on "
                                "held-out data; lower is better"),
                 x="validation", y="share error (percentage points)", legend="estimator")


# --- does retrieval predict answer quality? ---------------------------------------------------

EVIDENCE_SIDES = {"correct": ("judged 5 (correct)", "#2b8a3e"),
                  "refusal": ("judged 1 (lacks information)", "#e8590c")}


def roc(evidence: dict) -> go.Figure:
    """ROC curves of Score_IR for judge = 5 and (low Score_IR) for judge = 1, with the AUCs
    and their bootstrap CIs (`ragdash.calibration.predictive.predictiveness`)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance: AUC 0.5",
                             line={"color": "#adb5bd", "dash": "dot"}, hoverinfo="skip"))
    for side, (text, color) in EVIDENCE_SIDES.items():
        s = evidence.get(side) or {}
        if not s.get("roc"):
            continue
        ci = s.get("ci")
        name = f"{text}: AUC {s['auc']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
        fig.add_trace(go.Scatter(x=s["roc"]["fpr"], y=s["roc"]["tpr"], mode="lines",
                                 name=name, line={"color": color, "width": 3}))
    style(fig, _subtitle("ROC of Score_IR", f"{evidence.get('n', 0):,} answers, "
                         f"{evidence.get('questions', 0):,} questions; 95 % CI by bootstrap"),
          "false positive rate", "true positive rate", height=460)
    fig.update_layout(legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1.02], scaleanchor="x", scaleratio=1)
    return fig


def reliability(evidence: dict) -> go.Figure:
    """Share of answers judged 5 and judged 1 per Score_IR bin, with Wilson 95 % intervals and
    the count of answers in each bin under its name (a reliability diagram)."""
    fig = go.Figure()
    names: list[str] = []
    for side, (text, color) in EVIDENCE_SIDES.items():
        rows = (evidence.get(side) or {}).get("reliability") or []
        names = [f"{r['bin']}<br>n={r['n']}" for r in rows]
        share = [None if r["share"] is None else r["share"] * 100 for r in rows]
        lo = [0 if r["ci"] is None else (r["share"] - r["ci"][0]) * 100 for r in rows]
        hi = [0 if r["ci"] is None else (r["ci"][1] - r["share"]) * 100 for r in rows]
        fig.add_trace(go.Bar(
            x=names, y=share, marker_color=color, name=text,
            error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo,
                     "color": "#495057", "thickness": 1},
            hovertemplate="Score_IR %{x}: %{y:.1f}%<extra>" + text + "</extra>"))
    style(fig, _subtitle("Judge outcome per Score_IR bin", "share of the answers in each bin, "
                         "95 % Wilson interval; n = answers"), "Score_IR at N",
          "% of the answers", height=460)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_yaxes(range=[0, 105])
    fig.update_xaxes(tickangle=0)
    return fig
