"""The Data page's "Results of your own system": a file per system with its name, read and
checked at once (the format detected, the records counted, a located error for a file that
cannot be read, and how many questions of the uploaded dataset it matches), kept in the session
for the Build page, which lists the systems beside the built-in retrievers (`build_choice`).
Uploads are saved by the Data page's own `save` (size-limited, never unpickled)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from ragdash.data import DataError
from ragdash.retrieval import RETRIEVERS
from ragdash.systems import FORMATS, check_name, match, read_system
from ragdash.ui import widgets
from ragdash.viz.colors import label

KEY = "data_systems"
"""Session key of the systems added: {name: {file, format, upload, detected, records,
matched}}."""
TYPES = ["jsonl", "ndjson", "json", "csv", "parquet", "pq", "xlsx", "txt", "trec", "run", "tsv"]
"""File types offered: RAGAS-style records, spans, and TREC runs (often without a type)."""
ABOUT = ("Compare **your own RAG system** with the built-in retrievers on this dataset: upload "
         "what it retrieved (and answered) for these questions. RAGAS-style records "
         "(`user_input`, `retrieved_contexts` in rank order, optional `response`; JSONL, CSV, "
         "Parquet or .xlsx), OpenInference spans exported from Phoenix (Parquet or JSONL), or "
         "a TREC run file (`qid Q0 docid rank score tag`, ids of the corpus). Its contexts "
         "become its retrieved chunks, scored exactly as the built-in retrievers' are. To compare "
         "your systems alone, leave *Retrievers* empty on the Build page.")


def added() -> dict[str, dict[str, Any]]:
    """The systems added in this session, by name."""
    return st.session_state.setdefault(KEY, {})


def panel(save: Callable[[Any], Path], loaded: Any = None) -> None:
    """The upload panel: a name, a format (auto) and a file; a file read without error is
    added under its name (replacing one of the same name), and the uploader is cleared.
    `loaded`: the uploaded dataset, when there is one (each system's matches are counted)."""
    systems = added()
    turn = st.session_state.setdefault("sys_turn", 0)  # a new key clears the uploader
    with st.container(border=True):
        st.subheader("Results of your own system (optional)")
        st.caption(ABOUT)
        c1, c2, c3 = st.columns([2, 1, 3])
        name = c1.text_input("System name", key="sys_name", placeholder="mine",
                             help="Letters, digits, '_' or '-' (up to 40), not the name of a "
                                  "built-in retriever: how pages call it")
        fmt = c2.selectbox("Format", ["auto", *FORMATS], key="sys_fmt",
                           help="auto: told from the content")
        upload = c3.file_uploader("Its results file", type=TYPES, key=f"sys_file_{turn}",
                                  help="One file per system; add several systems one by one")
        if upload is not None:
            _add(name, fmt, upload, save, loaded, systems)
        for n, s in list(systems.items()):
            r1, r2 = st.columns([5, 1])
            r1.markdown(widgets.chip(n) + " · " + widgets.md(_said(s, loaded)),
                        unsafe_allow_html=True)
            if r2.button("Remove", key=f"sys_rm_{n}"):
                systems.pop(n, None)
                st.rerun()
        if systems:
            st.caption("The Build page lists these systems beside the built-in retrievers.")


def _add(name: str, fmt: str, upload: Any, save: Callable[[Any], Path], loaded: Any,
         systems: dict[str, dict[str, Any]]) -> None:
    try:
        name = check_name(name.strip(), tuple(RETRIEVERS))
    except ValueError as exc:
        st.warning(f"Name the system first: {widgets.md(exc)}")
        return
    try:
        path = save(upload)
        got = read_system(path, fmt)
    except DataError as exc:
        i = exc.issue
        st.error(f"**{widgets.md(upload.name)}** cannot be read as a system's results — record "
                 f"{widgets.md(i.record)}, field {widgets.code(i.field)}: "
                 f"{widgets.md(i.message)}")
        return
    except (ValueError, OSError) as exc:
        st.error(widgets.md(exc))
        return
    matched = None
    if loaded is not None and loaded.examples:
        try:
            matched = len(match(name, got, [e.qid for e in loaded.examples],
                                [e.question for e in loaded.examples]).records)
        except DataError:
            matched = 0
    systems[name] = {"file": str(path), "format": fmt, "upload": upload.name,
                     "detected": got.format, "records": len(got.records), "matched": matched,
                     "answers": sum(1 for r in got.records if r.answer)}
    st.session_state["sys_turn"] = st.session_state.get("sys_turn", 0) + 1
    st.rerun()


def _said(s: dict[str, Any], loaded: Any) -> str:
    """One line about an added system (plain text: the page escapes it)."""
    text = (f"{s['upload']}: {s['detected']}, {s['records']:,} records"
            + (f", {s['answers']:,} with an answer" if s.get("answers") else ""))
    if s.get("matched") is not None and loaded is not None:
        text += f"; matches {s['matched']:,} of the {len(loaded.examples):,} questions loaded"
    return text


def build_choice(container: Any) -> dict[str, dict[str, Any]]:
    """The Build page's choice among the systems added on the Data page (all by default):
    {name: {file, format}} for `BuildForm.systems`."""
    systems = added()
    if not systems:
        container.caption("Your own RAG system can sit beside these: upload its results on "
                          "the **Data** page (Results of your own system).")
        return {}
    chosen = container.multiselect(
        "Your systems (uploaded on the Data page)", list(systems), default=list(systems),
        format_func=label, key="build_systems",
        help="Each one's retrieved contexts are its chunks, scored as the built-in retrievers' "
             "are; its answers are its own")
    return {n: {"file": systems[n]["file"], "format": systems[n]["format"]} for n in chosen}
