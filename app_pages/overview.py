"""Overview: the run at a glance — size, best retriever, estimated vs judged correct answers,
the LLM calls that estimating from retrieval avoids, and the Score_IR curves."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis import area, curves, judging, sentences, thresholds
from ragdash.calibration import calls_avoided
from ragdash.calibration.predictive import degenerate
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.planning import cost_avoided
from ragdash.rundir import stage_table
from ragdash.stages.retrieve import empty_message
from ragdash.ui import navigation, state, trust, widgets
from ragdash.ui.doc_sections import paper_comparison
from ragdash.viz import retrieval
from ragdash.viz.colors import label

run = state.require_run()
cfg = run.config
man = run.manifest
examples = run.table("examples")
ir = run.table("ir_scores")
chunks = run.table("chunks")
documents = run.table("documents")
answers = run.table("answers")
judgments = run.table("judgments")
cal = run.calibration()
order = state.view(run).retrievers

st.title(f"Run {widgets.md(run.id)}")
ds, chunker, scoring = (cfg.section(s) for s in ("dataset", "chunker", "scoring"))
bits = [f"created {man.get('created', '—')}"]
if ds.get("path"):
    bits.append(f"dataset `{ds['path'].split('/')[-1]}`")
if chunker:
    bits.append(f"chunker **{chunker.get('method')}**")
if cfg.sections.get("tokenizer"):
    bits.append(f"tokenizer **{cfg.tokenizer}**")
if scoring:
    bits.append(f"Score_IR **{scoring.get('method')}** ({cfg.scoring_mode})")
st.caption(" · ".join(bits))


if empty := run.stages(["retrieve"])["retrieve"].warnings:
    st.warning("**Some questions got no retrieved chunk**, so they score 0:\n"
               + "\n".join(f"- {empty_message(w, quote=widgets.code)}" for w in empty), icon="⚠️")

# --- headline figures -------------------------------------------------------------------------
c = st.columns(4)
judged_q = (int(judgments.loc[judgments["score"].notna(), "qid"].nunique())
            if judgments is not None and "score" in judgments else 0)
partly = examples is not None and 0 < judged_q < len(examples)
c[0].metric("Questions", f"{len(examples):,}" if examples is not None else "—",
            delta=f"{judged_q:,} judged by the LLM" if partly else None, delta_color="off",
            delta_arrow="off",
            help="Evaluation triples (question, answer, relevant parts) in this run"
                 + (f"; the LLM stages answered and judged {judged_q:,} of them." if partly
                    else "."))
corpus = (f"{len(documents):,} docs" if documents is not None else "—")
c[1].metric("Corpus", corpus, help="Documents in the corpus; chunks below.",
            delta=f"{len(chunks):,} chunks" if chunks is not None else None, delta_color="off",
            delta_arrow="off")
c[2].metric("Retrievers", len(order), delta=", ".join(label(r) for r in order) or None,
            delta_color="off", delta_arrow="off")
if ir is not None and len(ir):
    title, value, caption = area.leader_card(state.view(run).headline(), name=label)
    c[3].metric(title, value, delta=caption, delta_color="off", delta_arrow="off",
                help="Largest area under the Score_IR curve over every budget N of the run "
                     "(its mean height, 95% bootstrap interval over questions), so no single "
                     "N decides; the lead over the runner-up is paired over questions, and "
                     "\"best\" only when its interval excludes zero. The sentences under the "
                     "curves say where the lead is significant.")
else:
    c[3].metric("Best retriever", "—", help="The run has no IR scores yet.")

failed = judging.all_failed(state.view(run).judgments())
if failed:
    st.error(f"{failed} The errors are listed on the **LLM results** page.", icon="⚠️")
trust.summary(run)  # people's labels first: they say how far to trust the judge below
if cal is not None:
    n_q = len(examples) if examples is not None else 0
    calls = calls_avoided(n_q, len(order))
    ev, shares = cal.evidence, cal.shares
    if ev is None and cal.budget in run.budgets:  # written before it was stored
        ev = state.view(run).predictiveness(cal.budget)
    flat = degenerate(cal)
    fit_on = cal.scores or scoring.get("method") or "substring"
    st.subheader(f"Answer quality predicted from retrieval alone (N = {cal.budget}, "
                 f"Score_IR by {fit_on} matching)")
    at_cal = (state.view(run).thresholds(cal.budget)
              if cal.budget in run.budgets else None)
    pairs = at_cal.pairs if at_cal is not None and at_cal.has_judgments else None
    if pairs is not None:
        st.caption("Every figure in this section rests on the " + sentences.judged_basis(
            len(pairs), pairs["qid"].nunique(), n_q) + ".")
    if ev:
        widgets.verdict(ev)
    c2 = st.columns(4)
    if shares:
        c2[0].metric("Judged 5 (RAG answers)", f"{shares['actual']['pct']:.1f} %",
                     help="Share of RAG answers the judge scored 5, with a 95 % bootstrap "
                          "interval over questions.")
        c2[0].caption(widgets.ci_text(shares["actual"]))
        labels = {"h/k rule": "Estimated by the h/k rule",
                  "logistic estimator": "Estimated by a logistic model"}
        for col, (name, est) in zip(c2[1:3], shares["estimates"].items(), strict=False):
            err = est["pct"] - shares["actual"]["pct"]
            if flat and name == "h/k rule":
                col.metric(labels[name], "no estimate", delta="degenerate fit",
                           delta_color="off", delta_arrow="off", help=f"No estimate: {flat}")
                continue
            col.metric(labels.get(name, name), f"{est['pct']:.1f} %",
                       delta=f"{err:+.1f} pp vs judged 5", delta_color="off", delta_arrow="off",
                       help=("Share of answers with Score_IR > k = "
                             f"{cal.k:.3f}, without any LLM call." if name == "h/k rule" else
                             "Mean out-of-fold probability of a correct answer from a logistic "
                             "model of Score_IR at every budget (5 folds over questions), "
                             "without any LLM call."))
            col.caption(widgets.ci_text(est))
    else:  # a calibration.json written before the evidence was stored
        share = thresholds.correct_share_summary(cal)
        c2[0].metric("Judged 5 (RAG answers)", f"{share['actual_pct']:.1f}%")
        c2[1].metric("Estimated correct answers",
                     "no estimate" if flat else f"{share['estimated_pct']:.1f}%",
                     help=flat or f"Share of answers with Score_IR > k = {cal.k:.3f}.")
    if flat:
        st.caption(f"The h/k rule gives no estimate here: {flat.rstrip('.')}.")
    elif pairs is not None:
        head, _, rest = sentences.rule_bias(thresholds.rule_bias(
            pairs, cal.k, cal.budget), n_q).partition(": ")
        st.caption(f"**{head}:** {rest}")
    cost = judging.costs(answers, judgments)
    spent = cost["usd"].dropna().sum() if not cost.empty else 0.0
    gpt = cost_avoided(answers, judgments, calls, "gpt-4o")
    said = (f"Estimating from Score_IR instead of generating and judging avoids "
            f"{calls['generation_calls']:,} generations (each retriever + LLM only) and "
            f"{calls['judge_calls']:,} judge calls for {n_q:,} questions")
    if spent >= 0.005:  # a priced model spent at least a cent
        c2[3].metric("LLM cost avoided next time", f"${spent:,.2f}",
                     delta=f"{calls['total_calls']:,} LLM calls", delta_color="off",
                     delta_arrow="off", help=f"{said}: what this run spent on them.")
    else:  # local models cost no money: the time they took is what is saved
        took = judging.llm_seconds(answers, judgments)
        c2[3].metric("LLM time avoided next time", judging.duration(took),
                     delta=f"{calls['total_calls']:,} LLM calls", delta_color="off",
                     delta_arrow="off",
                     help=f"{said}: the time this run's local models took on them"
                          + (f" (at GPT-4o list prices, about ${gpt:,.2f} from the recorded "
                             "tokens)" if gpt else "") + ".")
elif ir is not None and not failed:
    st.info("This run has no calibration yet (no LLM answers and judgments): the estimated vs "
            "judged share of correct answers appears once the LLM stage has run. The "
            "**Thresholds** page already estimates outcomes from retrieval with the paper's "
            f"h = {PAPER_H} and k = {PAPER_K}.", icon="ℹ️")

# --- the main figure --------------------------------------------------------------------------
if ir is None:
    widgets.missing("No retrieval scores yet", "this run's score stage has not run; build it on "
                    "**Build a run** or with `ragdash run`.")
else:
    widgets.chart(retrieval.score_curves(state.view(run).bands(), order), key="ov_curves")
    st.markdown(widgets.md(" ".join(area.sentences(state.view(run).headline(), name=label))))
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Mean Score_IR per budget (Table 3.1)")
        t = curves.summary_table(ir, order, cfg.scoring_mode)
        st.dataframe(t.rename(columns=label).style.format("{:.3f}").highlight_max(
            axis=1, props="font-weight:700;background-color:#e7f5ff"), width="stretch")
    with right:
        st.subheader("Where to go next")
        for page, text, icon in (
            ("retrieval", "Score_IR curves, distributions, breakdowns", "show_chart"),
            ("browser", "Read one question's evidence per retriever", "manage_search"),
            ("compare", "Compare two retrievers question by question", "compare_arrows"),
            ("thresholds", "Predict answer quality from retrieval (h, k)", "tune"),
            ("report", "Download tables, figures and an HTML report", "download"),
        ):
            st.page_link(navigation.page(page), label=text, icon=f":material/{icon}:")
    if "hotpot" in str(ds.get("path") or "").lower():  # the paper's data: its Table 3.1 too
        paper_comparison()

# --- stages and issues -------------------------------------------------------------------------
with st.expander("Pipeline stages and input issues"):
    stages = run.stages()
    if stages:
        st.dataframe(stage_table(stages.values()).drop(columns="mark"), hide_index=True,
                     width="stretch")
    issues = run.table("issues")
    if issues is not None and len(issues):
        st.markdown(f"**{len(issues)} input issue(s)** (errors: record skipped; warnings: kept)")
        st.dataframe(issues, hide_index=True, width="stretch")
    else:
        st.caption("No input issue was recorded.")
with st.expander("Run manifest (run.json)"):
    st.json(man, expanded=False)
