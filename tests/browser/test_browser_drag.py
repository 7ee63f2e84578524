"""Thresholds page in real Chromium: h and k are dragged on the sorted Score_IR chart itself
(the `ragdash.ui.threshold_drag` component, an iframe) with the real mouse. The line's pixel row
is found from the plot's own axes; the agreement metric, the slider and the URL follow the drag;
the fit stays marked; a slider moved with the keyboard moves the line; a run without judgments
still draws the lines. On the shared server (tests/browser/conftest.py); screenshots go to
test-artifacts/screenshots/ (30-…)."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
from fixtures.make_run import make_run
from helpers import SHOTS, goto, no_exception, settle, shot
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# the y pixel row of a named line of the first subplot, read from Plotly's own axis objects
LINE_ROW = """(name) => {
  const gd = document.getElementById('chart');
  const s = gd.layout.shapes.find(s => s.name === name);
  const ya = gd._fullLayout.yaxis, xa = gd._fullLayout.xaxis;
  const [r0, r1] = ya.range;
  const r = gd.getBoundingClientRect();
  return {value: s.y0, x: r.left + xa._offset + xa._length * 0.5,
          y: r.top + ya._offset + ya._length * (r1 - s.y0) / (r1 - r0),
          top: r.top + ya._offset, length: ya._length, r0: r0, r1: r1};
}"""


@pytest.fixture
def tall(page):
    """The test's page at the brief's viewport (1400 × 2600), so the chart is on screen."""
    page.set_viewport_size({"width": 1400, "height": 2600})
    return page


def chart_frame(pg):
    """The component's iframe (scrolled into view) and its frame, once Plotly has drawn."""
    iframe = pg.locator('iframe[title*="threshold_drag"]')
    iframe.wait_for()
    iframe.scroll_into_view_if_needed()
    frame = iframe.element_handle().content_frame()
    frame.wait_for_function("() => { const gd = document.getElementById('chart');"
                            " return gd && gd._fullLayout && gd.layout.shapes &&"
                            " gd.layout.shapes.some(s => s.name === 'k'); }", polling=100)
    return iframe, frame


def line(frame, name: str) -> dict:
    """Page coordinates of the middle of line `name` in the first subplot (the iframe's own
    coordinates plus the iframe's offset on the page)."""
    row = frame.evaluate(LINE_ROW, name)
    box = frame.frame_element().bounding_box()
    return {**row, "x": row["x"] + box["x"], "y": row["y"] + box["y"],
            "top": row["top"] + box["y"]}


def row_of(at: dict, value: float) -> float:
    """Page y of `value` on the axis described by `line()`."""
    return at["top"] + at["length"] * (at["r1"] - value) / (at["r1"] - at["r0"])


def url_params(pg) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(pg.url).query).items()}


def agreement(pg, name: str) -> str:
    box = pg.locator('[data-testid="stMetric"]').filter(has_text=f"Agreement of {name}")
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def slider_value(pg, label: str) -> float:
    box = pg.locator('[data-testid="stSlider"]').filter(has_text=label)
    return float(box.locator('[data-testid="stSliderThumbValue"]').inner_text())


def wait_for_url(pg, name: str, value: float | None = None) -> float:
    """Wait until `?name=` is in the URL (with `value`, to 1e-6, when given); return it."""
    try:
        pg.wait_for_function(
            "([name, value]) => { const got = new URLSearchParams(location.search).get(name);"
            " return got !== null && (value === null ||"
            " Math.abs(parseFloat(got) - value) <= 1e-6 * Math.max(1, Math.abs(value))); }",
            arg=[name, value], timeout=20_000, polling=100)
    except PlaywrightTimeout as e:
        raise AssertionError(f"{name}={value} not in {pg.url}") from e
    return float(url_params(pg)[name])


def drag(pg, frame, name: str, to: float, shot_name: str | None = None) -> dict:
    """Press on line `name`, move it to value `to` in steps, screenshot mid-drag, release."""
    at = line(frame, name)
    pg.mouse.move(at["x"], at["y"])
    pg.mouse.down()
    target = row_of(at, to)
    pg.mouse.move(at["x"] + 20, (at["y"] + target) / 2, steps=6)
    pg.mouse.move(at["x"] + 30, target, steps=6)
    mid = {"badge": frame.locator("#badge").inner_text(),
           "drawn": frame.evaluate(LINE_ROW, name)["value"]}
    if shot_name:
        shot(pg, shot_name)
    pg.mouse.up()
    return {"start": at["value"], "released": time.perf_counter(), **mid}


def test_drag_k_back_to_the_fit_push_k_against_h_then_move_it_with_the_keyboard(server, tall):
    """One visit to the Thresholds page of the shared run, as a user tries the chart:
    1. it opens at the fit; k is dragged to 0.35 with the mouse: mid-drag the line follows and
       the badge names the value; once released the agreement metric, the k slider, the URL and
       "Sliders now" follow, the line stays where it was dropped and the fit stays marked;
    2. "Back to the fit" returns the line, the URL (no `thr_k`) and the agreement to the fit;
    3. k dragged below h stops at h (badge "(stops at h)", line and URL at h) and the bands
       never overlap;
    4. the k slider moved with the keyboard (20 × → of its 0.001 step) moves the line and the
       URL by 0.02."""
    pg = tall
    goto(pg, server, "thresholds")
    iframe, frame = chart_frame(pg)
    fit_k = line(frame, "ref:k")["value"]
    k0 = line(frame, "k")["value"]
    assert k0 == pytest.approx(fit_k)  # the page opens at the fit
    before = agreement(pg, "k")
    moved = drag(pg, frame, "k", 0.35, shot_name="30-thresholds-k-mid-drag")
    # while the button is held the line has moved here and the badge names the value
    assert moved["drawn"] == pytest.approx(0.35, abs=0.01)
    assert re.match(r"k = 0\.3\d\d · release to apply", moved["badge"]), moved["badge"]
    pg.wait_for_function(
        "(before) => [...document.querySelectorAll('[data-testid=\"stMetric\"]')].some(e =>"
        " e.innerText.startsWith('Agreement of k') && !e.innerText.includes(before))",
        arg=before, timeout=20_000, polling=100)
    redraw = time.perf_counter() - moved["released"]
    k = wait_for_url(pg, "thr_k")
    assert k == pytest.approx(0.35, abs=0.01)
    settle(pg)
    (SHOTS / "drag_timings.json").write_text(json.dumps(
        {"k_line_release_to_agreement_s": round(redraw, 3), "k": k}))
    no_exception(pg, "thresholds after a drag")
    assert agreement(pg, "k") != before
    assert slider_value(pg, "k (correct above)") == pytest.approx(k)
    assert f"k = {k:.3f}" in pg.get_by_text(re.compile("Sliders now")).inner_text()
    _, frame = chart_frame(pg)
    assert line(frame, "k")["value"] == pytest.approx(k)
    assert line(frame, "ref:k")["value"] == pytest.approx(fit_k)  # the fit stays marked
    shot(iframe, "31-thresholds-k-dropped")

    # back to the fit: the line, the slider and the URL all return
    pg.get_by_role("button", name="Back to the fit").click()
    expect(pg).not_to_have_url(re.compile("thr_k="))
    settle(pg)
    _, frame = chart_frame(pg)
    frame.wait_for_function("(k) => document.getElementById('chart').layout.shapes"
                            ".find(s => s.name === 'k').y0 === k", arg=fit_k, polling=100)
    expect(pg.locator('[data-testid="stMetric"]').filter(has_text="Agreement of k").locator(
        '[data-testid="stMetricValue"]')).to_have_text(before)

    # k pushed below h stops at h: the bands never overlap
    h = line(frame, "h")["value"]
    assert 0.02 < h < fit_k, (h, fit_k)  # room below h to push k into
    moved = drag(pg, frame, "k", 0.0)
    assert "(stops at h)" in moved["badge"] and moved["drawn"] == pytest.approx(h)
    assert wait_for_url(pg, "thr_k", h) == pytest.approx(h)
    settle(pg)
    assert "bands overlap" not in pg.get_by_text(re.compile("Sliders now")).inner_text()
    no_exception(pg, "k dragged under h")

    # the k slider moved with the keyboard moves the line
    _, frame = chart_frame(pg)
    assert line(frame, "k")["value"] == pytest.approx(h)
    thumb = pg.locator('[data-testid="stSlider"]').filter(
        has_text="k (correct above)").get_by_role("slider")
    thumb.focus()
    for _ in range(20):
        pg.keyboard.press("ArrowRight")
    up = round(h + 0.02, 3)
    wait_for_url(pg, "thr_k", up)
    settle(pg)
    _, frame = chart_frame(pg)
    frame.wait_for_function("(k) => document.getElementById('chart').layout.shapes"
                            ".find(s => s.name === 'k').y0 === k", arg=up, polling=100)


def test_run_without_judgments_draws_draggable_lines(server, tall):
    pg = tall
    run = make_run(server["root"] / "runs" / "no-llm", n_questions=12, seed=2, llm=False)
    goto(pg, server, f"thresholds?run={run}")
    assert pg.get_by_text("No judgments in this run").count() == 1
    assert pg.locator('[data-testid="stMetric"]').filter(has_text="Agreement").count() == 0
    _, frame = chart_frame(pg)
    assert line(frame, "ref:k")["value"] == pytest.approx(0.67)  # the paper's values
    labels = frame.evaluate("() => document.getElementById('chart').layout.annotations"
                            ".filter(a => a.name === 'ref:k').map(a => a.text)")
    assert labels and set(labels) == {"paper"}
    drag(pg, frame, "h", 0.25, shot_name="32-thresholds-no-judgments-h-mid-drag")
    assert wait_for_url(pg, "thr_h") == pytest.approx(0.25, abs=0.01)
    settle(pg)
    no_exception(pg, "no-judgment run after a drag")
    shot(pg, "33-thresholds-no-judgments")
