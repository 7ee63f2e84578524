"""The share correct per system by each estimator, with its interval (plain plotly, no
streamlit): labels only, the judge only, and prediction-powered inference (PPI) with the judge's
or retrieval's predictions, from `ragdash.labels.findings`'s ppi section."""

from __future__ import annotations

import plotly.graph_objects as go

from ragdash.labels.tables import ESTIMATOR_NAMES, scope_label
from ragdash.viz.style import style, subtitle

ESTIMATOR_STYLE = {"labels_only": ("#495057", "circle"), "judge_only": ("#e8590c", "x"),
                   "ppi_judge": ("#1971c2", "diamond"), "ppi_retrieval": ("#2f9e44", "square")}


def intervals(ppi: dict, level: float = 0.95) -> go.Figure:
    """One row per system (and pooled), each estimator a dot with its interval."""
    scopes = list(ppi)
    fig = go.Figure()
    for i, (key, name) in enumerate(ESTIMATOR_NAMES.items()):
        color, symbol = ESTIMATOR_STYLE[key]
        rows = [(s, ppi[s][key]) for s in scopes if (ppi[s].get(key) or {}).get("ci")]
        if not rows:
            continue
        offset = (i - 1.5) * 0.17  # the four estimators of a system side by side
        fig.add_trace(go.Scatter(
            x=[e["pct"] for _, e in rows], y=[scopes.index(s) + offset for s, _ in rows],
            mode="markers", name=name, marker={"color": color, "symbol": symbol, "size": 10},
            error_x={"type": "data", "symmetric": False, "thickness": 2, "width": 0,
                     "array": [e["ci"][1] - e["pct"] for _, e in rows],
                     "arrayminus": [e["pct"] - e["ci"][0] for _, e in rows]},
            customdata=[[scope_label(s), e["ci"][0], e["ci"][1], e.get("n_labelled", 0)]
                        for s, e in rows],
            hovertemplate=(f"%{{customdata[0]}} · {name}: %{{x:.1f}}% "
                           "[%{customdata[1]:.1f}, %{customdata[2]:.1f}]"
                           "<br>%{customdata[3]} labels<extra></extra>")))
    style(fig, subtitle("Share of answers correct, by estimator",
                        f"dots: estimate; bars: {level:.0%} interval; PPI corrects the judge "
                        "(or retrieval) with the labels"),
          x="% of answers correct", height=120 + 62 * len(scopes), legend="")
    ticks = [scope_label(s) for s in scopes]
    fig.update_yaxes(tickvals=list(range(len(scopes))), autorange="reversed", ticktext=ticks,
                     automargin=True)
    fig.update_xaxes(range=[0, 100], ticksuffix="%")
    # the left margin holds the longest name whole ("all systems" was cut to "ll systems")
    fig.update_layout(legend={"orientation": "h", "y": 1.0, "x": 1, "xanchor": "right",
                              "yanchor": "bottom"},
                      margin={"t": 100, "l": 24 + 8 * max(map(len, ticks), default=0)})
    return fig
