"""Thresholds: predict answer outcomes from Score_IR alone. Sliders for h, k and N (fitted values
marked, a button back to the fit); the sorted scores per retriever with coloured bands (Figure
3.2) whose h and k lines are dragged with the mouse (`ragdash.ui.threshold_drag`; the fit stays
dashed), scores grouped by judge score (Figure 3.1), the fit objective, the confusion matrix and
estimated vs actual shares. The panel is a fragment: moving a slider or a line redraws only
it."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis import frames, judging, sentences, thresholds
from ragdash.analysis.system_means import order_text
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.ui import state, widgets
from ragdash.ui.threshold_drag import threshold_chart
from ragdash.viz import calibration
from ragdash.viz.colors import label

run = state.require_run()
st.title("Thresholds: outcomes from retrieval alone")
st.caption("Rule of the paper: Score_IR > k → the answer will be **correct** (judge 5); "
           "Score_IR < h → it will **lack information** (judge 1); in between → **risk of "
           "hallucination** (judge 2–4). k and h are fitted to agree best with the judge; once "
           "fitted, new retrievers can be ranked without generating or judging anything.")
ir = widgets.ir_scores_or_stop(run)
budgets = run.budgets
n_questions = int(ir["qid"].nunique())
cal = run.calibration()
widgets.judge_audit_banner(state.view(run).audit(), "thresholds fitted to its scores")
failed = judging.all_failed(state.view(run).judgments())
if failed:
    st.error(f"{failed} h and k start at the paper's values and the estimates below use no "
             "judge; the errors are listed on the **LLM results** page.", icon="⚠️")
no_judgments = "No judgment in this run could be scored" if failed else \
    "The run has no judgments"
n0 = cal.budget if cal is not None and cal.budget in budgets else \
    frames.default_budget(budgets)
first = state.view(run).thresholds(n0)
H0 = round(first.fit_h if first.fit_h is not None else PAPER_H, 3)
K0 = round(first.fit_k if first.fit_k is not None else PAPER_K, 3)


def _to_fit(h: float | None, k: float | None) -> None:
    st.session_state["thr_h"] = round(h if h is not None else PAPER_H, 3)
    st.session_state["thr_k"] = round(k if k is not None else PAPER_K, 3)


def evidence_panel(n: int) -> None:
    """Does retrieval predict answer quality here? The verdict, ROC and reliability at N."""
    ev = state.view(run).predictiveness(n)
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
    n = widgets.budget_slider(c[0], "Token budget N", budgets, n0, "thr_n",
                              help="Score_IR at this N is thresholded.")
    # with judgments, every figure of the panel counts the judged answers only
    data = thresholds.judged_only(state.view(run).thresholds(n))
    fit_note = ("fit" if data.fit_h is not None else "paper's value")
    h = c[1].slider("h (lacks information below)", 0.0, 1.0, H0, step=0.001, format="%.3f",
                    key="thr_h", bind="query-params",
                    help=f"{fit_note} at N = {n}: "
                         f"{data.fit_h if data.fit_h is not None else PAPER_H:.3f}")
    k = c[2].slider("k (correct above)", 0.0, 1.0, K0, step=0.001, format="%.3f", key="thr_k",
                    bind="query-params",
                    help=f"{fit_note} at N = {n}: "
                         f"{data.fit_k if data.fit_k is not None else PAPER_K:.3f}")
    c[3].button("↺ Back to the fit", on_click=_to_fit, args=(data.fit_h, data.fit_k),
                key="thr_reset", width="stretch",
                help=f"Set h and k to the values fitted at this N (the paper's {PAPER_H} / "
                     f"{PAPER_K} when the run has no judgments)")
    evidence_panel(n)
    if data.has_judgments:
        st.caption("Every figure below counts the same answers: the "
                   + sentences.judged_basis(len(data.pairs), data.pairs["qid"].nunique(),
                                            n_questions) + ".")
    if data.fit_h is not None:
        st.caption(f"Fitted at N = {n} on {len(data.pairs):,} judged answers: **h = "
                   f"{data.fit_h:.3f}**, **k = {data.fit_k:.3f}** (exact sweep; "
                   f"{data.n_excluded} judge errors excluded). Sliders now: h = {h:.3f}, "
                   f"k = {k:.3f}." + (" **h > k: the bands overlap; above k counts as correct "
                                      "first.**" if h > k else ""))
        for note in thresholds.fit_diagnosis(data):
            st.info(note, icon="🔎")
    else:
        st.caption(f"{'No judgment could be scored' if failed else 'No judgments in this run'}"
                   ": h and k start at the paper's values "
                   f"(h = {PAPER_H}, k = {PAPER_K}); the estimates below need no LLM.")
    res = thresholds.panel(data, h, k)
    if data.has_judgments:
        m = st.columns(4)
        judge = data.pairs["judge"].to_numpy()
        for col, name, cls in ((m[0], "k", 5), (m[1], "h", 1)):
            share = float((judge == cls).mean())
            majority = max(share, 1 - share)
            agree = res[f"agreement_{name}"]
            col.metric(f"Agreement of {name}", f"{agree:.1%}",
                       delta=f"{(agree - majority) * 100:+.1f} pp vs majority",
                       delta_color="normal" if agree > majority else "off", delta_arrow="off",
                       help=f"Share of answers where [Score_IR {'>' if name == 'k' else '<'} "
                            f"{name}] equals [judge = {cls}], against {majority:.1%} for "
                            "always predicting the more common side")
        m[2].metric("In the estimated class", f"{res['accuracy']:.1%}",
                    help="Share of answers whose judge class is the one Score_IR predicts")
        m[3].metric("Share error (MAE)", f"{res['mae']:.1f} pp",
                    help="Mean absolute error of estimated vs judged class shares, in "
                         "percentage points, averaged over retrievers")
    if data.fit_h is not None:
        reference = (round(data.fit_h, 3), round(data.fit_k, 3), "fit")
    else:
        reference = (PAPER_H, PAPER_K, "paper")
    st.caption(f"**Drag the h and k lines** on the chart (or use the sliders above); the "
               f"dashed lines mark the {reference[2]} values.")
    threshold_chart(calibration.threshold_curves(data, res["estimated"], h, k,
                                                 reference=reference),
                    h, k, reference, key="thr_drag", h_key="thr_h", k_key="thr_k")
    if not data.has_judgments:
        widgets.chart(calibration.estimated_only(res["estimated"]), key="thr_est")
        st.info(f"{no_judgments}, so the judged shares, the fit objective, the confusion "
                "matrix and Figure 3.1 appear once the LLM stage has run and its judgments "
                "are scored.", icon="ℹ️")
        return
    head, _, rest = sentences.rule_bias(thresholds.rule_bias(data.pairs, k, n),
                                        n_questions).partition(": ")
    st.markdown(f"**{head}:** {rest}")
    widgets.chart(calibration.estimated_vs_actual(res["compare"]), key="thr_cmp")
    cmp = res["compare"]
    show = cmp.assign(retriever=cmp["retriever"].map(label)).set_index("retriever")[
        ["n", "est_5", "act_5", "err_5", "est_2_4", "act_2_4", "err_2_4", "est_1", "act_1",
         "err_1", "mae"]]
    show.columns = ["answers", "est. correct", "judged 5", "error", "est. risk",
                    "judged 2–4", "error ", "est. lacks info", "judged 1", "error  ",
                    "MAE (pp)"]
    pct = [c for c in show.columns if c not in ("answers",) and not c.startswith("error")
           and c != "MAE (pp)"]
    st.dataframe(show.style.format({**{c: "{:.1f}%" for c in pct},
                                    **{c: "{:+.1f}" for c in show.columns
                                       if c.startswith("error")}, "MAE (pp)": "{:.1f}"}),
                 width="stretch")
    by = cmp.set_index("retriever")  # equal shares tie ("="): a tie is never an order
    est_rank, act_rank = order_text(by["est_5"]), order_text(by["act_5"])
    same = "the same" if est_rank == act_rank else "a different"
    st.caption(f"Errors in percentage points, estimated − judged. Ranked by estimated correct "
               f"answers: {est_rank}; by the judge: {act_rank} "
               f"({same} order — the paper's claim is that the ranking is preserved).")
    left, right = st.columns(2)
    with left:
        opts = ["(all)", *data.retrievers]
        who = widgets.url_select(
            "Figure 3.1 for", opts, "thr_fig31",
            format_func=lambda r: "all retrievers" if r == "(all)" else label(r))
        widgets.chart(calibration.ir_by_judge(data, h, k, None if who == "(all)" else who),
                      key="thr_byjudge")
    with right:
        widgets.chart(calibration.objective(data, h, k), key="thr_objective")
    left, right = st.columns(2)
    with left:
        widgets.chart(calibration.confusion(res["confusion"]), key="thr_conf")
    with right:
        st.markdown("#### Reading the confusion matrix")
        first_, *rest = sentences.confusion_reading(res["confusion"], h, k, n)
        st.markdown(f"**{first_}**\n\n" + "\n".join(f"- {s}" for s in rest))

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
        budget = frames.default_budget(run.budgets)
        saved, verdict = state.view(run).cross_validate(budget)
        st.session_state["thr_cv_verdict"] = verdict
    except ValueError as exc:
        st.warning(f"Cannot cross-validate this run: {widgets.md(exc)}")
if saved is None:
    st.info("No cross-validation yet: the calibrate stage writes it (estimator_cv.csv), or use "
            "the button above on a run with judgments.", icon="ℹ️")
else:
    summary = thresholds.estimator_summary(saved)
    widgets.chart(calibration.estimator_bars(summary), key="thr_estimators")
    verdict = ((cal.estimator_verdict if cal is not None else "")
               or st.session_state.get("thr_cv_verdict", ""))
    if verdict:
        st.markdown(f"**Verdict.** {verdict}")
