"""Retrieval scores: Score_IR vs N with confidence bands, Table 3.1, distributions at one N,
breakdown by question metadata, and chunk-level IR metrics; for a run scored by several matching
methods (scoring.also), the method picked, and the curves of every method overlaid."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis import curves, frames
from ragdash.scoring import ABOUT
from ragdash.ui import state, widgets
from ragdash.view import retrieval as model
from ragdash.viz import retrieval
from ragdash.viz.colors import label

run = state.require_run()
st.title("Retrieval scores")
st.caption("Score_IR(Q, N) = mean over the relevant parts of the longest common substring with "
           "C_N (the first N tokens of the retrieved context) divided by the part's length: "
           "1 means every part is inside C_N word for word.")
ir = widgets.ir_scores_or_stop(run)
if recall := model.index_recall(run.manifest.get("index_recall") or {}, name=label):
    st.caption(recall)  # dense retrievers on HNSW / IVF
methods = state.view(run).score_methods()
method, overlay = methods[0], False
if len(methods) > 1:  # scoring.also: the same contexts scored by more matching methods
    m1, m2 = st.columns([3, 2])
    method = m1.segmented_control(
        "Matching", methods, default=methods[0], key="ret_method", bind="query-params",
        required=True, help="How a relevant part counts as found in C_N; every table and chart "
        "of this page follows. " + " ".join(f"**{m}**: {ABOUT.get(m, m)}." for m in methods))
    overlay = m2.toggle("Overlay every matching method on the curves", value=True,
                        key="ret_overlay", bind="query-params")
    ir = state.view(run).ir_scores(method)
if method != "substring":
    st.caption(f"Scored here by **{method}** matching: a part's score is "
               f"{ABOUT.get(method, method)}.")

all_rets = state.view(run).retrievers
budgets = state.view(run).budgets
n_default = frames.default_budget(budgets)
c1, c2 = st.columns([3, 2])
rets = widgets.retriever_picker("ret_sel", all_rets, container=c1)
n = widgets.budget_picker("ret_n", budgets, n_default, container=c2,
                          label_="Token budget N for distributions and breakdowns")
if not rets:
    st.warning("Pick at least one retriever.")
    st.stop()
sub = ir[ir["retriever"].isin(rets)]
if note := state.view(run).coverage_note(rets, label):  # imported systems with questions missing
    st.caption(widgets.md(note))

# --- curves and Table 3.1 ---------------------------------------------------------------------
if overlay:
    order = [method, *(m for m in methods if m != method)]
    widgets.chart(retrieval.method_curves({m: state.view(run).bands(method=m) for m in order},
                                          rets), key="ret_curves")
else:
    bands = state.view(run).bands(method=method)
    widgets.chart(retrieval.score_curves(bands[bands["retriever"].isin(rets)], rets),
                  key="ret_curves")

mode = state.view(run).spec.scoring.mode
st.subheader("Mean Score_IR per budget — the paper's Table 3.1")
t = curves.summary_table(sub, rets, mode)
st.dataframe(t.rename(columns=label).style.format("{:.3f}").highlight_max(
    axis=1, props="font-weight:700;background-color:#e7f5ff"), width="stretch")
st.caption(("Every question counts at every N (a context shorter than N keeps its whole-context "
            "score)." if mode == "corrected" else "Reference mode: at each N only the questions "
            "whose context reaches N are averaged, as the original code did.")
           + " Bold: the highest mean at that budget, not a test (the Overview says which "
             "leads hold beyond noise).")

# --- distributions at N ----------------------------------------------------------------------
st.subheader(f"Distribution over questions at N = {n}")
at = frames.at_budget(sub, n)
left, right = st.columns(2)
with left:
    widgets.chart(retrieval.score_distribution(at, rets, n), key="ret_box")
with right:
    widgets.chart(retrieval.score_histogram(at, rets, n), key="ret_hist")
st.dataframe(
    model.distribution_stats(at, rets, name=label).style.format(
        {"mean Score_IR": "{:.3f}", "median": "{:.3f}", "all parts found": "{:.1%}",
         "nothing found": "{:.1%}", "questions": "{:,}"}), width="stretch")

# --- breakdown by metadata ------------------------------------------------------------------
examples = run.table("examples")
meta = frames.metadata_columns(examples) if examples is not None else []
st.subheader("By question type")
if meta:
    by = st.segmented_control("Group questions by", meta, default=meta[0], key="ret_by",
                              bind="query-params", required=True)
    df = curves.breakdown(sub, examples, by, n)
    widgets.chart(retrieval.breakdown_bars(df, rets, by, n), key="ret_breakdown")
    st.dataframe(model.breakdown_table(df, rets, name=label).style.format(
        "{:.3f}", subset=[label(r) for r in rets]), width="stretch")
else:
    st.info("The questions carry no metadata to group by (e.g. HotpotQA's type and level).")

# --- classic IR metrics ---------------------------------------------------------------------
st.subheader("Classic IR metrics (chunk level)")
metrics = run.table("ir_metrics")
if metrics is None:
    widgets.missing("No ir_metrics.csv", "the score stage writes it; re-run `ragdash score`.")
else:
    m = metrics[metrics["retriever"].isin(rets)]
    widgets.chart(retrieval.metrics_bars(m, rets), key="ret_metrics")
    st.dataframe(m.assign(retriever=m["retriever"].map(label)).set_index("retriever").style
                 .format("{:.3f}", subset=[c for c in m.columns
                                           if c not in ("retriever", "questions_with_relevant")]),
                 width="stretch")
    st.caption("R@k: share of the relevant chunks in the top k; P@k: share of the top k that are "
               "relevant; RR: reciprocal rank of the first relevant chunk; nDCG@k: rank-weighted "
               "gain. Computed with ir_measures.")
