"""The Data page's "Generate questions" panel: a synthetic test set from an uploaded corpus
(`ragdash.synth`). Settings and the LLM first, then the sample and the cost estimate, then
generation as a job process (`ragdash.synth.task`: progress, Cancel, resumable) that the panel
follows, then the acceptance rate, the rejected pairs with their reason and the kept ones; the
dataset is saved under the runs root and can become the page's current dataset (and so the
Build page's).

Layout only: sampling, calls, checks and files live in `ragdash.synth`. The expander is lazy:
nothing is loaded or estimated until it is opened.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ragdash.data.schema import Document
from ragdash.llm.settings import LLMSettings
from ragdash.rundir.lock import RunLocked
from ragdash.rundir.root import RunsRoot
from ragdash.synth.records import REASONS
from ragdash.synth.sample import Item
from ragdash.synth.settings import DEDUP_THRESHOLD, SynthSettings
from ragdash.synth.task import SynthTask, read_rows
from ragdash.ui import jobs, widgets

OPEN = "synth_open"


def _documents(corpus: str, fmt: str) -> list[Document]:
    """The corpus's documents, read once per session and file."""
    from ragdash.data import load_corpus

    held = st.session_state.get("synth_docs")
    if held is None or held[0] != (corpus, fmt):
        documents, _ = load_corpus(corpus, fmt)
        held = st.session_state["synth_docs"] = ((corpus, fmt), documents)
    return held[1]


def _sample(documents: list[Document], settings: SynthSettings, sig: tuple) -> list[Item]:
    from ragdash.synth.sample import sample

    held = st.session_state.get("synth_items")
    if held is None or held[0] != sig:
        held = st.session_state["synth_items"] = (sig, sample(documents, settings))
    return held[1]


def _form() -> tuple[SynthSettings, dict[str, Any]]:
    c = st.columns(4)
    n = int(c[0].number_input("Questions to generate", 1, 5000, 20, step=10, key="synth_n",
                              help="One LLM call each; the pairs that pass the checks are kept"))
    seed = int(c[1].number_input("Sample seed", 0, 1_000_000, 0, key="synth_seed"))
    multihop = c[2].checkbox("Multi-hop", key="synth_multihop",
                             help="Each question needs two chunks of two documents (the second "
                                  "is the closest by BM25); both spans are relevant parts")
    leakage = c[3].checkbox("Leakage check", key="synth_leakage",
                            help="Ask each kept question without the document and reject it "
                                 "when the LLM's reply holds the answer (one more call each)")
    c = st.columns(4)
    llm = widgets.llm_inputs("synth", c[:3])
    threshold = float(c[3].number_input(
        "Duplicate at cosine ≥", 0.5, 1.0, DEDUP_THRESHOLD, step=0.01, key="synth_dedup",
        help="MiniLM cosine of two questions at or above which the later one is rejected as a "
             "near-duplicate"))
    settings = SynthSettings(n=n, seed=seed, multihop=multihop, check_leakage=leakage,
                             dedup_threshold=threshold)
    return settings, llm


def _estimate(items: list[Item], documents: list[Document], settings: SynthSettings,
              llm: LLMSettings, root: RunsRoot) -> None:
    from ragdash.llm.cost import duration
    from ragdash.synth.estimate import describe, estimate

    per_doc = Counter(i.chunks[0].doc_id for i in items)
    st.caption(f"Sample: {len(items):,} chunks from {len(per_doc):,} of {len(documents):,} "
               f"documents, at most {max(per_doc.values(), default=0)} per document"
               + (", each with a partner chunk of another document" if settings.multihop
                  else "") + ".")
    est = estimate(items, settings, llm, root)
    usd = [e.usd for e in est.values() if e.usd is not None]
    seconds = [e.seconds for e in est.values() if e.seconds is not None]
    known = len(usd) == len(est), len(seconds) == len(est)
    m = st.columns(4)
    m[0].metric("LLM calls (estimate)", f"{sum(e.calls for e in est.values()):,}",
                help="With the leakage check: at most one more per kept pair")
    m[1].metric("Tokens in / out", f"{sum(e.tokens_in for e in est.values()):,} / "
                f"{sum(e.tokens_out for e in est.values()):,}")
    m[2].metric("Cost", "unknown" if not known[0] else "free" if not sum(usd)
                else f"${sum(usd):,.2f}", help="Local and Ollama models are free; others are "
                "priced by ragdash.llm.cost (RAGDASH_PRICES overrides)")
    m[3].metric("Time", duration(sum(seconds)) if known[1] else "unknown",
                help="From the latencies of this model in the LLM reply cache; before its "
                     "first call, a local model's time is assumed from the bundled demos' calls")
    for what, e in est.items():
        st.caption(f"{what.capitalize()}: {describe(e)}.")


def _home(root: Path, task: SynthTask) -> Path:
    """The job folder of `task`: the same task (a reload, a second tab) finds the same job."""
    return RunsRoot(root).datasets / ".jobs" / f"synth-{task.key()}"


def _use(saved: Path, source: dict[str, Any]) -> None:
    st.session_state["data_current"] = {"dataset": str(saved), "name": saved.name,
                                        "corpus": source["corpus"],
                                        "corpus_name": source["corpus_name"]}
    for k in ("data_loaded", "data_upload"):
        st.session_state.pop(k, None)


def _results(result: dict[str, Any], source: dict[str, Any], dataset_in_uploader: bool
             ) -> None:
    """What a finished job left (`ragdash.synth.task.run_task`): its counts, the rejected pairs
    with their reason and the kept ones, read back from the files it saved."""
    s, saved = result["summary"], (Path(result["dataset"]), Path(result["rejects"]))
    if not saved[0].exists():
        st.warning(f"The generated dataset {widgets.code(saved[0].name)} is gone; generate "
                   "again (finished LLM calls come from the reply cache).")
        return
    m = st.columns(4)
    m[0].metric("Generated pairs", f"{s['generated']:,}")
    m[1].metric("Kept", f"{s['kept']:,}")
    m[2].metric("Acceptance rate", f"{s['acceptance']:.0%}" if s["acceptance"] is not None
                else "–", help="Kept / generated: the pairs that passed every check")
    m[3].metric("Rejected", f"{s['rejected']:,}")
    if s["reasons"]:
        st.markdown("**Why pairs were rejected**")
        st.dataframe(pd.DataFrame([{"reason": REASONS[r], "pairs": n}
                                   for r, n in s["reasons"].items()]), hide_index=True)
        rejects = pd.DataFrame(read_rows(saved[1]))
        rejects["spans"] = rejects["spans"].map(lambda v: " ‖ ".join(v))
        st.dataframe(rejects[["id", "why", "question", "answer", "spans", "doc_ids"]],
                     hide_index=True, width="stretch", height=240, key="synth_rejects",
                     column_config={"why": st.column_config.TextColumn("reason", width="medium"),
                                    "spans": st.column_config.TextColumn("span(s) as written",
                                                                         width="large")})
    if s["kept"]:
        st.markdown("**Kept pairs** (the relevant parts are the document's own text)")
        kept = pd.DataFrame(read_rows(saved[0]))
        kept["relevant_parts"] = kept["relevant_parts"].map(lambda v: " ‖ ".join(v))
        st.dataframe(kept[["id", "question", "answer", "relevant_parts", "parts_doc_ids"]],
                     hide_index=True, width="stretch", height=240, key="synth_kept",
                     column_config={"relevant_parts": st.column_config.TextColumn(
                         "relevant parts", width="large")})
    st.caption(f"Saved as {widgets.code(Path(saved[0]).name)} (rejected pairs in "
               f"{widgets.code(saved[1].name)}).")
    c1, c2 = st.columns(2)
    if dataset_in_uploader:
        c1.info("Remove the dataset from the uploader above to use these questions.")
    else:
        c1.button("Use these questions as the current dataset", type="primary",
                  disabled=not s["kept"], on_click=_use, args=(saved[0], source),
                  key="synth_use", width="stretch")
    c2.download_button("Download the dataset (JSONL)", saved[0].read_bytes(), saved[0].name,
                       "application/jsonl", key="synth_download", on_click="ignore",
                       width="stretch")


def panel(source: dict[str, Any] | None, corpus_fmt: str, root: Path,
          dataset_in_uploader: bool = False) -> None:
    """The panel for `source` ({corpus, corpus_name}: an uploaded corpus, or None)."""
    with st.expander("Generate questions from the corpus", key=OPEN, on_change="rerun",
                     icon=":material/auto_awesome:") as box:
        if not box.open:
            return
        st.caption("No questions yet? An LLM writes them from your documents: chunks are "
                   "sampled across documents (no document dominates), the LLM writes a "
                   "question, its answer and the sentence that answers it, and a pair is kept "
                   "only when that sentence occurs verbatim in the document and holds the "
                   "answer, and the question repeats no kept one. The sentence becomes the "
                   "question's relevant part.")
        if source is None:
            st.info("Upload a corpus above (a dataset is not needed) to generate questions "
                    "from it.")
            return
        from ragdash.llm.types import LLMError

        settings, llm_cfg = _form()
        try:
            llm = LLMSettings.from_config(llm_cfg)
            documents = _documents(source["corpus"], corpus_fmt)
            items = _sample(documents, settings, (source["corpus"], corpus_fmt, settings.n,
                                                  settings.seed, settings.multihop))
            _estimate(items, documents, settings, llm, RunsRoot(root))
        except (ValueError, OSError, LLMError) as exc:  # DataError is a ValueError
            st.error(f"Cannot generate from {widgets.md(source['corpus_name'])}: "
                     f"{widgets.md(exc)}")
            return
        task = SynthTask(source["corpus"], corpus_fmt, source["corpus_name"], settings,
                         llm_cfg, str(root))
        home = _home(root, task)
        job = jobs.current(home)  # a reload, or another tab, finds the job of these settings
        busy = job is not None and job.active
        if st.button(f"Generate {len(items)} question{'s' if len(items) != 1 else ''}",
                     type="primary", disabled=busy or not items, key="synth_start",
                     help="Runs as a job of its own: you can leave the page, and Cancel it"):
            try:
                job = jobs.start_task(home, "synth", task.to_dict())
            except RunLocked as exc:
                st.error(widgets.md(exc))
        if job is not None:
            jobs.follow_run(home, key="synth_job")
            if job.state == "finished" and job.result:
                _results(dict(job.result), source, dataset_in_uploader)
