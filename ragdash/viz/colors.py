"""The one colour mapping of the dashboard and the report: one colour and one marker symbol per
retriever (and a colour per judge score, class and relevant part) across every chart."""

from __future__ import annotations

from collections.abc import Iterable

from ragdash.constants import LLM_ONLY, label

__all__ = ["CLASS_COLORS", "PART_COLORS", "RETRIEVER_COLORS", "RETRIEVER_SYMBOLS", "SCORE_COLORS",
           "color_map", "color_of", "label", "symbol_of"]

RETRIEVER_COLORS: dict[str, str] = {
    LLM_ONLY: "#868e96",  # grey: no retrieval
    "bm25": "#1c7ed6",  # blue
    "sim": "#f76707",  # orange
    "mmr": "#0ca678",  # teal
    "reo": "#ae3ec9",  # purple
    "mlq": "#d6336c",  # pink
}
EXTRA = ("#fab005", "#5c940d", "#364fc7", "#c2255c", "#087f5b", "#e8590c", "#495057")
# one open marker symbol per retriever, so curves that coincide (all at 1.0 once every retriever
# saturates) still show each one's marks
RETRIEVER_SYMBOLS: dict[str, str] = {
    LLM_ONLY: "x-thin-open",
    "bm25": "circle-open",
    "sim": "diamond-open",
    "mmr": "square-open",
    "reo": "triangle-up-open",
    "mlq": "star-open",
}
EXTRA_SYMBOLS = ("hexagon-open", "pentagon-open", "cross-open", "triangle-down-open",
                 "hourglass-open", "star-triangle-up-open", "circle-x-open")

SCORE_COLORS: dict[int, str] = {
    1: "#adb5bd",  # not enough information
    2: "#ffa94d",  # partly correct with errors
    3: "#ffe066",  # partly correct, incomplete
    4: "#e03131",  # incorrect
    5: "#2f9e44",  # correct
}
CLASS_COLORS: dict[str, str] = {"1": "#868e96", "2-4": "#f59f00", "5": "#2f9e44"}
PART_COLORS = ("#ffd43b", "#74c0fc", "#8ce99a", "#ffa8a8", "#d0bfff", "#ffc078", "#63e6be",
               "#faa2c1")


def color_of(name: str) -> str:
    """The colour of a retriever or system; unknown names get a stable extra colour."""
    if name in RETRIEVER_COLORS:
        return RETRIEVER_COLORS[name]
    return EXTRA[sum(map(ord, str(name))) % len(EXTRA)]


def symbol_of(name: str) -> str:
    """The marker symbol of a retriever or system; unknown names get a stable extra symbol."""
    if name in RETRIEVER_SYMBOLS:
        return RETRIEVER_SYMBOLS[name]
    return EXTRA_SYMBOLS[sum(map(ord, str(name))) % len(EXTRA_SYMBOLS)]


def color_map(names: Iterable[str]) -> dict[str, str]:
    """{name: colour} for plotly's `color_discrete_map`."""
    return {str(n): color_of(str(n)) for n in names}
