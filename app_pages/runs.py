"""Compare runs: every run (`ragdash run`, `ragdash sweep`, the demos) in one table grouped by
dataset; runs on the same dataset side by side: who leads and by how much, a leaderboard of
every (run, retriever), their Score_IR curves overlaid, and a paired comparison of any two whose
largest differences open in the question browser. The selection lives in the URL."""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from ragdash.analysis import area, frames, sentences
from ragdash.ui import navigation, signal_board, state, widgets
from ragdash.view import runs as model
from ragdash.view.leaderboard import (
    METRICS,
    NotComparable,
    best_per_run,
    budgets_text,
    split_entry,
)
from ragdash.viz import retrieval
from ragdash.viz import runs as runs_viz
from ragdash.viz.colors import label

st.title("Compare runs")
st.caption("Every run on one page. Pick runs made on the same dataset to rank each (run, "
           "retriever) by mean Score_IR at a token budget N, overlay their curves and test any "
           "two question by question. Runs on different datasets are never compared.")
runs = state.available_runs()
if not runs:
    st.info("There is no run yet. Make some with `ragdash run` or `ragdash sweep`, or on the "
            "**Build a run** page.")
    st.stop()
cat = state.runs_view(runs).catalogue()
labels = {k: state.run_label(r) for k, r in runs.items()}
cat.insert(1, "name", cat["key"].map(labels))
dataset_names = (cat.drop_duplicates("dataset_key").set_index("dataset_key")
                 .apply(lambda r: f"{r['dataset']} · {r['sha256']}", axis=1).to_dict())
dataset_of = dict(zip(cat["key"], cat["dataset_key"], strict=True))


def pick(keys: list[str]) -> None:
    """Select these runs (a button's callback: runs before the page draws the picker)."""
    st.session_state["rn_runs"] = keys
    for k in ("rn_a", "rn_b", "rn_show"):
        st.session_state.pop(k, None)


# --- every run, grouped by dataset ------------------------------------------------------------
with st.expander(f"All runs ({len(cat)})", expanded="rn_runs" not in st.query_params):
    f1, f2, f3, f4 = st.columns([3, 3, 2, 2])
    search = f1.text_input("Search run or folder", key="rn_search", bind="query-params",
                           placeholder="e.g. semantic, sweep1")
    ds_sel = widgets.url_select("Dataset", list(dataset_names), "rn_ds", multi=True,
                                format_func=dataset_names.get, container=f2, placeholder="any")
    ch_sel = widgets.url_select("Chunker", sorted(cat["chunker"].unique()), "rn_ch", multi=True,
                                container=f3, placeholder="any")
    llm_sel = widgets.url_select("LLM stages", list(model.LLM_CHOICES), "rn_llm",
                                 container=f4, help="Whether generation and judging ran.")
    shown = model.CatalogueFilters(search, ds_sel, ch_sel, llm_sel).apply(cat)
    if shown.empty:
        st.info("No run matches these filters.")
    for group in model.dataset_groups(shown):
        head, button = st.columns([5, 2], vertical_alignment="bottom")
        head.markdown(f"**{widgets.md(group.dataset)}** · sha256 `{group.sha256}` · "
                      f"{group.count}")
        if len(group.runs) > 1:
            button.button(f"Compare these {len(group.runs)} runs", key=f"rn_pick_{group.key}",
                          on_click=pick, args=(group.runs,), width="stretch")
        st.dataframe(
            group.table,
            hide_index=True, width="stretch", key=f"rn_table_{group.key}",
            column_config={
                "name": st.column_config.TextColumn("Run", pinned=True),
                "varied": st.column_config.TextColumn("Sweep values", help="The values "
                                                      "`ragdash sweep` set for this run."),
                "questions": st.column_config.NumberColumn("Questions", format="%d"),
                "chunker": "Chunker", "chunker_params": "Chunker parameters",
                "retrievers": "Retrievers", "retriever_params": "Retriever parameters",
                "budgets": "Budgets N", "tokenizer": "Tokenizer", "scoring": "Score_IR",
                "llm": st.column_config.TextColumn("LLM stages", help="Stages that ran "
                                                   "after scoring (generate, judge, "
                                                   "calibrate)."),
                "judged_correct": st.column_config.NumberColumn(
                    "Judged correct", format="%.1f %%", help="Share of the answers the "
                    "judge scored 5 (all systems pooled; calibration.json)."),
                "size_mb": st.column_config.NumberColumn("Size (MB)", format="%.1f"),
                "updated": "Updated"})

# --- the selection ------------------------------------------------------------------------------
first_visit = "rn_runs" not in st.session_state and "rn_runs" not in st.query_params
# first visit: the largest group of one's own runs on one dataset (else with the demos), written
# to the URL like a pick
if first_visit and (first := model.first_selection(cat, lambda k: state.is_demo(runs[k]))):
    st.session_state["rn_runs"] = first
keys = widgets.url_select(
    "Runs to compare", list(runs), "rn_runs", default=[], multi=True,
    format_func=lambda k: f"{labels[k]} · {dataset_names[dataset_of[k]].rsplit(' · ', 1)[-1]}",
    placeholder="pick runs made on the same dataset",
    help="Runs must read the same dataset file (same sha256); they are compared on the "
         "questions and budgets they all have.")
if not keys:
    st.info("Pick two or more runs made on the same dataset above (or one run to rank its "
            "retrievers), or click **Compare these runs** under a dataset.")
    st.stop()
chosen = {k: runs[k] for k in keys}
try:
    comp = state.runs_view(chosen).comparison()
except NotComparable as exc:
    st.error(f"**These runs cannot be compared.** {widgets.md(exc)}", icon=":material/block:")
    st.stop()
for note in comp.notes:
    st.caption(f"Note: {widgets.md(note)}")

budgets = list(comp.budgets)
if st.session_state.get("rn_n") not in (None, *budgets):
    del st.session_state["rn_n"]
n = widgets.budget_picker("rn_n", budgets, frames.default_budget(budgets),
                          help_="Rank by mean Score_IR over the first N tokens of each context.")
board, verdict, vs_leader = state.runs_view(chosen).board(n)
drawn = runs_viz.looks(comp.entries)

# --- who wins, by how much ---------------------------------------------------------------------
st.subheader(f"Who wins at N = {n}")
tone = ("#2f9e44", "#ebfbee") if verdict["significant"] else ("#1971c2", "#e7f5ff")
st.html(f"<div style='border-left:6px solid {tone[0]};background:{tone[1]};padding:14px 18px;"
        f"border-radius:6px'><div style='font-size:1.35rem;font-weight:600;color:#1f2430'>"
        f"{html.escape(verdict['headline'])}</div><div style='margin-top:6px;color:#343a40'>"
        f"{html.escape(verdict['detail'])}</div></div>")
st.markdown("**Over all budgets:** " + widgets.md(" ".join(
    area.sentences(state.runs_view(chosen).headline(), name=comp.name))))
if len(comp.runs) > 1:
    st.caption(model.best_pairs(best_per_run(board, comp), n, md=widgets.md, name=label))
m = st.columns(4)
m[0].metric("Leader's mean Score_IR", f"{verdict['score']:.3f}",
            help="Mean over the shared questions of the share of the relevant parts found in "
                 "the first N tokens.")
if verdict["pair"] is not None:
    p = verdict["pair"]
    m[1].metric("Lead over the runner-up", f"{p['mean_diff']:+.3f}",
                delta=f"95 % CI {p['lo']:+.3f} to {p['hi']:+.3f}", delta_color="off",
                delta_arrow="off", help=f"Paired over {p['n']} questions: "
                                        f"{verdict['score']:.3f} − {verdict['runner_score']:.3f}")
    m[2].metric("Significant?", "yes" if verdict["significant"] else "no",
                delta="Wilcoxon p = " + sentences.p_text(p["pvalue"]),
                delta_color="off", delta_arrow="off",
                help="Yes when the Wilcoxon signed-rank test gives p < 0.05 and the "
                     "interval of the mean difference lies above 0.")
m[3].metric("Questions compared", f"{len(comp.qids):,}",
            delta=f"{len(board)} (run, retriever) pairs", delta_color="off", delta_arrow="off")
widgets.chart(runs_viz.leaderboard_dots(board, n, drawn), key="rn_dots")

# --- the leaderboard ----------------------------------------------------------------------------
st.subheader("Leaderboard")
view = model.leaderboard_rows(board, widgets.fmt_pct)
optional = [c for c in (*METRICS, "judged_correct", "est_correct", "llm_tokens", "cost_usd")
            if board[c].notna().any()]
leader_row = view["rank"] == 1
st.dataframe(
    view[["rank", "name", "score", "ci", "gap", "auc", "context_tokens", *optional, "n"]]
    .style.apply(lambda col: ["background-color: #d3f9d8" if top else "" for top in leader_row],
                 axis=0),
    hide_index=True, width="stretch", key="rn_board",
    column_config={
        "rank": st.column_config.NumberColumn("#", width=40),
        "name": st.column_config.TextColumn("Run · retriever", pinned=True, width="medium"),
        "score": st.column_config.ProgressColumn(f"Score_IR at N = {n}", min_value=0,
                                                 max_value=1, format="%.3f", width=180),
        "ci": st.column_config.TextColumn("95 % CI", width=110, help="Percentile bootstrap "
                                          "over questions (1,000 resamples)."),
        "gap": st.column_config.TextColumn("vs leader", width=90),
        "auc": st.column_config.NumberColumn(
            "Area under curve", format="%.3f", width=150,
            help="Mean height of the Score_IR curve over "
            f"N = {budgets_text(budgets)} (trapezoid area ÷ budget range): good at every "
            "budget, not only at N."),
        "context_tokens": st.column_config.NumberColumn(
            "Tokens at N", format="%.0f", width=110,
            help="Mean length of C_N: min(N, context length)."),
        **{c: st.column_config.NumberColumn(c, format="%.3f", width=90,
                                            help="Chunk-level metric over "
                                            "the run's own questions (ir_metrics).")
           for c in METRICS},
        "judged_correct": st.column_config.TextColumn(
            "Judged correct", width=130,
            help="Share of this system's answers the judge scored 5, on "
            "the shared questions (— where the run has no judgments)."),
        "est_correct": st.column_config.TextColumn(
            "Estimated correct", width=160,
            help="Share the run's h/k rule predicts correct (Score_IR "
            "> k) at its calibration budget: no LLM needed (— without thresholds)."),
        "llm_tokens": st.column_config.NumberColumn(
            "Generation tokens", format="%d", width=160,
            help="Tokens in and out of this system's "
            "answers on the shared questions (judging left out)."),
        "cost_usd": st.column_config.NumberColumn(
            "Generation cost", format="$%.4f", width=140,
            help="Their price (ragdash.llm.cost); a local "
            "model costs nothing."),
        "n": st.column_config.NumberColumn("Questions", format="%d", width=100),
    })
st.caption(f"Ranked by mean Score_IR at N = {n} on the {len(comp.qids):,} questions every "
           "chosen run scored; ties keep the same rank.")

# --- every signal -------------------------------------------------------------------------------
st.subheader("Leaderboard on every signal")
st.caption(f"The same (run, system) pairs on the {len(comp.qids):,} shared questions, the "
           "LLM-only answers included: do Score_IR, the judge, the reference metrics and RAGAS "
           "/ RAGChecker rank them as the truth does?")
signal_board.show(state.runs_view(chosen).signal_board(n), "rn_sig",
                  name=comp.name if len(comp.runs) > 1 else lambda e: label(split_entry(e)[1]),
                  row_title="Run · system",
                  note=f"Score_IR at N = {n}; the other signals are those of each run's answers.")

# --- curves overlaid ----------------------------------------------------------------------------
st.subheader("Score_IR curves")
entries = board["entry"].tolist()


def curves_to_draw(limit: int = 5) -> list[str]:
    """Each run's best pair, then the next best by rank, up to `limit` pairs in all."""
    best = board.drop_duplicates("run")["entry"].tolist()
    rest = [e for e in entries if e not in best][:max(limit - len(best), 0)]
    return [e for e in entries if e in best or e in rest]


def draw_added_runs(keys: list[str]) -> None:
    """A run added to the comparison since the last run brings its pairs' curves to the
    drawn ones (the pairs picked before stay)."""
    before = st.session_state.get("_rn_show_runs", keys)
    st.session_state["_rn_show_runs"] = list(keys)
    added = [e for e in entries if split_entry(e)[0] not in before]
    picked = st.session_state.get("rn_show")
    if added and picked is not None:
        st.session_state["rn_show"] = [*picked, *(e for e in added if e not in picked)]


draw_added_runs(keys)
shown_entries = widgets.url_select(
    "Pairs to draw", entries, "rn_show", default=curves_to_draw(), multi=True,
    format_func=drawn.name, placeholder="pick (run, retriever) pairs")
bands = state.runs_view(chosen).bands()
widgets.chart(retrieval.score_curves(bands, shown_entries, looks=drawn,
                                     legend="Run · retriever"), key="rn_curves")

# --- two pairs, question by question ------------------------------------------------------------
st.subheader("Two pairs, question by question")
c1, c2 = st.columns(2)
a = widgets.url_select("First", entries, "rn_a", default=entries[0], format_func=drawn.name,
                       container=c1)
others = [e for e in entries if e != a]
if not others:
    st.info("Only one (run, retriever) pair: pick another run or retriever to compare.")
    st.stop()
b = widgets.url_select("Second", others, "rn_b", default=others[0], format_func=drawn.name,
                       container=c2)
pair, diff = state.runs_view(chosen).pair(a, b, n)
na, nb = drawn.name(a), drawn.name(b)
for col, t in zip(st.columns(5), model.pair_tiles(pair, widgets.md(na), widgets.md(nb)),
                  strict=True):
    col.metric(t.label, t.value, delta=t.delta, delta_color="off", delta_arrow="off",
               help=t.help)
left, right = st.columns(2)
with left:
    widgets.chart(retrieval.pair_scatter(comp.matrix(n), a, b, n, looks=drawn), key="rn_scatter")
with right:
    widgets.chart(retrieval.difference_curves({(a, b): diff}, looks=drawn), key="rn_diff")

st.markdown("**Questions with the largest differences**")
big = model.largest(comp.scores, comp.examples, a, b, n,
                    state.view(chosen[split_entry(a)[0]]).budgets,
                    widgets.md(na), widgets.md(nb))
if big.table is None:
    st.caption(big.note)
else:
    st.dataframe(
        big.table[["open", "qid", "question", a, b, "diff"]],
        hide_index=True, width="stretch", key="rn_big", column_config={
            "open": st.column_config.LinkColumn(
                "Browser", display_text="open ↗",
                help="Open the question in the question browser, both pairs side by side"),
            "qid": st.column_config.TextColumn("id"),
            "question": st.column_config.TextColumn("Question", width="large"),
            a: st.column_config.ProgressColumn(na, min_value=0, max_value=1, format="%.2f"),
            b: st.column_config.ProgressColumn(nb, min_value=0, max_value=1, format="%.2f"),
            "diff": st.column_config.NumberColumn("first − second", format="%+.2f")})
    st.caption(big.note)
    st.page_link(navigation.page("browser"), icon=":material/manage_search:",
                 label=big.top_label, query_params=big.top.params)

# --- every pair against the leader, corrected for testing several -------------------------------
if len(vs_leader) > 1:
    with st.expander(f"The leader against every other pair at N = {n} (Holm-adjusted)"):
        t = vs_leader.assign(pair=[f"{drawn.name(x)} vs {drawn.name(y)}"
                                   for x, y in zip(vs_leader["a"], vs_leader["b"],
                                                   strict=True)])
        t = t.assign(pvalue=t["pvalue"].map(sentences.p_text),
                     p_holm=t["p_holm"].map(sentences.p_text))  # "—" where no test
        st.dataframe(pd.DataFrame(t[["pair", "win", "tie", "loss", "mean_diff", "lo", "hi",
                                     "pvalue", "p_holm"]]).rename(columns={
            "win": "leader higher", "loss": "leader lower", "mean_diff": "mean difference",
            "lo": "CI low", "hi": "CI high", "pvalue": "Wilcoxon p", "p_holm": "Holm p"}),
            hide_index=True, width="stretch", column_config={
                c: st.column_config.NumberColumn(format="%+.3f")
                for c in ("mean difference", "CI low", "CI high")})
        st.caption("Holm p: the Wilcoxon p-values adjusted for testing several pairs at once; "
                   "below 0.05 the leader is ahead of that pair beyond chance.")
