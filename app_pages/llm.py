"""LLM results: judge-score distributions per system (the paper's Table 3.3), LLM only vs RAG,
errors shown apart, latency, tokens and cost."""

from __future__ import annotations

import streamlit as st

from ragdash import analysis
from ragdash.ui import charts, state, widgets
from ragdash.ui.colors import label

run = state.require_run()
st.title("LLM results")
all_answers = state.table(run, "answers")  # every call: errors, latency, tokens, cost
all_judgments = state.table(run, "judgments")
answers, judgments = state.answers(run), state.judgments(run)  # one per (question, system)
if answers is None and judgments is None:
    st.info(
        "**This run has no LLM stage yet.** Once answers are generated from C_N for each "
        "retriever (and once without context, *LLM only*) and judged 1–5, this page shows the "
        "judge-score distribution per system (the paper's Table 3.3), what retrieval adds over "
        "the LLM alone, the failed calls, latency, tokens and cost. Starting generation and "
        "judging from here comes with the LLM pipeline; meanwhile the **Thresholds** page "
        "already estimates answer outcomes from retrieval alone.", icon="🤖")
    st.stop()
order = state.order(run)
st.caption("Judge scale (categorical, not ordinal): 1 not enough information · 2 partly "
           "correct with wrong details · 3 partly correct but incomplete · 4 fully incorrect · "
           "5 fully correct. Failed calls and unparseable judge replies are errors: listed "
           "apart, never averaged in.")

# --- Table 3.3 ------------------------------------------------------------------------------------
if judgments is not None:
    dist = analysis.judge_distribution(judgments, order)
    systems = analysis.order_systems(dist["system"], order)
    widgets.chart(charts.judge_stacked(dist, systems), key="llm_stacked")
    t = analysis.table_3_3(judgments, order)
    st.subheader("Judge-score shares per system (Table 3.3)")
    st.dataframe(t.rename(index=label).rename(columns={"n": "judged", "errors": "errors"})
                 .style.format({str(s): "{:.1%}" for s in analysis.SCORES}, na_rep="—"),
                 width="stretch")

    # --- LLM only vs RAG ----------------------------------------------------------------------
    st.subheader("What retrieval adds over the LLM alone")
    gain = analysis.rag_gain(judgments, order)
    if gain.empty:
        st.info("No LLM-only judgments in this run: nothing to compare retrieval against.")
    else:
        left, right = st.columns(2)
        with left:
            widgets.chart(charts.rag_gain_bars(gain), key="llm_gain")
        with right:
            rag = [s for s in systems if s != "llm_only"]
            pick = widgets.url_select("Retriever", rag, "llm_sys", format_func=label)
            ct = analysis.llm_vs_rag(judgments, pick)
            widgets.chart(charts.crosstab_heatmap(ct, pick), key="llm_ct")
            g = gain.set_index("system").loc[pick]
            fixed, broken, n_both = int(g["fixed"]), int(g["broken"]), int(g["n"])
            st.markdown(f"With **{label(pick)}**, {fixed:,} answers became fully correct that "
                        f"were not without retrieval, and {broken:,} correct answers were lost "
                        f"(of {n_both:,} questions judged both ways).")
    sweep = analysis.sweep_distribution(all_judgments)
    if not sweep.empty:
        st.subheader("Judge scores across budgets (the paper's Table 3.2 pilot)")
        for sys_ in sweep["system"].unique():
            widgets.chart(charts.sweep_stacked(sweep[sweep["system"] == sys_], sys_),
                          key=f"llm_sweep_{sys_}")
else:
    widgets.missing("No judgments yet", "answers exist but have not been judged.")

# --- errors ---------------------------------------------------------------------------------------
st.subheader("Errors (kept apart)")
errs = analysis.errors_table(all_answers, all_judgments)
if errs.empty:
    st.success("No failed generation or judge call.")
else:
    counts = errs.groupby(["stage", "system"]).size().unstack(fill_value=0)
    counts = counts[analysis.order_systems(counts.columns, order)]
    st.dataframe(counts.rename(columns=label), width="stretch")
    with st.expander(f"All {len(errs):,} errors"):
        st.dataframe(errs.assign(system=errs["system"].map(label)), hide_index=True,
                     width="stretch")

# --- latency, tokens, cost ---------------------------------------------------------------------
if answers is not None:
    st.subheader("Latency, tokens and cost")
    use = analysis.usage(all_answers, order)
    left, right = st.columns(2)
    with left:
        widgets.chart(charts.latency_box(all_answers, list(use["system"])), key="llm_latency")
    with right:
        widgets.chart(charts.tokens_bars(use), key="llm_tokens")
    st.dataframe(use.assign(system=use["system"].map(label)).set_index("system").rename(columns={
        "latency_median_s": "median latency (s)", "latency_p90_s": "p90 latency (s)",
        "tokens_in_mean": "prompt tokens (mean)", "tokens_out_mean": "answer tokens (mean)"})
        .style.format({"median latency (s)": "{:.2f}", "p90 latency (s)": "{:.2f}",
                       "prompt tokens (mean)": "{:,.0f}", "answer tokens (mean)": "{:,.0f}"}),
        width="stretch")
cost = analysis.costs(all_answers, all_judgments)
if not cost.empty:
    total = cost["usd"].sum(min_count=1)
    money = "unknown (a model is not in the price table)" if total != total else f"${total:,.4f}"
    st.markdown(f"**Total cost:** {money} — from recorded tokens and `ragdash.llm.cost`'s price "
                "table (local models cost $0).")
    st.dataframe(cost.style.format({"usd": "${:,.4f}", "latency_s": "{:,.1f}",
                                    "tokens_in": "{:,}", "tokens_out": "{:,}"}, na_rep="unknown"),
                 hide_index=True, width="stretch")
