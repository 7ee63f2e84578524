"""Dragging h and k on the threshold chart, without a browser: the Python side (`apply_drag`,
the served folder), the browser's pure arithmetic (`frontend/drag_math.js`, run with node) and
the contract between them (the names `threshold_curves` gives its shapes)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile

import pytest
from fixtures.make_run import make_run

from ragdash.analysis import threshold_panel
from ragdash.rundir import Run
from ragdash.ui import threshold_drag
from ragdash.ui.threshold_drag import FRONTEND, PLOTLY_JS, served_dir
from ragdash.ui.threshold_drag.logic import apply_drag
from ragdash.viz.calibration import threshold_curves

NODE = shutil.which("node")
DRAG_MATH = FRONTEND / "drag_math.js"


# --- the event turned into (h, k) -----------------------------------------------------------


@pytest.mark.parametrize(("event", "expected"), [
    ({"which": "k", "value": 0.7349, "seq": 1}, (0.1, 0.735)),
    ({"which": "h", "value": 0.2, "seq": 2}, (0.2, 0.6)),
    ({"which": "k", "value": 1.7}, (0.1, 1.0)),  # clamped to [0, 1]
    ({"which": "h", "value": -0.3}, (0.0, 0.6)),
    ({"which": "k", "value": 0.05}, (0.1, 0.1)),  # k stops at h
    ({"which": "h", "value": 0.9}, (0.6, 0.6)),  # h stops at k
    ({"which": "k", "value": 1}, (0.1, 1.0)),  # an int from JSON
])
def test_apply_drag(event, expected):
    assert apply_drag(event, 0.1, 0.6) == pytest.approx(expected)


@pytest.mark.parametrize("event", [
    None, "k=0.5", [], {}, {"which": "n", "value": 0.5}, {"which": "k"},
    {"which": "k", "value": "0.5"}, {"which": "k", "value": math.nan},
    {"which": "h", "value": math.inf}, {"which": "k", "value": True},
    {"which": "k", "value": None}])
def test_apply_drag_ignores_what_is_not_a_drag(event):
    assert apply_drag(event, 0.1, 0.6) is None


def test_apply_drag_when_sliders_had_crossed_h_and_k():
    # the sliders allow h > k (the page explains the overlap); a drag puts them back in order
    assert apply_drag({"which": "k", "value": 0.2}, 0.5, 0.3) == (0.5, 0.5)
    assert apply_drag({"which": "h", "value": 0.45}, 0.5, 0.3) == (0.3, 0.3)


# --- the folder Streamlit serves ------------------------------------------------------------


def fresh_served_dir():
    """`served_dir()` as a new process would compute it (the cache emptied before and after)."""
    served_dir.cache_clear()
    try:
        return served_dir()
    finally:
        served_dir.cache_clear()


def test_served_folder_holds_the_frontend_and_plotly(tmp_path, monkeypatch):
    monkeypatch.setattr(threshold_drag, "_cache_root", lambda: tmp_path / "cache")
    folder = fresh_served_dir()
    assert folder.parent == tmp_path / "cache"
    assert (folder / "plotly.min.js").read_bytes() == PLOTLY_JS.read_bytes()
    page = (folder / "index.html").read_text()
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts == ["plotly.min.js", "drag_math.js", "threshold_drag.js"]
    assert all((folder / s).is_file() for s in scripts)  # served offline, from the folder
    assert not list(folder.parent.glob(".threshold_drag-*"))  # no half-built folder left
    assert fresh_served_dir() == folder  # a second process finds it built


def test_served_folder_falls_back_to_a_private_one(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")  # the cache root cannot be created under a file
    monkeypatch.setattr(threshold_drag, "_cache_root", lambda: blocker / "ragdash")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the private folder
    (tmp_path / "tmp").mkdir()
    folder = fresh_served_dir()
    assert folder.parent.parent == tmp_path / "tmp"
    assert (folder / "index.html").is_file() and (folder / "plotly.min.js").is_file()


# --- the figure's named shapes (the contract with the browser) ------------------------------


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    run = Run(make_run(tmp_path_factory.mktemp("drag") / "run", n_questions=20, seed=3))
    return threshold_panel.threshold_data(run.read("ir_scores"), run.read("judgments"), 1000)


def _names(fig) -> list[str]:
    return [s.name for s in fig.layout.shapes]


def test_threshold_curves_names_its_lines_and_bands(data):
    est = threshold_panel.panel(data, 0.0, 0.6)["estimated"]
    plain = threshold_curves(data, est, 0.0, 0.6)
    n = len(data.retrievers)
    names = _names(plain)
    for name in ("h", "k", "band:1", "band:2-4", "band:5"):
        assert names.count(name) == n, name  # one per subplot, even the empty band under h=0
    assert not any(x.startswith("ref:") for x in names)  # the report's figure has no fit marks
    marked = threshold_curves(data, est, 0.0, 0.6, reference=(0.12, 0.58, "fit"))
    refs = [s for s in marked.layout.shapes if s.name == "ref:k"]
    assert len(refs) == n and {s.y0 for s in refs} == {0.58} and refs[0].line.dash == "dash"
    labels = [a.text for a in marked.layout.annotations if a.name == "ref:h"]
    assert labels == ["fit"] * n
    assert "dashed: fit" in marked.layout.title.text


# --- the browser's arithmetic, run with node ------------------------------------------------


def js(code: str, **inputs) -> object:
    """Run `code` (an expression over `M` = DragMath and the inputs) with node; its JSON."""
    if NODE is None:
        pytest.skip("node is not installed")
    script = (f"const M = require({json.dumps(str(DRAG_MATH))});"
              f"const I = JSON.parse(process.argv[1]);"
              f"process.stdout.write(JSON.stringify(((I) => ({code}))(I)));")
    out = subprocess.run([NODE, "-e", script, json.dumps(inputs)], capture_output=True,
                         text=True, timeout=30, check=True)
    return json.loads(out.stdout)


AXIS = {"offset": 100, "length": 208, "range": [-0.02, 1.02]}  # 0.005 per pixel


def test_pixels_and_values_are_inverse():
    got = js("[M.valueAt(M.pixelOf(0.37, I.a), I.a), M.pixelOf(1.02, I.a), "
             "M.pixelOf(-0.02, I.a), M.stepFor(I.a), M.stepFor(I.fine), M.stepFor(I.tiny)]",
             a=AXIS, fine={**AXIS, "length": 2000}, tiny={**AXIS, "length": 5})
    assert got[0] == pytest.approx(0.37)
    assert got[1:3] == [100, 308]  # the top and the bottom of the axis
    assert got[3:] == [0.005, 0.001, 0.05]


def test_which_line_is_grabbed():
    got = js("[M.pickLine(M.pixelOf(0.6, I.a) + 3, I.a, 0.1, 0.6, 8),"
             " M.pickLine(M.pixelOf(0.1, I.a) - 7, I.a, 0.1, 0.6, 8),"
             " M.pickLine(M.pixelOf(0.35, I.a), I.a, 0.1, 0.6, 8),"
             " M.pickLine(M.pixelOf(0.4, I.a), I.a, 0.4, 0.4, 8),"
             " M.resolveBoth(200, 190), M.resolveBoth(200, 210)]", a=AXIS)
    assert got == ["k", "h", None, "both", "k", "h"]


def test_dragged_value_snaps_rounds_clamps_and_stops():
    got = js("[M.dragValue('k', M.pixelOf(0.7312, I.a), I.a, 0.1, 0.6, null, 5),"
             " M.dragValue('k', M.pixelOf(0.5913, I.a) - 4, I.a, 0.1, 0.6, 0.5913, 5),"
             " M.dragValue('k', M.pixelOf(0.03, I.a), I.a, 0.1, 0.6, 0.59, 5),"
             " M.dragValue('h', M.pixelOf(0.9, I.a), I.a, 0.1, 0.6, null, 5),"
             " M.dragValue('k', 0, I.a, 0.1, 0.6, null, 5),"
             " M.dragValue('h', 1000, I.a, 0.1, 0.6, null, 5)]", a=AXIS)
    assert got[0] == {"value": 0.73, "snapped": False, "stopped": False}  # 0.005 steps
    assert got[1] == {"value": 0.591, "snapped": True, "stopped": False}  # the fit, 4 px away
    assert got[2] == {"value": 0.1, "snapped": False, "stopped": True}  # k stops at h
    assert got[3] == {"value": 0.6, "snapped": False, "stopped": True}  # h stops at k
    assert got[4]["value"] == 1 and got[5]["value"] == 0  # above and below the axis


def test_relayout_moves_the_named_shapes_of_the_real_figure(data):
    est = threshold_panel.panel(data, 0.1, 0.6)["estimated"]
    fig = threshold_curves(data, est, 0.1, 0.6, reference=(0.12, 0.58, "fit"))
    layout = json.loads(fig.to_json())["layout"]
    update = js("M.relayoutFor(I.layout, 0.2, 0.7, 0.3)", layout=layout)
    shapes, notes = layout["shapes"], layout["annotations"]
    moved = {int(m.group(1)) for key in update
             if (m := re.match(r"shapes\[(\d+)\]\.", key))}
    assert moved == {i for i, s in enumerate(shapes)
                     if s.get("name") in ("h", "k", "band:1", "band:2-4", "band:5")}
    for i, s in enumerate(shapes):
        want = {"h": (0.2, 0.2), "k": (0.7, 0.7), "band:1": (0, 0.2), "band:2-4": (0.2, 0.7),
                "band:5": (0.7, 1)}.get(s.get("name"))
        if want:
            assert (update[f"shapes[{i}].y0"], update[f"shapes[{i}].y1"]) == \
                pytest.approx(want), s["name"]
    dimmed = {int(re.match(r"annotations\[(\d+)\]", k).group(1)) for k in update
              if k.endswith(".opacity")}
    assert dimmed == {i for i, a in enumerate(notes) if a.get("name", "").startswith("share:")}
    middle = [i for i, a in enumerate(notes) if a.get("name") == "share:2-4"]
    assert all(update[f"annotations[{i}].y"] == pytest.approx(0.45) for i in middle)
    # crossed thresholds leave an empty middle band, never a negative one
    crossed = js("M.relayoutFor(I.layout, 0.8, 0.3, 1)", layout=layout)
    band = next(i for i, s in enumerate(shapes) if s.get("name") == "band:2-4")
    assert crossed[f"shapes[{band}].y0"] == crossed[f"shapes[{band}].y1"] == 0.3


def test_without_plotly_js_the_chart_is_drawn_still(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(threshold_drag, "PLOTLY_JS", tmp_path / "gone" / "plotly.min.js")
    served_dir.cache_clear()

    def script():
        import plotly.graph_objects as go

        from ragdash.ui.threshold_drag import threshold_chart

        threshold_chart(go.Figure(), 0.1, 0.6, (0.1, 0.6, "fit"), key="drag", h_key="h",
                        k_key="k")

    try:
        at = AppTest.from_function(script).run()
    finally:
        served_dir.cache_clear()
    assert not at.exception
    assert "Dragging the lines is unavailable" in at.caption[0].value
    assert "plotly\\.min\\.js not found" in at.caption[0].value  # escaped: shown literally
    assert len(at.get("plotly_chart")) == 1  # the figure, without the drag
