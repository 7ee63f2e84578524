"""The Data page's evidence panel, for an uploaded dataset without relevant parts: find evidence
(`ragdash.evidence`, in a job process: `ragdash.evidence.task`), review it question by
question (accept, reject, pick another candidate, or give your own part: a candidate trimmed,
a passage pasted, a sentence searched for), and save the result as a dataset file that the
Build page then uses.

Layout only: finding, deciding and saving live in `ragdash.evidence`. Document, question and
answer text is HTML-escaped (`ragdash.ui.evidence.highlight`).
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ragdash.analysis.matching import Match
from ragdash.data.generic import PARTS, PARTS_ABSENT
from ragdash.data.saved import record as record_saved
from ragdash.data.schema import Dataset
from ragdash.evidence import manual, output, review
from ragdash.evidence.align import ALIGNED_LLM
from ragdash.evidence.locate import Corpus
from ragdash.evidence.normalize import answer_spans
from ragdash.evidence.records import USER, Candidate, EvidenceResult, QuestionEvidence
from ragdash.evidence.task import EvidenceTask
from ragdash.llm.settings import LLMSettings
from ragdash.rundir.lock import RunLocked
from ragdash.ui import evidence as marks
from ragdash.ui import jobs, widgets
from ragdash.view.data import ESTIMATE_SAMPLE, evidence_estimate

FOUND, DECISIONS, SAVED = "data_evidence", "data_evidence_decisions", "data_evidence_saved"
SAVED_WITH = "data_evidence_saved_decisions"
SEARCH, SUGGESTIONS, OWN_ERROR = "data_evidence_search", "ev_suggestions", "ev_own_error"
RESTORED, STORED = "ev_restored", "ev_stored"
PICKED = "ev_question"
ESTIMATE = "ev_estimate_said"
"""Session key of the last LLM estimate: ((upload, LLM settings), what it said)."""
ANSWER_COLOR = "#ffe066"
CARD_CSS = """<style>
.rd-chunk.ev-kept{border:2px solid #2f9e44;}
.ev-conf{display:inline-block;height:8px;border-radius:4px;background:#4c6ef5;}
.ev-bar{display:inline-block;width:90px;height:8px;border-radius:4px;background:#e3e7ef;}
.ev-q{font-size:1.02rem;margin:0 0 4px 0;overflow-wrap:anywhere;}
.ev-supports{font-size:0.85rem;color:#495057;margin:2px 0 4px 0;overflow-wrap:anywhere;}
</style>"""


def needs_evidence(dataset: Dataset) -> bool:
    """Whether an uploaded dataset has no relevant_parts column."""
    return dataset.source.get(PARTS) == PARTS_ABSENT


def use_saved(upload: dict[str, Any], sig: tuple) -> dict[str, Any]:
    """The Data page's upload record, pointing at the reviewed dataset once one is saved for
    this upload (the Build page builds from `upload['dataset']`; the saved file is a plain
    JSONL dataset, so the upload's sheet and column mapping do not apply to it)."""
    saved = st.session_state.get(SAVED, {}).get(sig)
    return {**upload, "sheet": None, "columns": None, **saved} if saved else upload


def found_parts(sig: tuple) -> dict[str, list[str]] | None:
    """{qid: its relevant parts as the review now stands} once evidence was found for the
    upload `sig` (None before): what the Data page's statistics describe."""
    found = st.session_state.get(FOUND)
    if found is None or found[0] != sig:
        return None
    decided = review.apply(found[1], st.session_state.get(DECISIONS, {}))
    return {q.qid: [p.text for p in q.parts] for q in decided.questions}


def _box(c: Candidate, answer: str, head: str, kept: bool = False, note: str = "") -> str:
    """A part's text with the answer marked, under `head` and `note` (HTML, escaped by the
    caller)."""
    matches = [Match(0, s, e) for s, e in answer_spans(c.text, answer)]
    body = marks.highlight(c.text, 0, matches, [ANSWER_COLOR])
    return (f'<div class="rd-chunk{" ev-kept" if kept else ""}"><div class="rd-head">{head}'
            f"</div>{note}<div>{body}</div></div>")


def _card(qe: QuestionEvidence, i: int, kept: bool) -> str:
    """One candidate; `kept`: it is what will be saved (the decision applied)."""
    c = qe.candidates[i]
    if c.method == USER:
        scores = "<span>chosen by you</span>"
    elif c.supports:  # aligned with a sentence of an answer written in other words
        scores = _why(c)
    else:
        scores = (f'<span><span class="ev-bar"><span class="ev-conf" style="width:'
                  f'{c.confidence * 100:.0f}%"></span></span> confidence {c.confidence:.2f}'
                  f"</span><span>BM25 {c.bm25:.2f} · cosine {c.cosine:.2f}</span>")
    head = (f"<b>Candidate {i + 1}</b>{scores}<span>document {html.escape(c.doc_id)}</span>"
            + ("<span><b>· kept</b></span>" if kept else "")
            + ("<span>· quoted by the LLM</span>" if c.method == "llm" else "")
            + ("<span>· confirmed by the LLM</span>" if c.method == ALIGNED_LLM else ""))
    note = (f'<div class="ev-supports">supports the answer sentence: <i>'
            f"{html.escape(c.supports)}</i></div>" if c.supports else "")
    return _box(c, qe.answer, head, kept, note)


def _why(c: Candidate) -> str:
    """The scores of an aligned part (`ragdash.evidence.align`): why it was chosen."""
    return (f'<span><span class="ev-bar"><span class="ev-conf" style="width:'
            f'{c.confidence * 100:.0f}%"></span></span> confidence {c.confidence:.2f}</span>'
            f"<span>BM25 {c.bm25:.2f} (share {c.lexical or 0:.2f}) · cosine with the answer "
            f"sentence {c.cosine:.2f} · with the question {c.question_cosine or 0:.2f}</span>")


def _searchable(dataset: Dataset, sig: tuple) -> manual.Searchable:
    """The upload's corpus, searchable (built once per upload and session)."""
    held = st.session_state.get(SEARCH)
    if held is None or held[0] != sig:
        held = st.session_state[SEARCH] = (sig, manual.Searchable(Corpus(dataset.documents)))
    return held[1]


def _use(qid: str, part: Candidate) -> None:
    """Make `part` the question's evidence (a callback: before the page reruns)."""
    sig, result = st.session_state[FOUND]
    qe = next(q for q in result.questions if q.qid == qid)
    new, i = manual.with_part(qe, part)
    st.session_state[FOUND] = (sig, result.replace_question(new))
    st.session_state[DECISIONS][qid] = review.pick(i)
    st.session_state[f"ev_decision_{qid}"] = review.pick(i)  # the radio shows the decision
    st.session_state.get(OWN_ERROR, {}).pop(qid, None)


def _use_pasted(qid: str, dataset: Dataset, sig: tuple, prefer: list[str]) -> None:
    try:
        part = _searchable(dataset, sig).find(st.session_state.get(f"ev_paste_{qid}", ""),
                                              prefer)
    except ValueError as e:
        st.session_state.setdefault(OWN_ERROR, {})[qid] = str(e)
        return
    _use(qid, part)


def _own_part(qe: QuestionEvidence, dataset: Dataset, sig: tuple) -> None:
    """Trim a candidate or give the supporting sentence yourself, pasted or picked."""
    qid = qe.qid
    with st.expander("Your own evidence: trim a candidate, or give the sentence that supports "
                     "the answer", expanded=not qe.found):
        st.caption("Paste a passage copied from a document: a candidate cut down to what "
                   "supports the answer, or the sentence that an answer in other words rests "
                   "on. Case and spacing may differ; every other character must match a "
                   "document. Or search the documents and use one of their sentences.")
        st.text_area("Passage from a document", key=f"ev_paste_{qid}", height=90)
        st.button("Use this passage", key=f"ev_paste_go_{qid}", on_click=_use_pasted,
                  args=(qid, dataset, sig, [c.doc_id for c in qe.candidates]))
        if error := st.session_state.get(OWN_ERROR, {}).get(qid):
            st.error(f"Not used: {widgets.md(error)}.")
        with st.form(f"ev_search_form_{qid}", border=False):
            query = st.text_input("Search the documents for sentences like",
                                  value=f"{qe.question} {qe.answer}", key=f"ev_search_{qid}")
            searched = st.form_submit_button("Search the documents")
        if searched:
            st.session_state.setdefault(SUGGESTIONS, {})[qid] = \
                _searchable(dataset, sig).suggest(query)
        suggestions = st.session_state.get(SUGGESTIONS, {}).get(qid)
        if suggestions is not None and not suggestions:
            st.info("No sentence shares a word with the search.")
        for j, c in enumerate(suggestions or []):
            st.html(marks.CSS + CARD_CSS + '<div class="rd-ctx">' + _box(
                c, qe.answer, f"<b>Sentence {j + 1}</b><span>document "
                f"{html.escape(c.doc_id)}</span><span>BM25 {c.bm25:.2f}</span>") + "</div>")
            st.button(f"Use sentence {j + 1}", key=f"ev_use_{qid}_{j}", on_click=_use,
                      args=(qid, c))


def _remember(qid: str, key: str) -> None:
    value = st.session_state.get(key)
    if value is not None:
        st.session_state[DECISIONS][qid] = value


def _next(order: list[str]) -> None:
    now = st.session_state.get(PICKED)
    i = order.index(now) if now in order else -1
    st.session_state[PICKED] = order[(i + 1) % len(order)]


def _question(result: EvidenceResult, decisions: dict[str, str], order: list[str],
              dataset: Dataset, sig: tuple) -> None:
    by_id = {q.qid: q for q in result.questions}
    if st.session_state.get(PICKED) not in by_id:  # a reload takes up the first not reviewed
        st.session_state[PICKED] = review.resume_at(order, decisions)
    c1, c2 = st.columns([5, 1])
    qid = c1.selectbox(f"Question to review (least confident first; {review.REVIEWED_MARK} "
                       "reviewed)", order, key=PICKED,
                       format_func=lambda k: review.question_label(by_id[k], decisions))
    c2.button("Next question →", on_click=_next, args=(order,), key="ev_next",
              width="stretch")
    qe = by_id[qid]
    st.html(f'{CARD_CSS}<div class="ev-q"><b>Q:</b> {html.escape(qe.question)}<br><b>Answer:'
            f"</b> {html.escape(qe.answer)}</div>")
    kept = review.decide(qe, decisions.get(qid)).kept
    if qe.candidates:
        st.html(marks.CSS + CARD_CSS + '<div class="rd-ctx">' + "".join(
            _card(qe, i, i in kept) for i in range(len(qe.candidates))) + "</div>")
    else:
        st.warning(f"No evidence: {widgets.md(qe.reason)}. The question is left out of the "
                   "dataset unless you give its evidence below.")
    if qe.unsupported:
        st.html(CARD_CSS + '<div class="ev-supports"><b>Answer sentences no corpus sentence '
                "supports:</b><ul>" + "".join(f"<li>{html.escape(s)}</li>"
                                              for s in qe.unsupported) + "</ul></div>")
    options = review.choices(qe)
    key = f"ev_decision_{qid}"
    current = decisions.get(qid)
    held = st.session_state.get(key) in options  # set by the radio, or by `_use`
    st.radio("Decision", options, key=key, index=None if held or current not in options
             else options.index(current), format_func=lambda d: review.describe(qe, d),
             on_change=_remember, args=(qid, key),
             help="No decision: the found part(s) are kept and marked parts_source 'auto'.")
    _own_part(qe, dataset, sig)


def _save(result: EvidenceResult, decisions: dict[str, str], name: str, sig: tuple,
          root: Path) -> None:
    decided = review.apply(result, decisions)
    c1, c2 = st.columns(2)
    if c1.button("Save the reviewed dataset for the Build page", type="primary",
                 key="ev_save", width="stretch"):
        path = review.save(result, decisions, root, name)
        upload = st.session_state.get("data_current") or {}
        record_saved(path, f"evidence reviewed for {name}", sig[1] if sig[1] != "None" else None,
                     sig[3], upload.get("corpus_name"), len(decided.found))
        st.session_state.setdefault(SAVED, {})[sig] = {
            "dataset": str(path), "format": "jsonl", "name": f"{path.name} (evidence reviewed)",
            "examples": len(decided.found)}
        st.session_state[SAVED_WITH] = dict(decisions)
        if "data_upload" in st.session_state:
            st.session_state["data_upload"] = use_saved(st.session_state["data_upload"], sig)
    c2.download_button("Download the dataset (JSONL)", output.to_jsonl(
        output.dataset_rows(decided)), f"{Path(name).stem}-evidence.jsonl",
        "application/jsonl", key="ev_download", on_click="ignore", width="stretch")
    saved = st.session_state.get(SAVED, {}).get(sig)
    if saved and st.session_state.get(SAVED_WITH) != decisions:
        st.warning("Decisions changed since the last save: save again for the Build page to "
                   "use them.")
    elif saved:
        st.success(f"Saved as {widgets.code(Path(saved['dataset']).name)}: "
                   f"{saved['examples']:,} questions "
                   "with relevant parts. **Build a run** now uses this file.")


def _state_file(sig: tuple) -> Path:
    return review.state_file(sig[0], sig[1:])


def _restore(sig: tuple) -> bool:
    """Take up the review kept on disk for this upload (a reload, or the same files uploaded
    again); False when there is none."""
    kept = review.restore(_state_file(sig))
    if kept is None:
        return False
    result, decisions, saved, when = kept
    st.session_state[FOUND], st.session_state[DECISIONS] = (sig, result), decisions
    for key in (SUGGESTIONS, OWN_ERROR):
        st.session_state.pop(key, None)
    if saved and Path(saved.get("dataset", "")).is_file():
        st.session_state.setdefault(SAVED, {})[sig] = saved["record"]
        st.session_state[SAVED_WITH] = saved["decisions"]
        if "data_upload" in st.session_state:
            st.session_state["data_upload"] = use_saved(st.session_state["data_upload"], sig)
    st.session_state[STORED] = as_restored = _fingerprint(sig)
    st.session_state.setdefault(RESTORED, {})[sig] = (
        f"{len(decisions):,} decision{'s' if len(decisions) != 1 else ''}, last changed "
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(when))}", as_restored)
    return True


def restored_note(sig: tuple) -> str | None:
    """What the review restored from disk held, while it is still as restored: a decision made
    since (or a save) makes the note's count outdated, so it is no longer shown."""
    note = st.session_state.get(RESTORED, {}).get(sig)
    if note is None or FOUND not in st.session_state:
        return None
    text, as_restored = note
    return text if _fingerprint(sig) == as_restored else None


def _fingerprint(sig: tuple) -> tuple:
    saved = st.session_state.get(SAVED, {}).get(sig)
    return (sig, id(st.session_state[FOUND][1]),
            tuple(sorted(st.session_state[DECISIONS].items())),
            None if saved is None else saved["dataset"])


def _keep(sig: tuple) -> None:
    """Write the review to disk when it changed (found, decided, saved), so a reload keeps it."""
    now = _fingerprint(sig)
    if st.session_state.get(STORED) == now:
        return
    saved = st.session_state.get(SAVED, {}).get(sig)
    review.store(_state_file(sig), st.session_state[FOUND][1], st.session_state[DECISIONS],
                 None if saved is None else {"dataset": saved["dataset"], "record": saved,
                                             "decisions": st.session_state.get(SAVED_WITH)})
    st.session_state[STORED] = now


def _estimate(dataset: Dataset, sig: tuple, llm_cfg: Mapping[str, Any], root: Path) -> None:
    """The "Estimate the LLM's calls" button and what it found, for this upload and these LLM
    settings only (`view.data.evidence_estimate`: the finder run here with nothing sent)."""
    asked = (sig, tuple(sorted(llm_cfg.items())))
    if st.button("Estimate the LLM's calls", key="ev_estimate",
                 help="Runs the finder on this server with nothing sent to the LLM (MiniLM "
                      f"loads once; on {ESTIMATE_SAMPLE} questions drawn at random when there "
                      "are more, scaled up): how many calls the option would make, and their "
                      "cost"):
        try:
            with st.spinner("Finding the calls the LLM would get…"):
                st.session_state[ESTIMATE] = (asked, evidence_estimate(dataset, llm_cfg, root))
        except ValueError as exc:
            st.error(f"No estimate: {widgets.md(exc)}")
    shown = st.session_state.get(ESTIMATE)
    if shown is not None and shown[0] == asked:
        st.caption(f"The LLM would be asked: {widgets.md(shown[1])}")


def _find(source: Mapping[str, Any], sig: tuple, root: Path, dataset: Dataset) -> None:
    """The "Find evidence" button: it starts a job process (`ragdash.evidence.task`) that
    writes the review file `_restore` then takes up; the job's panel (progress, Cancel, an
    error) follows it meanwhile. With the LLM option, its calls can be estimated first."""
    quote = st.checkbox(
        "Also ask an LLM which sentences support an answer that occurs in no document",
        key="ev_llm",
        help="For answers written in other words: the LLM is shown each answer sentence with "
             "its best candidate sentences and asks which support it (a short answer: it is "
             "asked to copy the supporting sentence from the most similar passages); a part "
             "counts only if it occurs verbatim in a document. Replies are cached on this "
             "server.")
    llm_cfg = widgets.llm_inputs("ev", st.columns(3)) if quote else None
    if llm_cfg is not None:
        _estimate(dataset, sig, llm_cfg, root)
    review_file = _state_file(sig)
    home = review_file.with_name(f"{review_file.stem}.job")
    job = jobs.current(home)
    if st.button("Find evidence", type="primary", key="ev_find",
                 disabled=job is not None and job.active,
                 help="Runs as a job of its own (MiniLM loads once, then a few questions a "
                      "second, then the LLM's quotes if asked): you can leave the page, and "
                      "Cancel it"):
        task = EvidenceTask(**source, review_file=str(review_file), runs_root=str(root),
                            llm=llm_cfg)
        try:
            if llm_cfg is not None:
                LLMSettings.from_config(llm_cfg)  # a bad setting is said here, not in a job
            jobs.start_task(home, "evidence", task.to_dict())
        except (ValueError, RunLocked) as exc:
            st.error(f"Evidence could not be found: {widgets.md(exc)}")
            return
    jobs.follow_run(home, key="ev_job")


def panel(dataset: Dataset, name: str, sig: tuple, root: Path,
          source: Mapping[str, Any]) -> None:
    """The whole panel for an upload without relevant parts (see the module docstring).
    `source`: how the upload was read (`EvidenceTask`'s dataset, format, corpus,
    corpus_format, limit, sheet and columns)."""
    with st.container(border=True):
        st.subheader("Find evidence")
        st.caption("This dataset has no relevant parts, which Score_IR needs. ragdash can find "
                   "them: for each question, the corpus sentences that hold its answer, ranked "
                   "by BM25 and MiniLM similarity to the question; the best one to three are "
                   "kept, each with a confidence in [0, 1]. An answer written in other words is "
                   "aligned sentence by sentence with the corpus sentences that support it (each "
                   "part shows the answer sentence it supports and its scores). Questions "
                   "without confident evidence are left out and listed. (A run built without "
                   "review finds them the same way, automatically.)")
        found = st.session_state.get(FOUND)
        if (found is None or found[0] != sig) and not _restore(sig):
            _find(source, sig, root, dataset)
            return
        result = st.session_state[FOUND][1]
        decisions = st.session_state[DECISIONS]
        rows = pd.DataFrame(review.table(result, decisions))
        m = st.columns(4)
        m[0].metric("Questions with evidence", f"{len(result.found):,}")
        m[1].metric("Without evidence (left out)", f"{len(result.missing):,}")
        m[2].metric("Reviewed", f"{len(decisions):,}")
        m[3].metric("Rejected", f"{sum(d == review.REJECT for d in decisions.values()):,}")
        st.dataframe(rows, hide_index=True, width="stretch", height=220, column_order=[
            "qid", "reviewed", "status", "confidence", "question", "answer", "evidence",
            "candidates"], column_config={
            "reviewed": st.column_config.CheckboxColumn("reviewed", width="small"),
            "evidence": st.column_config.TextColumn("evidence (best part, or why none)",
                                                    width="large"),
            "confidence": st.column_config.ProgressColumn(min_value=0, max_value=1,
                                                          format="%.2f")})
        if restored := restored_note(sig):
            st.caption(f"Review restored from this server: {restored}.")
        _question(result, decisions, rows["qid"].tolist(), dataset, sig)
        _save(result, decisions, name, sig, root)
        _keep(sig)
