"""ragdash dashboard entry point: `streamlit run app.py`.

Lists the runs (the bundled demo run first) and shows a run's retrieval summary. The full
multi-page dashboard builds on the same run directory.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from ragdash.runs import Run, list_runs

ROOT = Path(__file__).resolve().parent
DEMO_RUN = ROOT / "data" / "demo_run"
RUNS_ROOT = ROOT / "runs"

st.set_page_config(page_title="ragdash — RAG evaluation", page_icon="📊", layout="wide")


@st.cache_data(show_spinner=False)
def _table(path: str, mtime: float) -> pd.DataFrame:
    return pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)


def table(run: Run, name: str) -> pd.DataFrame:
    f = run.file(name)
    return _table(str(f), f.stat().st_mtime)


def available_runs() -> list[Run]:
    runs = [Run(DEMO_RUN)] if Run(DEMO_RUN).exists() else []
    return runs + list_runs(RUNS_ROOT)


st.title("ragdash")
st.caption("How much of each question's relevant parts lands in the first N tokens of the "
           "retrieved context — per retriever, per budget.")

runs = available_runs()
if not runs:
    st.info("No run yet. Create one with `ragdash run --config configs/paper.yaml --limit 100`.")
    st.stop()

labels = {f"{r.id} ({r.path})": r for r in runs}
choice = st.sidebar.selectbox("Run", list(labels), key="run")
run = labels[choice]
manifest = run.manifest
cfg = manifest.get("config", {})

stages = manifest.get("stages", {})
cols = st.columns(4)
cols[0].metric("Questions", stages.get("ingest", {}).get("counts", {}).get("examples", "—"))
cols[1].metric("Corpus documents", stages.get("ingest", {}).get("counts", {}).get("documents", "—"))
cols[2].metric("Chunks", stages.get("chunk", {}).get("counts", {}).get("chunks", "—"))
cols[3].metric("Retrievers", len(cfg.get("retrievers", {}).get("use", [])))

summary = run.path / "ir_summary.csv"
if summary.exists():
    df = table(run, "ir_summary.csv")
    long = df.melt(id_vars="budget", var_name="retriever", value_name="mean Score_IR")
    fig = px.line(long, x="budget", y="mean Score_IR", color="retriever", markers=True,
                  title="Mean Score_IR by token budget N",
                  labels={"budget": "token budget N"})
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    st.plotly_chart(fig, width="stretch")
    st.subheader("Mean Score_IR per budget (the paper's Table 3.1)")
    st.dataframe(df.set_index("budget").style.format("{:.3f}"), width="stretch")
else:
    st.warning("This run has no retrieval scores yet (its score stage has not run).")

with st.expander("Run manifest"):
    st.json(manifest, expanded=False)
