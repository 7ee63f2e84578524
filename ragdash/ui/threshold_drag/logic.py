"""What a drag of h or k on the threshold chart means (no streamlit): the component's event
{"which": "h" | "k", "value": float, "seq": int} turned into the new (h, k) of the rule of
El Yagouby et al. (2024, §3.3): Score_IR > k → correct, Score_IR < h → lacks information.
The value is clamped to [0, 1], rounded to the sliders' step (0.001) and kept on its side of the
other threshold (k stops at h, h stops at k), so a drag never makes the bands overlap."""

from __future__ import annotations

import math
from typing import Any

STEP_DIGITS = 3  # the sliders' step is 0.001


def apply_drag(event: Any, h: float, k: float) -> tuple[float, float] | None:
    """The (h, k) after `event`, or None when the event is not a valid drag (no event yet, a
    malformed or non-finite value, an unknown line)."""
    if not isinstance(event, dict) or event.get("which") not in ("h", "k"):
        return None
    value = event.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not math.isfinite(value):
        return None
    v = round(min(1.0, max(0.0, float(value))), STEP_DIGITS)
    h, k = float(h), float(k)
    if event["which"] == "k":
        return round(h, STEP_DIGITS), max(v, round(h, STEP_DIGITS))
    return min(v, round(k, STEP_DIGITS)), round(k, STEP_DIGITS)
