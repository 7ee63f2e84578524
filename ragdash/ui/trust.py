"""What a run's human labels say, on the Overview and the LLM results page: the share correct
per system with prediction-powered intervals, how many labels it rests on, how far the judge is
from the labels, and what retrieval alone would give (`ragdash.labels`); the section's
sentences and tiles are `ragdash.view.trust`'s model."""

from __future__ import annotations

import streamlit as st

from ragdash.labels import tables
from ragdash.rundir import Run
from ragdash.ui import navigation, state, widgets
from ragdash.view import trust as model
from ragdash.viz import trust
from ragdash.viz.colors import label


def sections(run: Run) -> dict | None:
    """The labels, agreement and ppi sections of the run (`RunView.label_findings`, the fact
    the report and every page share; None without answers), kept until one of the files they
    read changes."""
    return state.view(run).label_findings()


def summary(run: Run, detail: bool = False) -> None:
    """The trust section: the headline share correct with its interval and n, one tile per
    system, the judge's agreement verdict, the labels needed to halve the interval; with
    `detail`, the estimators' chart, the table and the agreement tables too. Without labels,
    a pointer to the labelling page."""
    found = sections(run)
    if found is None:
        return
    ppi, agreement = found["ppi"], found["agreement"]
    said = model.summary(found, name=label, md=widgets.md)
    st.subheader(model.HEADING)
    if not said.labelled:
        st.info(model.NO_LABELS)
        st.page_link(navigation.page("label"), label="Label answers",
                     icon=":material/rate_review:")
        return
    if said.stand_in:
        st.warning(said.stand_in, icon="⚠️")
    st.markdown(said.headline)
    for row in range(0, len(said.tiles), 6):
        for col, t in zip(st.columns(6), said.tiles[row:row + 6], strict=False):
            col.metric(t.label, t.value, help=t.help)
            col.caption(t.caption)  # under the tile, wrapped: a metric's delta is cut short
    st.caption(said.intervals)
    if said.verdict:
        st.markdown(said.verdict)
    for note in said.notes:
        st.caption(note)
    if detail:
        st.markdown("**Other estimators** (answers treated as drawn from an endless supply; "
                    "PPI corrects the judge's or a retrieval model's predictions with the "
                    "sample's labels):")
        widgets.chart(trust.intervals(ppi), key="trust_intervals")
        st.dataframe(tables.ppi_frame(ppi), width="stretch")
        for note in tables.footnotes(ppi):
            st.caption(widgets.md(note))
        st.dataframe(tables.agreement_frame(agreement), hide_index=True, width="stretch")
        if (conf := tables.confusion_frame(agreement)) is not None:
            st.caption("Labels (rows) against the judge's scores (columns):")
            st.dataframe(conf, width="stretch")
