"""The house style (`ragdash.viz.style`): a figure is the same whether the house template is
plotly's default (the dashboard) or set by `style` (a library user's process), and the house
font, margins and title placement reach the figure."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from ragdash.viz.style import FONT, HOUSE, house_template, style, use_house_template


@pytest.fixture
def default_template():
    """Restore plotly's default template after the test."""
    before = pio.templates.default
    yield
    pio.templates.default = before


def _figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="BM25"))
    return style(fig, "Mean Score_IR", "Token budget N", "Score_IR", height=380,
                 legend="Retriever")


def test_the_figure_is_the_same_with_the_house_template_as_default_or_set(default_template):
    pio.templates.default = "plotly"  # a library user's process
    library = json.loads(_figure().to_json())
    use_house_template()
    house = json.loads(_figure().to_json())
    assert house == library
    template = house["layout"]["template"]["layout"]
    assert template["font"]["family"] == FONT
    assert (template["title"]["x"], template["title"]["xanchor"]) == (0, "left")
    assert template["margin"] == {"l": 60, "r": 20, "t": 70, "b": 55}
    assert house["layout"]["title"]["text"] == "Mean Score_IR"
    assert house["layout"]["height"] == 380
    assert house["layout"]["legend"]["title"]["text"] == "Retriever"
    assert house["layout"]["xaxis"]["title"]["text"] == "Token budget N"


def test_style_overrides_a_legend_title_set_before(default_template):
    """plotly express titles the legend with its column; `style` gives the house's ('' when
    none is given), as it did before the template moved."""
    use_house_template()
    fig = go.Figure(go.Scatter(x=[1], y=[1])).update_layout(legend_title_text="system")
    assert style(fig, "t").layout.legend.title.text == ""
    assert pio.templates.default == HOUSE


def test_house_template_is_the_default_inside_only(default_template):
    """A report made in a library user's process: the house template is plotly's default while
    its figures are made (the same figure as `style` setting it), the user's own again after,
    also when making them fails."""
    pio.templates.default = "plotly"
    library = json.loads(_figure().to_json())
    with house_template():
        assert pio.templates.default == HOUSE
        assert json.loads(_figure().to_json()) == library
    assert pio.templates.default == "plotly"
    with pytest.raises(RuntimeError), house_template():
        raise RuntimeError("a figure failed")
    assert pio.templates.default == "plotly"
