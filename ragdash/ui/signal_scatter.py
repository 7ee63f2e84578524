"""The LLM page's scatter of any two answer signals (Score_IR, the judge, reference metrics,
RAGAS and RAGChecker metrics), coloured by the truth; clicking a point opens the question
browser on that answer's question (with its retriever shown)."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis.signals import signal_label
from ragdash.rundir import Run
from ragdash.ui import navigation, state, widgets
from ragdash.view.links import answer_params
from ragdash.viz.signals import signal_scatter

KEY = "llm_scatter"
GOTO = "llm_scatter_goto"


def _picked() -> None:
    """Keep the clicked point's (qid, system) for the page to open."""
    event = st.session_state.get(KEY)
    points = event.selection.points if event is not None else []
    data = points[0].get("customdata") if points else None
    if data:
        st.session_state[GOTO] = (str(data[0]), str(data[1]))


def default_pair(names: list[str]) -> tuple[str, str]:
    """Score_IR against the judge when the run has both, else the first two signals."""
    x = "score_ir" if "score_ir" in names else names[0]
    rest = [n for n in names if n != x]
    return x, "judge" if "judge" in rest else rest[0]


@st.fragment
def panel(run: Run) -> None:
    """Two signal pickers and their scatter; a clicked point opens the question browser. A
    fragment: picking a signal redraws the scatter alone, not the rest of the page."""
    goto = st.session_state.pop(GOTO, None)
    if goto is not None:
        run_key = st.session_state.get("run") or state.run_key(run.path)
        st.switch_page(navigation.page("browser"),
                       query_params=answer_params(run_key, *goto))
    found = state.view(run).answer_signals()
    if found is None or len(found[2]) < 2:
        return
    frame, truth, names, correct_at = found
    st.markdown("**Two signals per answer.** Pick any two; each point is an answer, green when "
                "the truth calls it correct, red when wrong. Click a point to open its "
                "question in the question browser.")
    x0, y0 = default_pair(names)
    c1, c2 = st.columns(2)
    x = c1.selectbox("Signal across (x)", names, index=names.index(x0), key="llm_sig_x",
                     format_func=lambda s: signal_label(s, detail=True))
    y = c2.selectbox("Signal up (y)", names, index=names.index(y0), key="llm_sig_y",
                     format_func=lambda s: signal_label(s, detail=True))
    examples = run.table("examples")
    if examples is not None:
        frame = frame.merge(examples.assign(qid=examples["qid"].astype(str))[
            ["qid", "question"]], on="qid", how="left")
    fig = signal_scatter(frame, x, y, truth, correct_at)
    st.plotly_chart(fig, width="stretch", theme=None, config=widgets.PLOT_CONFIG, key=KEY,
                    on_select=_picked, selection_mode="points")
    st.caption("Signals with few values (the judge's 5 > 3 > 2 > 1 = 4 as 1, 0.5, 0.25, 0; "
               "exact match) are spread a little so that equal points stay visible.")
