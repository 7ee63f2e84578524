"""ragdash dashboard: `streamlit run app.py`.

One page per file in app_pages/, declared in `ragdash.ui.navigation`; the run picker in the
sidebar (bound to `?run=` in the URL) chooses the run directory every page reads.
`RAGDASH_DEMO_RUN` and `RAGDASH_RUNS_ROOT` point the app at other runs (tests use them);
`RAGDASH_MAX_UPLOAD_MB` is checked at start (`ragdash.dashboard_settings`).
"""

from __future__ import annotations

import streamlit as st

from ragdash.rundir.manifest import RunFileError
from ragdash.ui import navigation, server, state, widgets
from ragdash.viz.style import use_house_template

st.set_page_config(page_title="ragdash · RAG evaluation", page_icon="📊", layout="wide",
                   initial_sidebar_state="expanded")
widgets.css()
use_house_template()  # figures take the house template at creation, unvalidated

try:  # a bad dashboard setting stops here with its message, before any page runs
    server.max_upload_mb()
except ValueError as exc:
    st.error(f"ragdash cannot start: {widgets.md(exc)}")
    st.stop()

with st.sidebar:
    st.markdown("### ragdash")
    st.caption("Retrieval scored over token budgets · LLM judging · thresholds that predict "
               "answer quality from retrieval alone (El Yagouby, Chevallet & Gaussier, 2024).")
    state.select_run()

page = st.navigation(navigation.sections(), position="sidebar", expanded=True)
try:
    page.run()
except RunFileError as exc:  # a damaged file of the run: the page says which, and what to do
    st.error(f"This page cannot show the run. {widgets.md(exc.shown)}")
