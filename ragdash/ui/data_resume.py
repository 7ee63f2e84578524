"""The Data page's "continue where you left off": uploads and saved datasets are kept on disk
under the runs root (`ragdash.data.saved`), so after a reload or a restart they are offered
again, and choosing one makes it the current dataset (its evidence review comes back with it,
`ragdash.ui.evidence_review`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import streamlit as st

from ragdash.data import saved
from ragdash.ui import widgets

CURRENT = "data_current"
NOTED = "data_noted"


def _ago(t: float) -> str:
    s = max(time.time() - t, 0)
    if s < 90:
        return "just now"
    if s < 5400:
        return f"{s / 60:.0f} min ago"
    if s < 129600:
        return f"{s / 3600:.0f} h ago"
    return f"{s / 86400:.0f} days ago"


def note(current: dict[str, Any]) -> None:
    """Remember the current upload on disk (once per change), to offer it after a reload."""
    key = (current["dataset"], current.get("corpus"))
    if st.session_state.get(NOTED) != key:
        saved.remember_upload(current["dataset"], current["name"], current.get("corpus"),
                              current.get("corpus_name"))
        st.session_state[NOTED] = key


URL_KEY = "upload"
"""The Data page's URL parameter naming the current upload (its folder), so a reload or a
bookmark brings the upload back with its sheet, column mapping and review."""


def current_of(u: saved.Upload) -> dict[str, Any]:
    """The session's current-upload record of a remembered upload."""
    return {"dataset": str(u.dataset), "name": u.name,
            "corpus": None if u.corpus is None else str(u.corpus),
            "corpus_name": u.corpus_name, "sheet": u.sheet, "columns": u.columns}


def restore(uploads: Path) -> dict[str, Any] | None:
    """The upload the URL names, made current again (None when the URL names none or it is
    gone)."""
    key = st.query_params.get(URL_KEY)
    if not key:
        return None
    found = saved.find_upload(uploads, str(key))
    if found is None:
        del st.query_params[URL_KEY]
        return None
    st.session_state[CURRENT] = current_of(found)
    st.session_state[NOTED] = (str(found.dataset), None if found.corpus is None
                               else str(found.corpus))
    return st.session_state[CURRENT]


def _choose(value: dict[str, Any]) -> None:
    st.session_state[CURRENT] = value
    for k in ("data_upload", "data_loaded"):
        st.session_state.pop(k, None)


def _upload_label(u: saved.Upload) -> str:
    corpus = f" + {u.corpus_name}" if u.corpus_name else ""
    return f"{u.name}{corpus} · uploaded {_ago(u.time)}"


def _saved_label(d: saved.SavedDataset) -> str:
    n = f"{d.questions:,} questions · " if d.questions is not None else ""
    corpus = f" · corpus {d.corpus_name}" if d.corpus_name else ""
    return f"{d.name} · {d.origin} · {n}{_ago(d.time)}{corpus}"


def panel(uploads: Path, datasets: Path, expanded: bool) -> None:
    """Recent uploads and saved datasets, each a choice that becomes the current dataset."""
    recent = saved.recent_uploads(uploads)
    kept = [d for d in saved.saved_datasets(datasets) if d.corpus is not None]
    if not recent and not kept:
        return
    with st.expander(f"Continue where you left off: {len(recent)} recent upload"
                     f"{'s' if len(recent) != 1 else ''}, {len(kept)} saved dataset"
                     f"{'s' if len(kept) != 1 else ''}", expanded=expanded):
        st.caption("Uploads and the datasets saved here (reviewed evidence, generated "
                   "questions) are kept on this server, so a reload loses nothing. Choose one "
                   "to make it the current dataset; a review you started comes back with it.")
        if recent:
            c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
            pick = c1.selectbox("Recent uploads", range(len(recent)), key="data_recent",
                                format_func=lambda i: _upload_label(recent[i]))
            u = recent[pick]
            c2.button("Continue with it", key="data_recent_go", width="stretch",
                      on_click=_choose, args=(current_of(u),))
        if kept:
            c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
            pick = c1.selectbox("Saved datasets", range(len(kept)), key="data_saved",
                                format_func=lambda i: _saved_label(kept[i]))
            d = kept[pick]
            c2.button("Use it", key="data_saved_go", width="stretch", on_click=_choose,
                      args=({"dataset": str(d.path), "name": d.name, "corpus": str(d.corpus),
                             "corpus_name": d.corpus_name or d.corpus.name},))
            st.caption(f"Saved as {widgets.code(d.path.name)} on this server.")  # no server path
