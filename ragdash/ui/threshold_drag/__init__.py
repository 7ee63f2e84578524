"""The sorted Score_IR chart (the paper's Figure 3.2, §3.3) with h and k dragged by the mouse: a
Streamlit custom component (v1, a static folder; no JS build step). The figure is built by
`ragdash.viz.calibration.threshold_curves`; the browser side (`frontend/`) draws it with the
plotly.min.js that the plotly package ships, moves the lines while they are dragged and sends
the released value back; `logic.apply_drag` turns it into (h, k), which are written to the
sliders' session state (so sliders, lines and the URL stay one value)."""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import plotly
import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from ragdash.ui.threshold_drag.logic import apply_drag
from ragdash.ui.widgets import PLOT_CONFIG, chart, md

FRONTEND = Path(__file__).with_name("frontend")
# the axes stay fixed (a zoom would move the lines away from the values they show)
CONFIG = {**PLOT_CONFIG, "doubleClick": False, "modeBarButtonsToRemove": [
    *PLOT_CONFIG["modeBarButtonsToRemove"], "zoom2d", "pan2d", "zoomIn2d", "zoomOut2d",
    "autoScale2d", "resetScale2d"]}
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragdash"


def _assemble(base: Path, sources: list[Path], digest: str) -> Path:
    """`base/threshold_drag-<digest>` holding copies of `sources`, built in a temporary folder
    and renamed into place, so a reader never sees it half written."""
    target = base / f"threshold_drag-{digest}"
    if all((target / p.name).is_file() for p in sources):
        return target
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".threshold_drag-", dir=base))
    try:
        for p in sources:
            shutil.copyfile(p, tmp / p.name)
        tmp.chmod(0o755)
        os.replace(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not all((target / p.name).is_file() for p in sources):  # not built by a neighbour
            raise
    return target


@functools.cache
def served_dir() -> Path:
    """The folder Streamlit serves the component from: the frontend files and plotly.min.js
    side by side (Streamlit serves a v1 component from one folder and refuses links out of it,
    so the library is copied once into the user's cache, or a private temporary folder)."""
    if not PLOTLY_JS.is_file():
        raise FileNotFoundError(f"plotly.min.js not found at {PLOTLY_JS}")
    sources = [*sorted(p for p in FRONTEND.iterdir() if p.is_file()), PLOTLY_JS]
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sources))
    try:
        return _assemble(_cache_root(), sources, digest.hexdigest()[:16])
    except OSError:
        private = Path(tempfile.mkdtemp(prefix="ragdash-"))
        atexit.register(shutil.rmtree, private, ignore_errors=True)
        return _assemble(private, sources, "private")


def threshold_chart(fig: go.Figure, h: float, k: float,
                    reference: tuple[float, float, str] | None, key: str,
                    h_key: str, k_key: str) -> None:
    """Draw `fig` (from `threshold_curves`) with its h and k lines draggable; a released drag
    sets `st.session_state[h_key]` / `[k_key]` (the sliders) before the rerun it triggers.
    Without the component's files the figure is drawn still, with a note."""

    def moved() -> None:
        new = apply_drag(st.session_state.get(key), st.session_state.get(h_key, h),
                         st.session_state.get(k_key, k))
        if new is not None:
            st.session_state[h_key], st.session_state[k_key] = new

    try:
        folder = served_dir()
    except OSError as exc:  # e.g. a plotly without its bundled plotly.min.js: a still chart
        st.caption(f"Dragging the lines is unavailable ({md(exc)}); use the sliders.")
        chart(fig, key=key)
        return
    component = components.declare_component("threshold_drag", path=str(folder))
    component(figure=fig.to_json(), h=h, k=k, reference=list(reference) if reference else None,
              config=CONFIG, key=key, default=None, on_change=moved)
