"""The signal board's orders as the Compare retrievers and Compare runs pages show them: each
signal's order of the systems, best first, with its Kendall's tau against the reference's and the
pairs it reverses (`ragdash.analysis.system_means.SignalBoard` holds the numbers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from ragdash.analysis.signals import cost_text, signal_label
from ragdash.analysis.system_means import (
    DASH,
    SignalBoard,
    order_text,
    pairs_text,
    tau_cell,
    tau_of,
)
from ragdash.constants import label


def orders_table(board: SignalBoard, name: Callable[[str], str] = label,
                 cost: Mapping[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """A row per signal, the reference first: `signal`, `order` (systems named by `name`, best
    first, DASH when none), `tau` ("reference" on its row), `pairs` (those reversed, or "none
    reversed") and, with `cost` (`RunView.signal_costs`), `cost` (LLM calls and tokens). Empty
    when the board has no agreement to show."""
    if board.agreement.empty:
        return pd.DataFrame()

    def order(signal: str) -> str:
        m = board.means[board.means["signal"] == signal]
        return order_text(pd.Series(m["mean"].to_numpy(), index=m["system"]), name) or DASH

    def spent(signal: str) -> dict[str, str]:
        return {} if cost is None else {
            "cost": cost_text(*cost.get(signal, (float("nan"), float("nan"))))}

    rows = [{"signal": f"{signal_label(board.reference)} (reference)",
             **spent(board.reference), "order": order(board.reference), "tau": "reference",
             "pairs": ""}]
    rows += [{"signal": signal_label(r["signal"]), **spent(r["signal"]),
              "order": r["order"] or DASH, "tau": tau_cell(r),
              "pairs": pairs_text(tau_of(r), r["systems"], with_tau=False) or "none reversed"}
             for r in board.agreement.to_dict("records")]
    return pd.DataFrame(rows)
