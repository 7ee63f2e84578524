"""Overview: the run at a glance — size, best retriever, estimated vs judged correct answers,
the LLM calls that estimating from retrieval avoids, and the Score_IR curves. Layout only: what
it shows is `ragdash.view.overview`'s model."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis.sentences import plural
from ragdash.rundir import stage_table
from ragdash.stages.retrieve import empty_message
from ragdash.ui import navigation, state, trust, widgets
from ragdash.ui.doc_sections import paper_comparison
from ragdash.view.overview import Tile, overview
from ragdash.viz import retrieval
from ragdash.viz.colors import label

run = state.require_run()
page = overview(state.view(run), name=label)


def tile(col, t: Tile) -> None:
    """One metric tile of the model (its text is the model's own, no user string)."""
    col.metric(t.label, t.value, delta=t.delta, delta_color="off", delta_arrow="off",
               help=t.help)
    if t.caption:
        col.caption(t.caption)


st.title(widgets.md(page.title))
st.caption(" · ".join(f"{what} {widgets.code(value)}" if what == "dataset" else
                      f"{what} **{widgets.md(value)}**" if what != "created" else
                      f"created {widgets.md(value)}" for what, value in page.facts))
if page.empty_retrievals:
    st.warning("**Some questions got no retrieved chunk**, so they score 0:\n"
               + "\n".join(f"- {empty_message(w, quote=widgets.code)}"
                           for w in page.empty_retrievals), icon="⚠️")

if page.systems:  # plain sentences of names, counts and file names: escaped as Markdown
    st.info(f"**Your own systems**, {page.systems_heading}:\n"
            + "\n".join(f"- {widgets.md(t)}" for t in page.systems), icon="ℹ️")

# --- headline figures -------------------------------------------------------------------------
for col, t in zip(st.columns(4), page.tiles, strict=True):
    tile(col, t)
if page.all_failed:
    st.error(f"{page.all_failed} The errors are listed on the **LLM results** page.",
             icon="⚠️")
trust.summary(run)  # people's labels first: they say how far to trust the judge below
if (p := page.prediction) is not None:
    st.subheader(p.title)
    if p.basis:
        st.caption(p.basis)  # the model's own sentences: numbers and known names only
    if p.verdict:
        widgets.verdict(p.verdict)
    for col, t in zip(st.columns(4), p.tiles, strict=False):
        tile(col, t)
    if p.note:
        head, text = p.note
        st.caption(f"**{head}:** {text}" if head else text)
elif page.no_calibration:
    st.info(widgets.md(page.no_calibration), icon="ℹ️")

# --- the main figure --------------------------------------------------------------------------
if not page.has_scores:
    widgets.missing("No retrieval scores yet", "this run's score stage has not run; build it on "
                    "**Build a run** or with `ragdash run`.")
else:
    widgets.chart(retrieval.score_curves(state.view(run).bands(), page.order), key="ov_curves")
    st.markdown(widgets.md(page.curve_sentences))
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Mean Score_IR per budget (Table 3.1)")
        st.dataframe(page.table.rename(columns=label).style.format("{:.3f}").highlight_max(
            axis=1, props="font-weight:700;background-color:#e7f5ff"), width="stretch")
        st.caption("Bold: the highest mean at that budget, not a test: the sentences under the "
                   "curves say which leads hold beyond noise.")
    with right:
        st.subheader("Where to go next")
        for name, text, icon in (
            ("retrieval", "Score_IR curves, distributions, breakdowns", "show_chart"),
            ("browser", "Read one question's evidence per retriever", "manage_search"),
            ("compare", "Compare two retrievers question by question", "compare_arrows"),
            ("thresholds", "Predict answer quality from retrieval (h, k)", "tune"),
            ("report", "Download tables, figures and an HTML report", "download"),
        ):
            st.page_link(navigation.page(name), label=text, icon=f":material/{icon}:")
    if page.paper_data:  # the paper's data: its Table 3.1 too
        paper_comparison()

# --- stages and issues -------------------------------------------------------------------------
with st.expander("Pipeline stages and input issues"):
    stages = run.stages()
    if stages:
        st.dataframe(stage_table(stages.values()).drop(columns="mark"), hide_index=True,
                     width="stretch")
    issues = run.table("issues")
    if issues is not None and len(issues):
        st.markdown(f"**{plural(len(issues), 'input issue')}** (errors: record skipped; "
                    "warnings: kept)")
        st.dataframe(issues, hide_index=True, width="stretch")
    else:
        st.caption("No input issue was recorded.")
with st.expander("Run manifest (run.json)"):
    st.json(run.manifest, expanded=False)
