"""Compare retrievers: per-question scatter at N, win/tie/loss, Wilcoxon signed-rank tests, the
difference across budgets, and the questions with the largest differences (linked to the
question browser). The pairs' figures, sentences and browser links are
`ragdash.view.compare_retrievers`'s model."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ragdash.analysis import area, frames, sentences
from ragdash.ui import navigation, signal_board, state, widgets
from ragdash.view import compare_retrievers as model
from ragdash.viz import retrieval
from ragdash.viz.colors import label

run = state.require_run()
st.title("Compare retrievers")
st.caption("Paired over questions: the same question, two retrievers. Win: higher Score_IR at N; "
           "tie: equal. The Wilcoxon signed-rank test asks whether the differences are "
           "centred on zero.")
ir = widgets.ir_scores_or_stop(run)
rets = state.view(run).retrievers
if len(rets) < 2:
    st.info("This run scored a single retriever; comparing needs two or more.")
    st.stop()
budgets = state.view(run).budgets

c1, c2 = st.columns([3, 2])
chosen = widgets.retriever_picker("cmp_ret", rets, rets[:2], container=c1,
                                  label_="Retrievers to compare (two or more)")
if len(chosen) < 2:
    st.warning("Pick at least two retrievers.")
    st.stop()
if note := state.view(run).coverage_note(chosen, label):  # imported systems with questions missing
    st.caption(widgets.md(note))
n = widgets.budget_picker("cmp_n", budgets, area.separating_budget(ir, chosen[0], chosen[1]),
                          container=c2, help_="Opens at the budget where the first two "
                                              "retrievers differ most.")

# --- every signal ------------------------------------------------------------------------------
st.subheader(f"Do the signals rank the retrievers the same way? (N = {n})")
shown = tuple(["llm_only", *chosen])
gen = state.view(run).generation_budget
board = state.view(run).signal_board(n, shown)
signal_board.show(
    board, "cmp_sig", cost=state.view(run).signal_costs(list(board.signals)),
    note=(f"Score_IR at N = {n}; the answers behind the other signals were generated from the "
          f"first {gen:,} tokens." if gen and gen != n else ""))

# --- all pairs ---------------------------------------------------------------------------------
if len(chosen) > 2:
    st.subheader(f"Every pair at N = {n}")
    pairs = model.every_pair(state.view(run), chosen, n, name=label)
    for col in ("Wilcoxon p", "Holm p"):  # "—" where no test (a null cell would read "None")
        pairs[col] = pairs[col].map(sentences.p_text)
    st.dataframe(pairs.style.format({"mean difference": "{:+.3f}"}), hide_index=True,
                 width="stretch")
    st.caption("Holm p: adjusted for testing several pairs at once.")

# --- one pair in detail ------------------------------------------------------------------------
p1, p2 = st.columns(2)
a = widgets.url_select("First retriever", chosen, "cmp_a", format_func=label, container=p1)
b = widgets.url_select("Second retriever", [r for r in chosen if r != a], "cmp_b",
                       format_func=label, container=p2)
detail = model.pair(state.view(run), a, b, n, name=label)
st.subheader(detail.title)
for col, t in zip(st.columns(5), detail.tiles, strict=True):
    col.metric(t.label, t.value, help=t.help)
st.markdown(detail.verdict)

left, right = st.columns(2)
with left:
    widgets.chart(retrieval.pair_scatter(frames.score_matrix(ir, n), a, b, n), key="cmp_scatter")
with right:
    ref = chosen[0]
    curves = {(a, b): state.view(run).difference(a, b)}
    for other in chosen:
        if other not in (a, b) and (ref, other) not in curves and ref != other:
            curves[(ref, other)] = state.view(run).difference(ref, other)
    widgets.chart(retrieval.difference_curves(curves), key="cmp_diff")

# --- largest differences, linked to the browser ------------------------------------------------
st.subheader("Questions with the largest differences")
big = model.largest(detail, st.session_state.get("run") or state.run_key(run.path), n, budgets)
if big.table is not None:
    st.dataframe(
        big.table[["open", "qid", "question", a, b, "diff"]], hide_index=True, width="stretch",
        column_config={
            "open": st.column_config.LinkColumn("Browser", display_text="open ↗",
                                                help="Open the question in the browser"),
            "qid": st.column_config.TextColumn("id"),
            "question": st.column_config.TextColumn("Question", width="large"),
            a: st.column_config.ProgressColumn(label(a), min_value=0, max_value=1,
                                               format="%.2f"),
            b: st.column_config.ProgressColumn(label(b), min_value=0, max_value=1,
                                               format="%.2f"),
            "diff": st.column_config.NumberColumn(f"{label(a)} − {label(b)}", format="%+.2f"),
        })
    if big.top is not None:
        st.page_link(navigation.page("browser"), label=big.top_label,
                     icon=":material/manage_search:", query_params=big.top.params)
    else:
        st.caption(big.note)
else:
    st.info(big.note)

with st.expander("Per-question scores of the chosen retrievers"):
    mat = frames.score_matrix(ir, n)[chosen]
    st.dataframe(pd.DataFrame(mat).rename(columns=label).style.format("{:.3f}"), width="stretch")
