"""House style of every figure (plain plotly, no streamlit): the house template (plotly_white
with the house font, margins and title placement), a title with an optional grey subtitle line,
axis titles, legend title."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import plotly.graph_objects as go
import plotly.io as pio

FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
HOUSE = "ragdash"
"""The house template's name in plotly's registry (`pio.templates`)."""

pio.templates[HOUSE] = go.layout.Template(
    pio.templates["plotly_white"],
    layout={"font": {"family": FONT, "size": 13},
            "title": {"x": 0.0, "xanchor": "left", "font": {"size": 16}},
            "margin": {"l": 60, "r": 20, "t": 70, "b": 55},
            "hoverlabel": {"font": {"family": FONT}}})


def use_house_template() -> None:
    """Make the house template plotly's default in this process, as the dashboard does: a new
    figure then takes it at creation unvalidated, where `style` setting it and the house layout
    took 25-35 ms a figure (a third of a Thresholds rerun's server time). A library user's
    process keeps its own default; `style` sets the template there. Set only when it is not
    already (the setter builds the template: ~6 ms on every rerun otherwise)."""
    if pio.templates.default != HOUSE:
        pio.templates.default = HOUSE


@contextlib.contextmanager
def house_template() -> Iterator[None]:
    """The house template as plotly's default for the figures made inside, then the process's
    own again: a report built in a library user's process gets its figures as the dashboard
    does (`style` setting the template on each made it 2.5 times slower)."""
    before = pio.templates.default
    pio.templates.default = HOUSE
    try:
        yield
    finally:
        pio.templates.default = before


def style(fig: go.Figure, title: str, x: str | None = None, y: str | None = None,
          height: int = 420, legend: str | None = None) -> go.Figure:
    """House style: the house template, title with optional subtitle line, axis titles,
    legend title."""
    if pio.templates.default != HOUSE:
        fig.update_layout(template=HOUSE)
    fig.update_layout(height=height, title_text=title, legend_title_text=legend or "")
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
