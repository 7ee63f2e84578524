"""What a run's human labels say, on the Overview and the LLM results page: the share correct
per system with prediction-powered intervals, how many labels it rests on, how far the judge is
from the labels, and what retrieval alone would give (`ragdash.labels`)."""

from __future__ import annotations

import streamlit as st

from ragdash.calibration.survey import MIN_SYSTEM_LABELS
from ragdash.labels import headline, tables
from ragdash.rundir import Run
from ragdash.ui import navigation, state, widgets
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
    share = found["share"]
    st.markdown(" ".join(headline.sentences(share, lab, (lab.get("sample") or {}).get("rule"))))
    systems = list(share["systems"])
    for row in range(0, len(systems), 6):
        cols = st.columns(6)
        for col, system in zip(cols, systems[row:row + 6], strict=False):
            e = share["systems"][system]
            value, caption = headline.tile(e)
            col.metric(label(system), value,
                       help=(e["method"] if e.get("ci") else e.get("reason") or "")
                       + f"; {e['labels']} of its {e['answers']} answers labelled")
            col.caption(caption)  # under the tile, wrapped: a metric's delta is cut short
    st.caption(f"Intervals at {share['level']:.0%} on {share['estimand_text']}; a system's "
               f"interval from {MIN_SYSTEM_LABELS} of its labels on.")
    if verdict := agreement.get("verdict"):
        st.markdown(f"**How good is the judge?** {widgets.md(verdict)}")
    for line in tables.labels_line(lab)[1:]:
        if not line.startswith("Stand-in"):  # the warning above says so
            st.caption(widgets.md(line))
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
