"""Question browser: a searchable, filterable table of questions; one question in detail with
each chosen retriever's chunks side by side, the relevant parts' longest matches highlighted,
the cut at N tokens movable, per-part scores (with "Semantic matches": each part's closest
sentence window by meaning underlined, with its cosine), generated answers, judge scores, MLQ's
sub-questions. The view (filters, question, retrievers, N) is in the URL."""

from __future__ import annotations

import html
from functools import partial

import streamlit as st

from ragdash.analysis import frames, judging
from ragdash.constants import LLM_ONLY, SCORE_LABELS, SCORES
from ragdash.systems.store import coverage
from ragdash.ui import crossrun, evidence, server, state, widgets
from ragdash.view import browser as model
from ragdash.view.context import cut_context, part_matches
from ragdash.viz.colors import PART_COLORS, label

run = state.require_run()
st.title("Question browser")
examples = run.table("examples")
ir = run.table("ir_scores")
if examples is None or ir is None:
    widgets.missing("Nothing to browse yet", "the run needs examples.parquet and "
                    "ir_scores.parquet (the ingest and score stages).")
    st.stop()
judgments = state.view(run).judgments()
if failed := judging.all_failed(judgments):
    st.error(f"{failed} The judge-score columns and filter are left out; the errors are "
             "listed on the **LLM results** page.", icon="⚠️")
    judgments = None
answers = state.view(run).answers()
queries = run.table("queries")
spec = state.view(run).spec
rets = state.view(run).retrievers
budgets = state.view(run).budgets
n_default = frames.default_budget(budgets)  # the cut links leave out (view.links.browser_query)
examples = examples.assign(qid=examples["qid"].astype(str))
meta_cols = frames.metadata_columns(examples)

# --- filters ------------------------------------------------------------------------------------
with st.expander("Filters", expanded=True):
    f1, f2, f3, f4 = st.columns([3, 2, 2, 3])
    search = f1.text_input("Search question, answer or id", key="qb_search",
                           bind="query-params", placeholder="e.g. album, q012")
    f_ret = widgets.url_select("Score of retriever", rets, "qb_fret", container=f2,
                               format_func=label)
    f_n = widgets.budget_slider(f3, "at N", budgets, n_default, "qb_n")
    lo_hi = f4.slider("Score_IR between", 0.0, 1.0, (0.0, 1.0), step=0.05, key="qb_range",
                      bind="query-params")
    g = st.columns(max(len(meta_cols) + 1, 2))
    meta_sel = {}
    for i, col in enumerate(meta_cols):
        values = sorted(examples[col].dropna().astype(str).unique())
        meta_sel[col] = g[i].multiselect(f"Question {widgets.md(col)}", values, key=f"qb_f_{col}",
                                         bind="query-params", placeholder="any")
    judge_sel: list[int] = []
    if judgments is not None:
        judge_sel = widgets.url_select(
            f"Judge score of {label(f_ret)}", list(SCORES), "qb_judge", multi=True,
            format_func=SCORE_LABELS.get, container=g[len(meta_cols)],
            placeholder="any")

table = frames.per_question(examples, ir, f_n, judgments, rets)
shown = model.Filters(f_ret, lo_hi, search, meta_sel, judge_sel).apply(table)

ir_cols = [c for c in shown.columns if c.startswith("ir:")]
judge_cols = [c for c in shown.columns if c.startswith("judge:")]
cols = ["qid", "question", *meta_cols, "n_parts", *ir_cols, *judge_cols]
# id and question pinned, the scores narrow: every retriever's Score_IR fits beside them on a
# laptop screen and the judge columns scroll under the pinned ones
config = {
    "qid": st.column_config.TextColumn(
        "id", width="medium" if table["qid"].str.len().max() > 10 else "small", pinned=True),
    "question": st.column_config.TextColumn("Question", width=200, pinned=True),
    "n_parts": st.column_config.NumberColumn("parts", width=50,
                                             help="Relevant parts of the question"),
    **{c: st.column_config.ProgressColumn(
        f"{label(c[3:])} @{f_n}", min_value=0.0, max_value=1.0, format="%.2f", width=84,
        help=f"Score_IR of {label(c[3:])} at N = {f_n}") for c in ir_cols},
    **{c: st.column_config.NumberColumn(
        f"{label(c[6:])} judge", format="%d", width=130,
        help="Judge score 1–5 (empty: error or missing)") for c in judge_cols},
}
st.caption(f"**{len(shown):,}** of {len(table):,} questions · click a row to open it below")


def _pick(qids: list[str]) -> None:
    sel = st.session_state.get("qb_table")
    rows = sel.selection.rows if sel is not None else []
    if rows and rows[0] < len(qids):
        st.session_state["qb_q"] = qids[rows[0]]


st.dataframe(shown[cols], column_config=config, hide_index=True, width="stretch", height=320,
             key="qb_table", on_select=partial(_pick, shown["qid"].tolist()),
             selection_mode="single-row")

# --- one question ---------------------------------------------------------------------------------
options = shown["qid"].tolist()
if not options:
    st.info("No question matches the filters.")
    st.stop()
questions = table.set_index("qid")["question"].astype(str)


def _fmt(q: str) -> str:
    text = questions.get(q, "")
    return f"{q} · {text[:90]}{'…' if len(text) > 90 else ''}"


qid = widgets.url_select("Question", options, "qb_q", format_func=_fmt)
ex = examples.set_index("qid").loc[qid]
parts = list(ex["parts"])

# dataset text is shown as text: escaped, never read as Markdown, long words wrapped
meta_line = " · ".join(f"{html.escape(str(c))}: <b>{html.escape(str(ex[c]))}</b>"
                       for c in meta_cols)
st.html(f'<div style="overflow-wrap:anywhere"><h3 style="margin:0.4rem 0">'
        f'{html.escape(str(ex["question"]))}</h3>'
        f'<div><b>Gold answer:</b> {html.escape(str(ex["answer"]))}</div>'
        + (f'<div class="rd-note">{meta_line}</div>' if meta_line else "") + "</div>")

c1, c2 = st.columns([3, 2])
chosen = widgets.retriever_picker("qb_ret", rets, rets[:2],
                                  label_="Retrievers side by side", container=c1,
                                  max_selections=4)
other = crossrun.pick_second_run(run, qid, container=c1)
chosen2: list[str] = []
if other is not None:
    rets2 = state.view(other).retrievers
    chosen2 = widgets.retriever_picker(
        "qb_ret2", rets2, [r for r in chosen if r in rets2][:1] or rets2[:1],
        label_=f"Retrievers of {widgets.md(state.run_label(other))}", container=c1,
        max_selections=2)
max_n = max(budgets)
n = c2.slider("Cut C_N at N tokens", 10, max_n + max_n // 2, n_default, step=10, key="qb_cut",
              bind="query-params", help="Move the cut: the matches, the part scores and "
                                        "Score_IR follow.")

tokenizer = spec.tokenizer
method = spec.scoring.method
semantic = method == "semantic" or c2.toggle(
    "Semantic matches", value="semantic" in state.view(run).score_methods(), key="qb_sem",
    bind="query-params", help="Also find each part's closest sentence window in C_N by meaning "
    "(MiniLM cosine, the `semantic` Score_IR): underlined (dashed) with its cosine.")
mode = spec.scoring.mode
notes = []
if method != "substring":  # what the filled highlights show
    notes.append(f"scores use the run's **{method}** matching; filled highlights show exact "
                 "longest common substrings")
if mode != "corrected":
    notes.append("the run was scored in reference mode; this view cuts C_N as a true prefix")

llm_only = model.answer_of(answers, judgments, qid, LLM_ONLY)
if llm_only is not None:
    st.html(f"<div><b>LLM only</b> (no retrieval) answered: {html.escape(llm_only.text)} — "
            f"judge score <b>{'—' if llm_only.judge is None else llm_only.judge}</b></div>")

st.markdown("**Relevant parts** (each has its colour below)")
st.html(evidence.CSS + evidence.parts_legend(parts))

sides = [crossrun.Side(run, ret) for ret in chosen] + \
    [crossrun.Side(other, ret) for ret in chosen2]
if not sides:
    st.info("Pick at least one retriever to see its chunks.")
    st.stop()
if other is not None:
    theirs = state.view(other).spec
    if theirs.tokenizer != tokenizer:
        notes.append(f"the runs count tokens differently ({tokenizer} here, "
                     f"{theirs.tokenizer} in {widgets.md(state.run_label(other))}): each "
                     "column cuts C_N at N tokens of its own run's tokenizer")


def show(side: crossrun.Side, wide: bool) -> None:
    """One (run, retriever) column: Score_IR at the cut, answer and judge, chunks highlighted."""
    r, ret = side.run, side.retriever
    rmethod = state.view(r).spec.scoring.method
    st.markdown((f"**{widgets.md(state.run_label(r))}** · " if other is not None else "")
                + widgets.chip(ret), unsafe_allow_html=True)
    view = cut_context(state.view(r), qid, ret, n, server.tokenizer)
    if view is None:
        has = coverage(r).get(ret)
        if has is not None and qid not in has:  # an imported system without this question
            st.info(f"{label(ret)}'s file has no record for this question: it is scored on "
                    f"the {len(has):,} questions it has.")
            return
        st.info(f"No chunk retrieved: {label(ret)} found nothing for this question, so its "
                "Score_IR is 0 at every budget.")
        return
    if view.note:
        notes.append(view.note)
    chunks, context, cut, tokens, reached = (view.chunks, view.context, view.cut, view.tokens,
                                             view.reached)
    sem = server.semantic_matches(tuple(parts), context, cut) if semantic and parts else []
    scored = model.cut_score(parts, context, cut, rmethod, sem)
    # side by side while there is room; stacked with 3+ columns, so numbers are not cut
    m1, m2 = st.columns(2) if wide else (st.container(), st.container())
    m1.metric(f"Score_IR at N = {n}" + (f" ({rmethod})" if sem else ""), f"{scored.score:.3f}",
              help="Mean over the parts of their matched share within C_N.")
    m2.metric("Context", f"{len(chunks)} chunks",
              delta=(f"{tokens:,} tokens" if tokens else None) if reached
              else "shorter than N: used whole", delta_color="off", delta_arrow="off")
    matches = part_matches(view, parts)
    st.html(evidence.CSS + evidence.parts_legend(parts, list(scored.parts), PART_COLORS))
    if sem:  # beside the exact score: each part's closest window by meaning
        head = "" if scored.semantic is None else (
            f"<div><b>Semantic Score_IR {scored.semantic:.3f}</b> "
            "(by meaning, not by characters)</div>")
        st.html(evidence.CSS + head + evidence.semantic_legend(sem))
    answer = model.answer_of(state.view(r).answers(), state.view(r).judgments(), qid, ret)
    if answer is not None:
        st.html(f"<div><b>Answer:</b> {html.escape(answer.text)}<br>Judge score: <b>"
                f"{'— (error)' if answer.judge is None else answer.judge}</b></div>")
    r_queries = r.table("queries")
    if ret == "mlq" and r_queries is not None:
        q = r_queries[r_queries["qid"].astype(str) == qid]
        if len(q):
            subs = "".join(f"<li>{html.escape(str(s))}</li>" for s in q.iloc[0]["queries"])
            st.html(f"<div><b>MLQ sub-questions</b><ol>{subs}</ol></div>")
    with st.container(height=640, border=False):
        st.html(evidence.CSS + evidence.context_html(chunks, matches, cut, n,
                                                     whole=not reached, windows=sem))


for col, side in zip(st.columns(len(sides)), sides, strict=True):
    with col:
        show(side, wide=len(sides) <= 2)
for note in dict.fromkeys(notes):
    st.caption("Note: " + note)  # notes escape what they quote
