"""Figures of the controlled contexts (plain plotly, no streamlit; `ragdash.stress.summary`'s
frames): accuracy against the noise ratio (RGB's noise robustness, Chen et al. AAAI 2024),
against where the evidence stands, and against Score_IR, the controlled contexts beside the
run's own answers with the run's h and k marked."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ragdash.viz.style import style, subtitle

CONTROLLED, OBSERVED, REFUSED = "#1c7ed6", "#868e96", "#e8590c"


def _errors(frame: pd.DataFrame) -> dict:
    """Wilson interval bars around `accuracy` (percent)."""
    return {"type": "data", "symmetric": False,
            "array": (frame["hi"] - frame["accuracy"]) * 100,
            "arrayminus": (frame["accuracy"] - frame["lo"]) * 100}


def noise_curve(by_ratio: pd.DataFrame) -> go.Figure:
    """Accuracy (95 % Wilson interval) and the share refused per noise ratio."""
    x = by_ratio.index.to_numpy() * 100
    fig = go.Figure([
        go.Scatter(x=x, y=by_ratio["accuracy"] * 100, mode="lines+markers", name="correct",
                   line={"color": CONTROLLED, "width": 3}, error_y=_errors(by_ratio),
                   customdata=by_ratio["n"],
                   hovertemplate="noise %{x:.0f}%<br>correct %{y:.1f}% of %{customdata}"
                                 "<extra></extra>"),
        go.Scatter(x=x, y=by_ratio["refused"] * 100, mode="lines+markers", name="refused",
                   line={"color": REFUSED, "dash": "dot"},
                   hovertemplate="noise %{x:.0f}%<br>refused %{y:.1f}%<extra></extra>")])
    style(fig, subtitle("Accuracy as noise replaces evidence",
                        "the same questions at every ratio; at 100 % the context holds no "
                        "evidence, so refusing is right"),
          "Noise chunks in the context (%)", "% of answers", legend="Answers")
    fig.update_xaxes(range=[-5, 105], ticksuffix="%")
    fig.update_yaxes(range=[0, 105], ticksuffix="%")
    return fig


def position_bars(by_position: pd.DataFrame, ratio: float) -> go.Figure:
    """Accuracy (95 % Wilson interval) with the evidence first, in the middle and last."""
    fig = go.Figure(go.Bar(
        x=list(by_position.index), y=by_position["accuracy"] * 100, marker_color=CONTROLLED,
        error_y=_errors(by_position), customdata=by_position["n"],
        text=[f"{v:.0%}" for v in by_position["accuracy"]], textposition="inside",
        hovertemplate="evidence %{x}<br>correct %{y:.1f}% of %{customdata}<extra></extra>"))
    style(fig, subtitle("Where the evidence stands",
                        f"{ratio:.0%} noise; a drop in the middle is \"lost in the middle\""),
          "Relevant chunks placed", "% correct", height=380)
    fig.update_yaxes(range=[0, 105], ticksuffix="%")
    return fig


def dose_response(controlled: pd.DataFrame, observed: pd.DataFrame | None,
                  h: float | None, k: float | None) -> go.Figure:
    """Accuracy per Score_IR bin of the controlled contexts and, beside it, of the run's own
    answers (`observed`); the run's thresholds h and k as vertical lines."""
    fig = go.Figure()
    for frame, name, color, dash in ((controlled, "controlled contexts", CONTROLLED, "solid"),
                                     (observed, "the run's answers (observed)", OBSERVED,
                                      "dash")):
        if frame is None or frame.empty:
            continue
        fig.add_trace(go.Scatter(
            x=frame["mid"], y=frame["accuracy"] * 100, mode="lines+markers", name=name,
            line={"color": color, "dash": dash, "width": 3}, error_y=_errors(frame),
            customdata=frame["n"],
            hovertemplate="Score_IR ≈ %{x:.1f}<br>correct %{y:.1f}% of %{customdata}"
                          "<extra></extra>"))
    for value, name in ((h, "h"), (k, "k")):
        if value is not None:
            fig.add_vline(x=value, line={"color": "#495057", "dash": "dot"},
                          annotation_text=f"{name} = {value:.2f}", annotation_position="top")
    style(fig, subtitle("Does more evidence cause correct answers?",
                        "accuracy by the context's Score_IR at the generation budget; the "
                        "controlled curve is measured by intervention"),
          "Score_IR of the context (bins of 0.2)", "% correct", legend="Contexts")
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 105], ticksuffix="%")
    return fig
