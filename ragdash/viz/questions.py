"""Figures of a dataset's questions (plain plotly, no streamlit): relevant parts per question,
part lengths, questions per metadata value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragdash.viz.style import style, subtitle


def parts_per_question(stats: pd.DataFrame) -> go.Figure:
    """How many relevant parts the questions have."""
    counts = stats["n_parts"].value_counts().sort_index()
    fig = go.Figure(go.Bar(
        x=counts.index.astype(str), y=counts.to_numpy(), marker_color="#3b5bdb",
        text=[f"{v:,}" for v in counts], textposition="outside",
        hovertemplate="%{x} parts: %{y:,} questions<extra></extra>"))
    style(fig, "Relevant parts per question", "Relevant parts", "Questions", height=340)
    return fig


def lengths_histogram(lengths: list[int], what: str, unit: str = "parts") -> go.Figure:
    """Distribution of text lengths in characters (relevant parts, chunks)."""
    fig = go.Figure(go.Histogram(
        x=lengths, nbinsx=40, marker_color="#3b5bdb",
        hovertemplate=f"%{{x}} characters: %{{y:,}} {unit}<extra></extra>"))
    med = float(np.median(lengths)) if lengths else 0.0
    style(fig, subtitle(what, f"median {med:,.0f} characters over {len(lengths):,} {unit}"),
          "Characters", unit.capitalize(), height=340)
    return fig


def part_lengths(parts: pd.Series) -> go.Figure:
    """Distribution of relevant-part lengths in characters."""
    return lengths_histogram([len(p) for ps in parts for p in ps], "Relevant-part length")


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
