"""Data: upload a dataset and a corpus in any format ragdash reads, see every problem with its
record and field, preview the records and look at their statistics. Uploads go to a private
temporary folder, are size-limited and are never unpickled."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import streamlit as st

from ragdash.analysis import frames
from ragdash.data import (
    CORPUS_FORMATS,
    FORMATS,
    DataError,
    layout,
    load_dataset,
    readers,
    saved,
)
from ragdash.data.columns import describe as describe_columns
from ragdash.rundir import atomic_path
from ragdash.rundir.root import RunsRoot
from ragdash.ui import (
    data_resume,
    evidence_review,
    generate_questions,
    navigation,
    server,
    state,
    systems_upload,
    table_columns,
    widgets,
)
from ragdash.view import data as model
from ragdash.viz import questions

MAX_MB = server.max_upload_mb()  # checked by app.py at start
DATASET_TYPES = ["json", "gz", "bz2", "jsonl", "ndjson", "csv", "parquet", "pq", "xlsx"]
DOCUMENT_TYPES = [s.lstrip(".") for s in readers.SUFFIXES]  # txt, md, pdf, html, htm, docx
CORPUS_TYPES = ["jsonl", "ndjson", "csv", "parquet", "pq", "zip", "gz", *DOCUMENT_TYPES]

st.title("Data")
st.caption("A dataset holds questions, answers and their relevant parts; a corpus holds the "
           "documents retrieved from. HotpotQA and SQuAD JSON and CRAG's JSONL (its search "
           "results' pages) carry their own corpus; other JSONL, "
           "CSV, Parquet and Excel (.xlsx) datasets need one (JSONL/CSV/Parquet with doc_id, "
           "title, text, or a .zip of .txt, .md, .pdf, .html or .docx files, or one such "
           f"file). Uploads up to {MAX_MB} MB each; nothing is unpickled.")


def _safe_name(name: str) -> str:
    """A file name without folders or odd characters, keeping its extensions."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name).lstrip(".") or "upload"
    return base[-120:]


def _save(upload) -> Path:
    """Keep an upload under the runs root, named by its sha256 and original name
    (`_uploads/<sha256>/<name>`): a run built from it can be rebuilt after a restart, and its
    manifest names the file by content."""
    if upload.size > MAX_MB * 1024 * 1024:
        raise ValueError(f"{upload.name} is {upload.size / 1e6:.1f} MB; the limit is {MAX_MB} MB")
    digest = hashlib.sha256(upload.getvalue()).hexdigest()
    path = RunsRoot(state.runs_root()).uploads / digest / _safe_name(upload.name)
    if not path.exists():
        with atomic_path(path) as tmp:
            tmp.write_bytes(upload.getvalue())
    return path


for _key in ("data_fmt", "data_cfmt", "data_limit"):  # keep these choices across pages
    if _key in st.session_state:
        st.session_state[_key] = st.session_state[_key]


with st.container(border=True):
    st.subheader("Upload and validate")
    c1, c2 = st.columns(2)
    ds_file = c1.file_uploader("Dataset", type=DATASET_TYPES, key="data_ds",
                               max_upload_size=MAX_MB,
                               help="HotpotQA or SQuAD JSON (.json/.json.gz), CRAG's JSONL "
                                    "(.jsonl.bz2: its web pages are the corpus), or JSONL/CSV/"
                                    "Parquet or an Excel workbook (.xlsx) with a question and an "
                                    "answer column (named as you like: you map them below), and "
                                    "optionally id and relevant_parts")
    ds_fmt = c1.selectbox("Dataset format", ["auto", *FORMATS], key="data_fmt")
    corpus_file = c2.file_uploader("Corpus (optional for HotpotQA/SQuAD)", type=CORPUS_TYPES,
                                   key="data_corpus", max_upload_size=MAX_MB,
                                   help="JSONL/CSV/Parquet with doc_id, title, text; or a .zip "
                                        "of documents, or one document: .txt, .md, .pdf (text "
                                        "layer; pages kept), .html/.htm (main text; headings "
                                        "kept), .docx (headings kept). Encrypted, scanned and "
                                        "broken files are skipped and listed below.")
    corpus_fmt = c2.selectbox("Corpus format", ["auto", *[f for f in CORPUS_FORMATS
                                                           if f != "folder"]], key="data_cfmt")
    limit = st.number_input("Load only the first N questions (0 = all)", 0, 1_000_000, 0,
                            step=100, key="data_limit")

# the current upload: one record in the session, kept while the user visits other pages
corpus_alone = None  # a corpus uploaded without a dataset: questions can be generated from it
try:
    if ds_file is not None:
        st.session_state["data_current"] = {"dataset": str(_save(ds_file)), "name": ds_file.name}
    if corpus_file is not None and "data_current" in st.session_state:
        st.session_state["data_current"].update(corpus=str(_save(corpus_file)),
                                                corpus_name=corpus_file.name)
    elif ds_file is not None:
        st.session_state["data_current"].update(corpus=None, corpus_name=None)
    elif corpus_file is not None:
        corpus_alone = {"corpus": str(_save(corpus_file)), "corpus_name": corpus_file.name}
except (ValueError, OSError) as exc:
    st.error(widgets.md(exc))
current = st.session_state.get("data_current")
root = RunsRoot(state.runs_root())
if current is None and ds_file is None:  # a reload: the URL names the upload
    current = data_resume.restore(root.uploads)
if current and ds_file is not None:
    data_resume.note(current)  # offered again after a reload
if current and Path(current["dataset"]).resolve().is_relative_to(root.uploads.resolve()):
    st.query_params[data_resume.URL_KEY] = Path(current["dataset"]).parent.name
data_resume.panel(root.uploads, root.datasets,
                  expanded=current is None and ds_file is None and corpus_file is None)
if current and ds_file is None:
    c1, c2 = st.columns([4, 1])
    c1.info(f"Current upload: **{widgets.md(current['name'])}**"
            + (f" with corpus **{widgets.md(current['corpus_name'])}**"
               if current.get("corpus") else "")
            + ". It stays the current dataset on every page until you upload another or "
              "forget it.", icon="📄")
    if c2.button("Forget this upload", key="data_forget"):
        for k in ("data_current", "data_upload", "data_loaded"):
            st.session_state.pop(k, None)
        st.query_params.pop(data_resume.URL_KEY, None)
        st.rerun()
generate_questions.panel(current if current and current.get("corpus") else corpus_alone,
                         corpus_fmt, state.runs_root(), dataset_in_uploader=ds_file is not None)


def _cannot_load(exc: DataError | ValueError) -> None:
    """Say why the upload cannot be loaded, and take it off the Build page."""
    if isinstance(exc, DataError):
        i = exc.issue
        st.error(f"**{widgets.md(Path(i.file).name)}** cannot be loaded — record "
                 f"{widgets.md(i.record)}, field {widgets.code(i.field)}: {widgets.md(i.message)}")
    else:
        st.error(widgets.md(exc))
    st.session_state.pop("data_upload", None)


loaded, asking = None, False
if current is not None:
    ds_path = Path(current["dataset"])
    corpus_path = Path(current["corpus"]) if current.get("corpus") else None
    try:
        choice = table_columns.ask(  # a workbook's sheet, a column mapping (as chosen before)
            ds_path, ds_fmt, (current.get("sheet"), current.get("columns")))
        if choice is None:  # asked above: nothing to load until the user answers
            st.session_state.pop("data_upload", None)
            asking = True
        else:
            sheet, columns = choice
            if (sheet, columns) != (current.get("sheet"), current.get("columns")):
                current.update(sheet=sheet, columns=columns)
                saved.remember_choice(ds_path, sheet, columns)  # back after a reload
            sig = (str(ds_path), str(corpus_path), ds_fmt, corpus_fmt, int(limit))
            if sheet or columns:  # (other uploads keep the signature of their saved review)
                sig += (sheet, describe_columns(columns) if columns else None)
            cache = st.session_state.get("data_loaded")
            if cache is None or cache[0] != sig:
                with st.spinner("Reading and validating…"):
                    dataset = load_dataset(ds_path, ds_fmt, corpus=corpus_path,
                                           corpus_fmt=corpus_fmt, limit=int(limit) or None,
                                           sheet=sheet, columns=columns)
                st.session_state["data_loaded"] = (sig, dataset)
            loaded = st.session_state["data_loaded"][1]
            st.session_state["data_upload"] = evidence_review.use_saved({
                "dataset": str(ds_path), "format": ds_fmt, "name": current["name"],
                "corpus": None if corpus_path is None else str(corpus_path),
                "corpus_format": corpus_fmt, "corpus_name": current.get("corpus_name"),
                "examples": len(loaded.examples), "sheet": sheet, "columns": columns}, sig)
    except (DataError, ValueError) as exc:
        _cannot_load(exc)

if loaded is not None:
    m = st.columns(4)
    m[0].metric("Questions loaded", f"{len(loaded.examples):,}")
    m[1].metric("Documents", f"{len(loaded.documents):,}")
    m[2].metric("Records skipped (errors)", f"{loaded.skipped:,}")
    m[3].metric("Warnings (kept)", f"{loaded.warnings:,}")
    if licence := loaded.source.get("licence"):  # e.g. CRAG's: non-commercial
        st.warning(widgets.md(licence), icon=":material/gavel:")
    st.subheader("Validation report")
    if loaded.issues:
        issues = model.issues_table(loaded.issues)
        st.dataframe(issues, hide_index=True, width="stretch",
                     column_config={"message": st.column_config.TextColumn(width="large")})
        st.download_button("Download the report (CSV)", issues.to_csv(index=False),
                           "validation_report.csv", "text/csv", key="data_issues_dl",
                           on_click="ignore")
    else:
        st.success("No problem found: every record is valid and every relevant part occurs "
                   "in the corpus.")
    if loaded.examples and evidence_review.needs_evidence(loaded):  # find and review parts
        evidence_review.panel(loaded, current["name"], sig, state.runs_root(), source={
            "dataset": str(ds_path), "format": ds_fmt, "corpus": None if corpus_path is None
            else str(corpus_path), "corpus_format": corpus_fmt, "limit": int(limit) or None,
            "sheet": sheet, "columns": columns})
    if loaded.examples:
        st.page_link(navigation.page("build"), label="Build a run from this dataset →",
                     icon=":material/play_circle:")
        parts = evidence_review.found_parts(sig)  # evidence found above, as reviewed
        examples, documents = model.record_tables(loaded, parts)
        source = f"uploaded dataset {widgets.md(current['name'])}" + (
            " with the relevant parts found above (as reviewed)" if parts is not None else "")
    else:
        examples = None
elif asking:  # the upload's statistics follow once its sheet or columns are chosen
    examples = None
else:
    run = state.current_run()
    examples = run.table("examples") if run is not None else None
    documents = run.table("documents") if run is not None else None
    source = f"the dataset of run {widgets.md(run.id)}" if run is not None else ""
    if examples is not None and corpus_alone is not None:
        st.info(f"Corpus **{widgets.md(corpus_alone['corpus_name'])}** uploaded without a "
                "dataset (generate questions from it above, or upload a dataset); the "
                f"previews and statistics below are still those of {source}.", icon="ℹ️")
    elif examples is not None:
        st.info(f"Nothing uploaded: the previews and statistics below are those of {source}.",
                icon="ℹ️")

systems_upload.panel(_save, loaded)  # results of the user's own RAG systems

if examples is not None and len(examples):
    st.subheader("Statistics")
    st.caption(f"Of {source}.")
    stats = frames.example_stats(examples)
    meta = frames.metadata_columns(examples)
    figs = [questions.parts_per_question(stats), questions.part_lengths(examples["parts"])]
    figs += [questions.metadata_counts(examples, c) for c in meta[:2]]
    for i in range(0, len(figs), 2):
        cols = st.columns(2)
        for j, fig in enumerate(figs[i:i + 2]):
            with cols[j]:
                widgets.chart(fig, key=f"data_stat_{i + j}")
    st.dataframe(model.statistics(examples).style.format("{:,.1f}"), width="stretch")
    st.subheader("Preview")
    t1, t2 = st.tabs(["Questions", "Documents"])
    with t1:
        st.dataframe(model.preview(examples), hide_index=True, width="stretch",
                     column_config={"parts": st.column_config.TextColumn("relevant parts",
                                                                         width="large")})
    with t2:
        if documents is not None and len(documents):
            dv = layout.readable(documents.head(200)).assign(
                text=documents["text"].head(200).str.slice(0, 300))
            st.dataframe(dv, hide_index=True, width="stretch")
            st.caption(f"{len(documents):,} documents; text cut at 300 characters here.")
        else:
            st.info("No documents.")
