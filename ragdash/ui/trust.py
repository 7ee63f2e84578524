"""What a run's human labels say, on the Overview and the LLM results page: the share correct
per system with prediction-powered intervals, how many labels it rests on, how far the judge is
from the labels, and what retrieval alone would give (`ragdash.labels`)."""

from __future__ import annotations

import streamlit as st

from ragdash import labels
from ragdash.labels import headline, tables
from ragdash.rundir import Reader, Run
from ragdash.ui import navigation, state, widgets
from ragdash.viz import trust
from ragdash.viz.colors import label


def sections(run: Run) -> dict | None:
    """The labels, agreement and ppi sections of the run (`labels.current`; None without
    answers), kept until one of the files they read changes."""
    def findings(reader: Reader) -> dict | None:
        here = Run(run.path, reader)
        return labels.current(here) if here.has("answers") else None

    return state.MEMO.get(("label findings", str(run.path)), findings, "Weighing the labels…")


def summary(run: Run, detail: bool = False) -> None:
    """The trust section: the headline share correct with its interval and n, one tile per
    system, the judge's agreement verdict, the labels needed to halve the interval; with
    `detail`, the estimators' chart, the table and the agreement tables too. Without labels,
    a pointer to the labelling page."""
    found = sections(run)
    if found is None:
        return
    lab, ppi, agreement = found["labels"], found["ppi"], found["agreement"]
    st.subheader("Share correct, checked against labels")
    if not lab["n"]:
        st.info("No answer is labelled yet. A few dozen labels (**Label answers**) check the "
                "judge and give the share correct with an interval that holds whatever the "
                "judge's bias.")
        st.page_link(navigation.page("label"), label="Label answers",
                     icon=":material/rate_review:")
        return
    if lab["stand_in"]:
        st.warning("**These are stand-in labels, not people's:** "
                   + widgets.md(", ".join(lab["stand_in"])) + ". They show how the estimates "
                   "work; label answers yourself for figures you can trust.", icon="⚠️")
    lines = headline.sentences(ppi)
    if lines:
        st.markdown(" ".join(lines))
    else:
        st.info(f"{lab['n']} label(s) so far: too few for an interval. Label a few more.")
    tiles = [s for s in ppi if s != "pooled" and headline.best(ppi[s])]
    for row in range(0, len(tiles), 6):
        cols = st.columns(6)
        for col, system in zip(cols, tiles[row:row + 6], strict=False):
            e = ppi[system][headline.best(ppi[system])]
            col.metric(label(system), f"{e['pct']:.0f} %",
                       delta=f"{e['ci'][0]:.0f}–{e['ci'][1]:.0f} % · "
                             f"{ppi[system]['n_labelled']} labels",
                       delta_color="off", delta_arrow="off",
                       help=f"{e['method']}; {ppi[system]['n_labelled']} labelled and "
                            f"{ppi[system]['n_unlabelled']} unlabelled answers")
    if verdict := agreement.get("verdict"):
        st.markdown(f"**How good is the judge?** {widgets.md(verdict)}")
    if half := tables.halve_line(ppi):
        st.caption(widgets.md(half))
    for line in tables.labels_line(lab)[1:]:
        if not line.startswith("Stand-in"):  # the warning above says so
            st.caption(widgets.md(line))
    if detail:
        widgets.chart(trust.intervals(ppi), key="trust_intervals")
        st.dataframe(tables.ppi_frame(ppi), width="stretch")
        for note in tables.footnotes(ppi):
            st.caption(widgets.md(note))
        st.dataframe(tables.agreement_frame(agreement), hide_index=True, width="stretch")
        if (conf := tables.confusion_frame(agreement)) is not None:
            st.caption("Labels (rows) against the judge's scores (columns):")
            st.dataframe(conf, width="stretch")
