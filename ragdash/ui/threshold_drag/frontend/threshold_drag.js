/* The sorted Score_IR chart with h and k dragged by the mouse, as a Streamlit component (v1
 * protocol: componentReady, render, setFrameHeight, setComponentValue). The server sends the
 * figure (shapes named by ragdash.viz.calibration.threshold_curves), h, k and the reference
 * values; while a line is dragged the lines and bands move here (DragMath.relayoutFor) and the
 * share labels are dimmed; on release {which, value, seq} goes back to the server, which
 * applies the rule and redraws the page. */
(function () {
  "use strict";
  const M = window.DragMath;
  const gd = document.getElementById("chart");
  const badge = document.getElementById("badge");
  const GRAB_PX = 8; // how close to a line a press grabs it
  const SNAP_PX = 5; // how close to the reference line the value snaps to it
  // dirty: the lines were moved here and the figure on screen no longer matches state.figure
  let state = { h: 0, k: 1, ref: null, seq: 0, figure: null, height: 0, dirty: false };
  let drag = null;
  let queued = null; // render args that arrived while dragging
  let frame = 0;

  function send(type, data) {
    window.parent.postMessage(Object.assign({ isStreamlitMessage: true, type: type }, data), "*");
  }

  function axisBox(name) {
    const a = gd._fullLayout[name];
    return { offset: a._offset, length: a._length, range: a.range.slice() };
  }

  /** The y axis of the subplot under (px, py), with GRAB_PX of slack above and below. */
  function axisAt(px, py) {
    const ids = (gd._fullLayout && gd._fullLayout._subplots &&
                 gd._fullLayout._subplots.cartesian) || [];
    for (const id of ids) {
      const m = /^x(\d*)y(\d*)$/.exec(id);
      if (!m) continue;
      const xa = gd._fullLayout["xaxis" + m[1]];
      const ya = gd._fullLayout["yaxis" + m[2]];
      if (!xa || !ya) continue;
      if (px >= xa._offset && px <= xa._offset + xa._length &&
          py >= ya._offset - GRAB_PX && py <= ya._offset + ya._length + GRAB_PX) {
        return axisBox("yaxis" + m[2]);
      }
    }
    return null;
  }

  function local(e) {
    const r = gd.getBoundingClientRect();
    return { px: e.clientX - r.left, py: e.clientY - r.top };
  }

  function render(args) {
    if (drag) { queued = args; return; }
    state.h = Number(args.h);
    state.k = Number(args.k);
    state.ref = args.reference || null;
    if (args.figure !== state.figure) {
      state.figure = args.figure;
      const fig = JSON.parse(args.figure);
      fig.layout.dragmode = false;
      const config = Object.assign({ responsive: true }, args.config || {});
      window.Plotly.react(gd, fig.data, fig.layout, config);
      const height = Math.ceil(fig.layout.height || gd.offsetHeight);
      if (height !== state.height) {
        state.height = height;
        send("streamlit:setFrameHeight", { height: height });
      }
    } else if (state.dirty) {
      window.Plotly.relayout(gd, M.relayoutFor(gd.layout, state.h, state.k, 1));
    }
    state.dirty = false;
    badge.style.display = "none";
  }

  function showBadge(e, text) {
    const p = local(e);
    badge.textContent = text;
    badge.style.display = "block";
    const w = badge.offsetWidth;
    const left = p.px + 14 + w > gd.offsetWidth ? p.px - 14 - w : p.px + 14;
    badge.style.left = left + "px";
    badge.style.top = Math.max(0, p.py - 12) + "px";
  }

  function redraw() {
    frame = 0;
    if (!drag) return;
    state.dirty = true;
    window.Plotly.relayout(gd, M.relayoutFor(gd.layout, drag.h, drag.k, 0.3));
  }

  function onDown(e) {
    if (e.button !== 0 || !gd._fullLayout) return;
    const p = local(e);
    const axis = axisAt(p.px, p.py);
    if (!axis) return;
    const which = M.pickLine(p.py, axis, state.h, state.k, GRAB_PX);
    if (!which) return;
    e.preventDefault();
    e.stopPropagation();
    if (window.Plotly.Fx) window.Plotly.Fx.unhover(gd);
    drag = { which: which, axis: axis, startY: p.py, h: state.h, k: state.k };
    gd.classList.add("dragging");
    try { gd.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
  }

  function onMove(e) {
    const p = local(e);
    if (!drag) {
      const axis = gd._fullLayout ? axisAt(p.px, p.py) : null;
      gd.classList.toggle("near-line",
        Boolean(axis && M.pickLine(p.py, axis, state.h, state.k, GRAB_PX)));
      return;
    }
    e.preventDefault();
    e.stopPropagation();
    if (drag.which === "both") {
      if (Math.abs(p.py - drag.startY) < 2) return;
      drag.which = M.resolveBoth(drag.startY, p.py);
    }
    const ref = state.ref ? state.ref[drag.which === "h" ? 0 : 1] : null;
    const r = M.dragValue(drag.which, p.py, drag.axis, state.h, state.k, ref, SNAP_PX);
    drag[drag.which] = r.value;
    const other = drag.which === "k" ? "h" : "k";
    const note = r.snapped ? " (" + state.ref[2] + ")" :
      r.stopped ? " (stops at " + other + ")" : "";
    showBadge(e, drag.which + " = " + r.value.toFixed(3) + note + " · release to apply");
    if (!frame) frame = window.requestAnimationFrame(redraw);
  }

  function onUp(e) {
    if (!drag) return;
    e.preventDefault();
    e.stopPropagation();
    const done = drag;
    drag = null;
    gd.classList.remove("dragging");
    try { gd.releasePointerCapture(e.pointerId); } catch (err) { /* not captured */ }
    const which = done.which === "both" ? null : done.which;
    if (which && done[which] !== state[which]) {
      state.seq += 1;
      state[which] = done[which];
      badge.textContent = which + " = " + done[which].toFixed(3) + " · updating…";
      send("streamlit:setComponentValue",
           { value: { which: which, value: done[which], seq: state.seq }, dataType: "json" });
    } else {
      badge.style.display = "none";
      window.Plotly.relayout(gd, M.relayoutFor(gd.layout, state.h, state.k, 1));
      state.dirty = false;
    }
    if (queued) { const args = queued; queued = null; render(args); }
  }

  gd.addEventListener("pointerdown", onDown, true);
  gd.addEventListener("pointermove", onMove, true);
  gd.addEventListener("pointerup", onUp, true);
  gd.addEventListener("pointercancel", onUp, true);
  // a press that grabbed a line must not also start Plotly's own drag (zoom or pan)
  gd.addEventListener("mousedown", function (e) { if (drag) e.stopPropagation(); }, true);
  gd.addEventListener("pointerleave", function () {
    if (!drag) gd.classList.remove("near-line");
  });

  window.addEventListener("message", function (e) {
    if (e.source === window.parent && e.data && e.data.type === "streamlit:render") {
      render(e.data.args || {});
    }
  });
  send("streamlit:componentReady", { apiVersion: 1 });
})();
