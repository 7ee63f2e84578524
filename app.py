"""ragdash dashboard: `streamlit run app.py`.

One page per file in app_pages/ (not `pages/`, which Streamlit would also run as an old-style
multipage folder); the run picker in the sidebar (bound to `?run=` in the URL) chooses the run
directory every page reads. `RAGDASH_DEMO_RUN` and `RAGDASH_RUNS_ROOT` point the app at
other runs (tests use them).
"""

from __future__ import annotations

import streamlit as st

from ragdash.ui import state, widgets

st.set_page_config(page_title="ragdash · RAG evaluation", page_icon="📊", layout="wide",
                   initial_sidebar_state="expanded")
widgets.css()

PAGES = {
    "Explore a run": [
        st.Page("app_pages/overview.py", title="Overview",
                icon=":material/dashboard:", url_path="home", default=True),
        st.Page("app_pages/retrieval.py", title="Retrieval scores",
                icon=":material/show_chart:", url_path="retrieval"),
        st.Page("app_pages/browser.py", title="Question browser",
                icon=":material/manage_search:", url_path="browser"),
        st.Page("app_pages/compare.py", title="Compare retrievers",
                icon=":material/compare_arrows:", url_path="compare"),
        st.Page("app_pages/llm.py", title="LLM results",
                icon=":material/smart_toy:", url_path="llm"),
        st.Page("app_pages/thresholds.py", title="Thresholds",
                icon=":material/tune:", url_path="thresholds"),
        st.Page("app_pages/report.py", title="Report",
                icon=":material/download:", url_path="report"),
    ],
    "Set up": [
        # the default page lives at "/": its own path too, so a link to /overview works
        st.Page("app_pages/overview.py", title="Overview", url_path="overview",
                visibility="hidden"),
        st.Page("app_pages/data.py", title="Data", icon=":material/dataset:",
                url_path="data"),
        st.Page("app_pages/build.py", title="Build a run",
                icon=":material/play_circle:", url_path="build"),
    ],
}

with st.sidebar:
    st.markdown("### ragdash")
    st.caption("Retrieval scored over token budgets · LLM judging · thresholds that predict "
               "answer quality from retrieval alone (El Yagouby, Chevallet & Gaussier, 2024).")
    state.select_run()

page = st.navigation(PAGES, position="sidebar", expanded=True)
page.run()
