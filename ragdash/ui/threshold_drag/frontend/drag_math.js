/* Pure arithmetic of dragging h and k on the sorted Score_IR chart (no DOM, no Plotly), so it
 * can be unit-tested with node: pixel <-> value on an axis, which line the pointer grabs, the
 * dragged value (snapped to the reference line, rounded to what a pixel can resolve, kept in
 * [0, 1] with h <= k) and the layout update that moves the lines and bands. The rule itself
 * (Score_IR > k: correct, < h: lacks information; El Yagouby et al. 2024, section 3.3) is
 * applied by the server once the value is released. */
(function (root, factory) {
  if (typeof module === "object" && module.exports) {
    module.exports = factory();
  } else {
    root.DragMath = factory();
  }
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // rounding steps: the smallest one a pixel can still tell apart is used
  const STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05];

  /** Score_IR at pixel row `py` of an axis {offset, length, range: [bottom, top]}. */
  function valueAt(py, axis) {
    const [r0, r1] = axis.range;
    return r1 - ((py - axis.offset) / axis.length) * (r1 - r0);
  }

  /** Pixel row of value `v` on an axis (inverse of valueAt). */
  function pixelOf(v, axis) {
    const [r0, r1] = axis.range;
    return axis.offset + (axis.length * (r1 - v)) / (r1 - r0);
  }

  /** The rounding step for an axis: the smallest of STEPS not finer than one pixel. */
  function stepFor(axis) {
    const perPixel = Math.abs(axis.range[1] - axis.range[0]) / Math.max(axis.length, 1);
    for (const s of STEPS) {
      if (s >= perPixel) return s;
    }
    return STEPS[STEPS.length - 1];
  }

  /** Which line the pointer at row `py` grabs: "h", "k", "both" (they are within `tol` pixels
   * of each other and of the pointer: the first move decides) or null. */
  function pickLine(py, axis, h, k, tol) {
    const dh = Math.abs(pixelOf(h, axis) - py);
    const dk = Math.abs(pixelOf(k, axis) - py);
    if (dh > tol && dk > tol) return null;
    if (Math.abs(dh - dk) < 1) return "both";
    return dk < dh ? "k" : "h";
  }

  /** "both" resolved by the direction of the first move: up drags k, down drags h. */
  function resolveBoth(startY, py) {
    return py < startY ? "k" : "h";
  }

  /** The value of line `which` dragged to row `py`: {value, snapped, stopped}. Snaps to the
   * reference value `ref` (e.g. the fit) within `snapPx` pixels, else rounds to stepFor(axis);
   * clamps to [0, 1] and keeps h <= k (k stops at h, h stops at k: `stopped`). */
  function dragValue(which, py, axis, h, k, ref, snapPx) {
    let v = valueAt(py, axis);
    let snapped = false;
    if (typeof ref === "number" && Number.isFinite(ref) &&
        Math.abs(pixelOf(ref, axis) - py) <= snapPx) {
      v = ref;
      snapped = true;
    } else {
      const step = stepFor(axis);
      v = Math.round(v / step) * step;
    }
    v = Math.min(1, Math.max(0, v));
    const lo = which === "k" ? Math.min(Math.max(h, 0), 1) : 0;
    const hi = which === "h" ? Math.min(Math.max(k, 0), 1) : 1;
    let stopped = false;
    if (v < lo) { v = lo; stopped = true; snapped = false; }
    if (v > hi) { v = hi; stopped = true; snapped = false; }
    return { value: Number(v.toFixed(3)), snapped: snapped, stopped: stopped };
  }

  /** Plotly.relayout update moving the named shapes ("h", "k", "band:1", "band:2-4",
   * "band:5") and the "share:2-4" note of `layout` to thresholds (h, k), and setting the
   * opacity of the "share:*" notes to `shareOpacity` (their numbers wait for the server). */
  function relayoutFor(layout, h, k, shareOpacity) {
    const lo = Math.min(h, k);
    const bands = { "band:1": [0, lo], "band:2-4": [lo, Math.max(lo, k)], "band:5": [k, 1] };
    const update = {};
    (layout.shapes || []).forEach(function (s, i) {
      if (s.name === "h" || s.name === "k") {
        const v = s.name === "h" ? h : k;
        update["shapes[" + i + "].y0"] = v;
        update["shapes[" + i + "].y1"] = v;
      } else if (Object.prototype.hasOwnProperty.call(bands, s.name)) {
        const b = bands[s.name];
        update["shapes[" + i + "].y0"] = b[0];
        update["shapes[" + i + "].y1"] = Math.max(b[0], b[1]);
      }
    });
    (layout.annotations || []).forEach(function (a, i) {
      if (typeof a.name !== "string" || a.name.indexOf("share:") !== 0) return;
      update["annotations[" + i + "].opacity"] = shareOpacity;
      if (a.name === "share:2-4") update["annotations[" + i + "].y"] = (lo + k) / 2;
    });
    return update;
  }

  return { STEPS, valueAt, pixelOf, stepFor, pickLine, resolveBoth, dragValue, relayoutFor };
});
