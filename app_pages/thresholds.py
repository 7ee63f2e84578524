"""Thresholds: predict answer outcomes from Score_IR alone. Sliders for h, k and N (fitted values
marked, a button back to the fit); the sorted scores per retriever with coloured bands (Figure
3.2) whose h and k lines are dragged with the mouse (`ragdash.ui.threshold_drag`; the fit stays
dashed), scores grouped by judge score (Figure 3.1), the fit objective, the confusion matrix and
estimated vs actual shares. The panel is a fragment: moving a slider or a line redraws only
it."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis import frames, judging, threshold_panel
from ragdash.calibration.model import HK
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.ui import state, widgets
from ragdash.ui.threshold_drag import threshold_chart
from ragdash.view import thresholds as model
from ragdash.viz import calibration
from ragdash.viz.colors import label

run = state.require_run()
st.title("Thresholds: outcomes from retrieval alone")
st.caption("Rule of the paper: Score_IR > k → the answer will be **correct** (judge 5); "
           "Score_IR < h → it will **lack information** (judge 1); in between → **risk of "
           "hallucination** (judge 2–4). k and h are fitted to agree best with the judge; once "
           "fitted, new retrievers can be ranked without generating or judging anything.")
widgets.ir_scores_or_stop(run)
budgets = state.view(run).budgets
widgets.judge_audit_banner(state.view(run).audit(), "thresholds fitted to its scores")
failed = judging.all_failed(state.view(run).judgments())
if failed:
    st.error(f"{failed} h and k start at the paper's values and the estimates below use no "
             "judge; the errors are listed on the **LLM results** page.", icon="⚠️")
opening = model.start(state.view(run))


def _to_fit(h: float | None, k: float | None) -> None:
    st.session_state["thr_h"] = round(h if h is not None else PAPER_H, 3)
    st.session_state["thr_k"] = round(k if k is not None else PAPER_K, 3)


def evidence_panel(n: int) -> None:
    """Does retrieval predict answer quality here? The verdict, ROC and reliability at N."""
    view = state.view(run)
    facts = view.facts(label)  # at the calibration's N, the evidence every page states
    ev = facts.evidence if facts.budget == n and facts.evidence else view.predictiveness(n)
    if ev is None:
        return
    st.subheader(f"Does retrieval predict answer quality here? (N = {n})")
    widgets.verdict(ev, question=False)
    st.caption(ev["refusal_verdict"] + " AUC: the chance that a random correct answer has a "
               "higher Score_IR than a random other one (0.5 = no better than chance).")
    cols = st.columns([2, 3])
    with cols[0]:
        widgets.chart(calibration.roc(ev), key="thr_roc")
    with cols[1]:
        widgets.chart(calibration.reliability(ev), key="thr_reliability")


@st.fragment
def panel() -> None:
    c = st.columns([2, 2, 2, 1.2])
    n = widgets.budget_slider(c[0], "Token budget N", budgets, opening.n, "thr_n",
                              help="Score_IR at this N is thresholded.")
    # with judgments, every figure of the panel counts the judged answers only
    at_n = threshold_panel.judged_only(state.view(run).thresholds(n))
    fit_note = "fit" if at_n.fit_h is not None else "paper's value"
    h = c[1].slider("h (lacks information below)", 0.0, 1.0, opening.h, step=0.001,
                    format="%.3f", key="thr_h", bind="query-params",
                    help=f"{fit_note} at N = {n}: "
                         f"{at_n.fit_h if at_n.fit_h is not None else PAPER_H:.3f}")
    k = c[2].slider("k (correct above)", 0.0, 1.0, opening.k, step=0.001, format="%.3f",
                    key="thr_k", bind="query-params",
                    help=f"{fit_note} at N = {n}: "
                         f"{at_n.fit_k if at_n.fit_k is not None else PAPER_K:.3f}")
    c[3].button("↺ Back to the fit", on_click=_to_fit, args=(at_n.fit_h, at_n.fit_k),
                key="thr_reset", width="stretch",
                help=f"Set h and k to the values fitted at this N (the paper's {PAPER_H} / "
                     f"{PAPER_K} when the run has no judgments)")
    evidence_panel(n)
    page = model.panel(state.view(run), n, h, k, name=label)
    if page.basis:
        st.caption(page.basis)
    st.caption(page.fit)
    for note in page.diagnosis:
        st.info(note, icon="🔎")
    for col, tile in zip(st.columns(4) if page.tiles else [], page.tiles, strict=True):
        col.metric(tile.label, tile.value, delta=tile.delta, help=tile.help,
                   delta_arrow="off", delta_color="normal" if tile.good else "off")
    st.caption(f"**Drag the h and k lines** on the chart (or use the sliders above); the "
               f"dashed lines mark the {page.reference[2]} values.")
    threshold_chart(calibration.threshold_curves(page.data, page.result["estimated"], h, k,
                                                 reference=page.reference),
                    h, k, page.reference, key="thr_drag", h_key="thr_h", k_key="thr_k")
    if page.table is None:
        widgets.chart(calibration.estimated_only(page.result["estimated"]), key="thr_est")
        st.info(f"{model.no_judgments(state.view(run))}, so the judged shares, the fit "
                "objective, the confusion matrix and Figure 3.1 appear once the LLM stage has "
                "run and its judgments are scored.", icon="ℹ️")
        return
    head, rest = page.bias
    st.markdown(f"**{head}:** {rest}" if head else rest)
    widgets.chart(calibration.estimated_vs_actual(page.result["compare"]), key="thr_cmp")
    pct = [c for c in page.table.columns if c not in ("answers", "MAE (pp)")
           and not c.startswith("error")]
    st.dataframe(page.table.style.format({**{c: "{:.1f}%" for c in pct},
                                          **{c: "{:+.1f}" for c in page.table.columns
                                             if c.startswith("error")},
                                          **({"MAE (pp)": "{:.1f}"} if "MAE (pp)" in
                                             page.table.columns else {})}),
                 width="stretch")
    st.caption(page.order)
    left, right = st.columns(2)
    with left:
        opts = ["(all)", *page.data.retrievers]
        who = widgets.url_select(
            "Figure 3.1 for", opts, "thr_fig31",
            format_func=lambda r: "all retrievers" if r == "(all)" else label(r))
        widgets.chart(calibration.ir_by_judge(page.data, h, k, None if who == "(all)" else who),
                      key="thr_byjudge")
    with right:
        widgets.chart(calibration.objective(page.data, h, k), key="thr_objective")
    left, right = st.columns(2)
    with left:
        widgets.chart(calibration.confusion(page.result["confusion"]), key="thr_conf")
    with right:
        st.markdown("#### Reading the confusion matrix")
        first_, *rest_ = page.confusion
        st.markdown(f"**{first_}**\n\n" + "\n".join(f"- {s}" for s in rest_))

panel()


st.header("Beyond the paper: a probabilistic estimator")
# the h/k rule's bias is said in the panel above, at the k and N on its sliders
st.caption("Where the h/k rule above misses, a multinomial logistic model of the judge class "
           "on Score_IR at every budget (and, when available, the LLM-only judgment of the "
           "same question) predicts each retriever's shares instead of a fixed cut at k. Both "
           "are scored on data they were not fitted on: held-out questions (5-fold) and "
           "held-out retrievers.")
saved = run.table("estimator_cv")
can_cv = saved is None and run.table("judgments") is not None
if can_cv and st.button("Cross-validate the estimators", key="thr_cv"):
    try:
        budget = frames.default_budget(state.view(run).budgets)
        saved, verdict = state.view(run).cross_validate(budget)
        st.session_state["thr_cv_verdict"] = verdict
    except ValueError as exc:
        st.warning(f"Cannot cross-validate this run: {widgets.md(exc)}")
if saved is None:
    st.info("No cross-validation yet: the calibrate stage writes it (estimator_cv.csv), or use "
            "the button above on a run with judgments.", icon="ℹ️")
else:
    facts = state.view(run).facts(label)
    verdict = facts.estimator_verdict or facts.cv_verdict(
        st.session_state.get("thr_cv_verdict", ""), saved)
    # the errors the verdict allows: none where every Score_IR is alike, none of the h/k rule
    # where it gives no estimate at the run's fit (its bar would contradict "no estimate")
    shown = saved.iloc[0:0] if facts.blind else (
        saved[saved["method"] != HK] if facts.hk_reason else saved)
    if len(shown):
        widgets.chart(calibration.estimator_bars(threshold_panel.estimator_summary(shown)),
                      key="thr_estimators")
    if verdict:
        st.markdown(f"**Verdict.** {verdict}")
