"""House style of every figure (plain plotly, no streamlit): white template, a title with an
optional grey subtitle line, axis titles, legend title."""

from __future__ import annotations

import plotly.graph_objects as go

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


def rgba(hex_color: str, alpha: float) -> str:
    """CSS rgba() of a #rrggbb colour with opacity `alpha`."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def subtitle(title: str, sub: str) -> str:
    """A title with a smaller grey second line."""
    return f"{title}<br><sup style='color:#666'>{sub}</sup>"
