"""The scatter of two answer signals (`ragdash.analysis.signals.answer_signals`), one point per
answer, coloured by whether the truth calls it correct (plain plotly, no streamlit)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ragdash.analysis.signals import signal_label
from ragdash.viz.colors import SCORE_COLORS, label
from ragdash.viz.style import style, subtitle

JITTER = 0.015
"""Spread of the points of a signal with few distinct values (the judge, exact match), in the
signal's units, so that equal values do not hide one another."""
FEW_VALUES = 12


def jittered(values: pd.Series, seed: int = 0) -> np.ndarray:
    """`values` as floats, spread by up to ±JITTER when they take at most FEW_VALUES values
    (deterministic: the same points every time)."""
    x = values.astype(float).to_numpy()
    if values.nunique() > FEW_VALUES:
        return x
    return x + np.random.default_rng(seed).uniform(-JITTER, JITTER, len(x))


def signal_scatter(frame: pd.DataFrame, x: str, y: str, truth: str, correct_at: float) -> go.Figure:
    """Answers with both signals and a truth, at (x, y), green when correct by the truth (at
    least `correct_at`), red when wrong; `customdata` holds (qid, system) for a clicked point,
    hover names the question when `frame` has a `question` column."""
    sub = frame.dropna(subset=[x, y, "truth"])
    short_x, short_y = signal_label(x), signal_label(y)
    long_x, long_y = signal_label(x, detail=True), signal_label(y, detail=True)
    sub = sub.assign(_x=jittered(sub[x], 1), _y=jittered(sub[y], 2))
    fig = go.Figure()
    for ok, name, colour, symbol in ((True, "correct", SCORE_COLORS[5], "circle"),
                                     (False, "wrong", SCORE_COLORS[4], "x")):
        part = sub[(sub["truth"] >= correct_at) == ok]
        question = (part["question"] if "question" in part else part["qid"]).astype(str) \
            .map(lambda t: html.escape(t[:80]))  # plotly reads hover text as HTML
        fig.add_trace(go.Scatter(
            x=part["_x"], y=part["_y"], mode="markers", name=name,
            marker={"color": colour, "size": 9, "symbol": symbol, "opacity": 0.75},
            customdata=np.stack([part["qid"].astype(str), part["system"].astype(str),
                                 part["system"].map(label), question,
                                 part[x].astype(float), part[y].astype(float)], axis=1)
            if len(part) else None,
            hovertemplate=(f"%{{customdata[3]}}<br>%{{customdata[2]}} · {name}<br>{short_x} "
                           f"%{{customdata[4]:.2f}} · {short_y} %{{customdata[5]:.2f}}"
                           "<br><i>click to open in the question browser</i><extra></extra>")))
    style(fig, subtitle(f"{long_y} against {long_x}",
                        f"one point per answer ({len(sub):,} with both signals); colour: "
                        f"correct or wrong by the truth ({truth}); click a point to open it"),
          long_x, long_y, height=460, legend="Truth")
    return fig
