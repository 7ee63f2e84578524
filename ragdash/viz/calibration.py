"""Figures of the calibration (§3.3; plain plotly, no streamlit): the threshold panel (sorted
Score_IR per retriever with the h / k bands, the paper's Figure 3.2; Score_IR per judge group,
Figure 3.1; the fit objective, the confusion matrix, estimated vs actual shares), which take
`ragdash.analysis.threshold_panel`' ThresholdData and `panel()` numbers; then whether retrieval
predicts answer quality (ROC and reliability, `ragdash.calibration.predictive`) and the
cross-validated share error of the h/k rule vs the logistic estimators
(`ragdash.analysis.threshold_panel.estimator_summary`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ragdash.analysis.curves import downsample_sorted
from ragdash.analysis.threshold_panel import ThresholdData
from ragdash.constants import CLASS_LABELS, CLASSES
from ragdash.viz.colors import CLASS_COLORS, color_of, label
from ragdash.viz.style import style, subtitle


def threshold_curves(data: ThresholdData, est: pd.DataFrame, h: float, k: float,
                     cols: int = 3, points: int = 400,
                     reference: tuple[float, float, str] | None = None) -> go.Figure:
    """The paper's Figure 3.2: sorted Score_IR per retriever, bands under h / between / above k
    with their percentages. Shapes and annotations are set in one layout update (adding them
    one by one per subplot is ten times slower), so a slider move redraws fast.

    Shapes and notes carry a `name` ("h", "k", "band:1", "band:2-4", "band:5", "share:…",
    "ref:h", "ref:k") so a client can move the lines and bands while h or k is dragged
    (`ragdash.ui.threshold_drag`); all three bands are always present (possibly empty).
    `reference` = (h, k, label) adds faint dashed lines at those values, e.g. the fit."""
    rets = data.retrievers
    rows = -(-len(rets) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[
        f"{label(r)} · {len(data.sorted_ir[r]):,} answers" for r in rets],
                        horizontal_spacing=0.06 if reference is None else 0.09,
                        vertical_spacing=0.22 if rows > 1 else 0.1)
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
            shapes.append({"type": "rect", "xref": f"{xa} domain", "yref": ya, "x0": 0,
                           "x1": 1, "y0": y0, "y1": max(y0, y1), "name": f"band:{cls}",
                           "fillcolor": CLASS_COLORS[cls], "opacity": 0.13,
                           "line": {"width": 0}, "layer": "below"})
        if reference is not None:
            for y, name in ((reference[0], "h"), (reference[1], "k")):
                shapes.append({"type": "line", "xref": f"{xa} domain", "yref": ya, "x0": 0,
                               "x1": 1, "y0": y, "y1": y, "name": f"ref:{name}",
                               "line": {"color": "#6c757d", "width": 1, "dash": "dash"},
                               "opacity": 0.6})
                notes.append({"x": 1, "y": y, "xref": f"{xa} domain", "yref": ya,
                              "xanchor": "left", "yanchor": "middle", "showarrow": False,
                              "xshift": 2, "text": reference[2], "name": f"ref:{name}",
                              "font": {"color": "#6c757d", "size": 10}})
        for y, cls, name in ((k, "5", "k"), (h, "1", "h")):
            shapes.append({"type": "line", "xref": f"{xa} domain", "yref": ya, "x0": 0, "x1": 1,
                           "y0": y, "y1": y, "name": name,
                           "line": {"color": CLASS_COLORS[cls], "width": 1.5}})
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
                          "name": f"share:{cls}",
                          "xanchor": anchor, "yanchor": yanchor, "showarrow": False,
                          "align": anchor, "bgcolor": "rgba(255,255,255,0.8)",
                          "text": (f"<b>no estimate</b> {rule}" if pd.isna(v) else
                                   f"<b>{v:.1%}</b> {rule}: {CLASS_LABELS[cls]}"),
                          "font": {"color": colors[cls], "size": 12}})
    fig.update_layout(shapes=shapes, annotations=notes)
    style(fig, subtitle(f"Sorted Score_IR at N = {data.budget} with the thresholds",
                        f"above k = {k:.3f}: estimated correct · between: risk of "
                        f"hallucination · under h = {h:.3f}: lacks information"
                        + ("" if reference is None else f" · dashed: {reference[2]}")),
          height=320 * rows + 120)
    fig.update_layout(margin={"t": 120} if reference is None else {"t": 120, "r": 45})
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
    style(fig, subtitle(f"Score_IR at N = {data.budget} grouped by judge score ({who})",
                        "each group sorted by Score_IR; x: position within the group"),
          "Position within the group (% of its answers)", f"Score_IR at N = {data.budget}",
          height=540, legend="Judge group")
    # the legend under the x-axis title: beside the plot it takes half a narrow column
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
                      margin={"b": 150})
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
    style(fig, subtitle("Fit objective: agreement of each rule with the judge",
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
        hovertemplate="estimated %{y}<br>judged %{x}<br>%{z} answers<extra></extra>"))
    acc = np.trace(z) / max(z.sum(), 1)
    style(fig, subtitle("Estimated vs judged class (all retrievers)",
                        f"{acc:.1%} of the answers are in the estimated class (diagonal)"),
          "Judged: judge score class", "Estimated from Score_IR", height=420)
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
                name="estimated from Score_IR" if kind == "est" else "judged",
                showlegend=col == 1, legendgroup=kind,
                text=["" if pd.isna(v) else f"{v:.0f}%" for v in cmp[f"{kind}_{c}"]],
                textposition="outside",
                textfont={"size": 11}, cliponaxis=False,
                hovertemplate=("%{x}: %{y:.1f}% " + ("estimated" if kind == "est" else "judged")
                               + "<extra></extra>")), row=1, col=col)
    style(fig, subtitle("Estimated vs judged share of each outcome per retriever",
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


# --- the estimators compared ---------------------------------------------------------------


def estimator_bars(summary: pd.DataFrame) -> go.Figure:
    """Cross-validated share error of the h/k rule and the logistic estimators (lower is better)."""
    fig = go.Figure()
    palette = ["#868e96", "#4c6ef5", "#12b886", "#fab005"]
    for i, (method, g) in enumerate(summary.groupby("method", sort=False)):
        fig.add_bar(x=g["scheme"], y=g["mae"], name=method, marker_color=palette[i % 4],
                    text=[f"{v:.1f}" for v in g["mae"]], textposition="outside")
    fig.update_layout(barmode="group")
    return style(fig, subtitle("Predicting the per-retriever shares: which estimator is closer?",
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
    style(fig, subtitle("ROC of Score_IR", f"{evidence.get('n', 0):,} answers, "
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
    style(fig, subtitle("Judge outcome per Score_IR bin", "share of the answers in each bin, "
                        "95 % Wilson interval; n = answers"), "Score_IR at N",
          "% of the answers", height=460)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_yaxes(range=[0, 105])
    fig.update_xaxes(tickangle=0)
    return fig
