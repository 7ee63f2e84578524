"""Report: download per-question tables (CSV, Parquet), each figure (standalone HTML) and one
self-contained HTML report of the run (ragdash.html_report)."""

from __future__ import annotations

import io
import json

import pandas as pd
import plotly.io as pio
import streamlit as st

from ragdash import html_report
from ragdash.analysis import frames, judging
from ragdash.rundir import FILES, Run
from ragdash.ui import state, widgets
from ragdash.view import report as model
from ragdash.viz.colors import label

run = state.require_run()
st.title("Report")
st.caption("Everything here is built from the run directory alone; the same report comes from "
           "Python: `ragdash.html_report.write_report(run_dir, 'report.html')`.")
ir = run.table("ir_scores")
examples = run.table("examples")
judgments = state.view(run).judgments()
if ir is None or examples is None:
    widgets.missing("Nothing to report yet", "the run needs its ingest and score stages.")
    st.stop()
budgets = state.view(run).budgets
if failed := judging.all_failed(judgments):
    st.error(f"{failed} The HTML report says so and lists the errors; so does the "
             "`llm_errors` table below.", icon="⚠️")
safe_id = model.file_stem(run.id)


def parquet(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


# --- the HTML report --------------------------------------------------------------------------
with st.container(border=True):
    st.subheader("The HTML report")
    st.markdown("One file with the headline numbers, Table 3.1, every figure (interactive), the "
                "judge distributions, the thresholds and estimates, input issues and the "
                "manifest. Opens offline in any browser (plotly.js inside, ≈ 5 MB).")
    st.download_button("⬇ Download the HTML report", lambda: html_report.build_report(run.path),
                       f"ragdash-report-{safe_id}.html", "text/html", key="rep_html",
                       type="primary", on_click="ignore")

# --- tables -------------------------------------------------------------------------------------
st.subheader("Per-question tables")
n = widgets.budget_picker("rep_n", budgets, frames.default_budget(budgets),
                          label_="Budget N of the per-question table")
tables = model.tables(state.view(run), n)
for name, table in tables.items():
    df = table.frame
    c = st.columns([4, 1, 1])
    c[0].markdown(f"**{name}** — {table.about} ({len(df):,} rows)")
    c[1].download_button("CSV", df.to_csv(index=False), f"{safe_id}-{name}.csv", "text/csv",
                         key=f"rep_csv_{name}", on_click="ignore", width="stretch")
    c[2].download_button("Parquet", lambda df=df: parquet(df), f"{safe_id}-{name}.parquet",
                         "application/vnd.apache.parquet", key=f"rep_pq_{name}",
                         on_click="ignore", width="stretch")
with st.expander(f"Preview: questions at N = {n}"):
    st.dataframe(tables[f"questions_at_N{n}"].frame.head(100), hide_index=True,
                 width="stretch")
cal = run.calibration()
if cal is not None:
    name = FILES["calibration"].filename
    st.download_button(name, json.dumps(cal.to_dict(), indent=2), f"{safe_id}-{name}",
                       "application/json", key="rep_cal", on_click="ignore")

# --- figures ------------------------------------------------------------------------------------
st.subheader("Figures")
st.caption("Each as a standalone interactive HTML file (works offline). A PNG of any chart "
           "comes from the camera icon in its toolbar on the other pages.")


figs = state.MEMO.get(("report figures", str(run.path)), lambda reader: {
    name: fig.to_json() for name, fig in html_report.figures(Run(run.path, reader)).items()},
    "Drawing the figures…")
cols = st.columns(3)
for i, (name, js) in enumerate(figs.items()):
    cols[i % 3].download_button(
        name.replace("_", " "), lambda name=name, js=js: html_report.figure_html(
            pio.from_json(js), f"{run.id} · {name}"),
        f"{safe_id}-{name}.html", "text/html", key=f"rep_fig_{name}", on_click="ignore",
        icon=":material/insert_chart:", width="stretch")
st.caption(f"Retrievers: {', '.join(label(r) for r in state.view(run).retrievers)}.")
