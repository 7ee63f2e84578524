"""LLM results: judge-score distributions per system (the paper's Table 3.3), LLM only vs RAG,
errors shown apart, latency, tokens and cost."""

from __future__ import annotations

import streamlit as st

from ragdash.analysis import frames, judging, signals, truthfulness
from ragdash.analysis.signals import ERAG_LABELS
from ragdash.calibration.predictive import abstention_by_evidence
from ragdash.config import ConfigError, default_of, saved_config
from ragdash.constants import LLM_ONLY, REFERENCE_METRICS, SCORES
from ragdash.llm import keys as llm_keys
from ragdash.llm.prompts import GENERATION_PROMPTS
from ragdash.llm.refusal import RefusalPatternError, RefusalRule
from ragdash.llm.settings import BACKENDS, JUDGE_MODES, LOCAL_GENERATOR
from ragdash.planning import dry_run, stage_plan
from ragdash.rundir.lock import RunLocked
from ragdash.stages.runner import llm_stages
from ragdash.ui import (
    jobs,
    metrics_choice,
    signal_scatter,
    stage_launcher,
    state,
    trust,
    widgets,
)
from ragdash.view import llm as model
from ragdash.view import stress as stress_model
from ragdash.view.llm_launch import LaunchForm, form_start, launch_spec, saved_rule
from ragdash.viz import llm
from ragdash.viz import stress as stress_viz
from ragdash.viz.colors import label

run = state.require_run()
st.title("LLM results")
all_answers = run.table("answers")  # every call: errors, latency, tokens, cost
all_judgments = run.table("judgments")
view = state.view(run)
answers, judgments = view.answers(), view.judgments()  # one per (question, system)


def _rule_defaults() -> None:
    """Start the rule's widgets from the run's own rule."""
    saved = saved_rule(view.spec)
    st.session_state.setdefault("llm_refusal_patterns", "\n".join(saved.patterns))
    st.session_state.setdefault("llm_refusal_on", saved.enabled)


def refusal_rule() -> RefusalRule | None:
    """The refusal rule as edited on this page (the run's own rule to start with); None and an
    error box when a pattern is not a valid regular expression."""
    _rule_defaults()
    try:
        return RefusalRule(st.session_state["llm_refusal_patterns"].splitlines(),
                           bool(st.session_state["llm_refusal_on"]))
    except RefusalPatternError as exc:
        st.error(str(exc))
        return None


def refusals() -> None:
    """The refusal rule, editable, and the answers it matches, beside what the run recorded."""
    st.subheader("Refusals: the rule that runs before the judge")
    st.caption("An answer matched by one of these case-insensitive regular expressions is "
               "scored 1 (*lacks information*, reason \"refusal (rule)\") and never sent to "
               "the judge: small judges do not recognise a refusal. Edit the patterns to check "
               "what they catch; the launcher below judges with the rule as shown here.")
    _rule_defaults()
    left, right = st.columns([2, 3])
    with left:
        st.toggle("Refusal rule on", key="llm_refusal_on")
        st.text_area("Patterns, one per line", key="llm_refusal_patterns", height=220)
    rule = refusal_rule()
    if rule is None or answers is None:
        return
    hits = model.refusal_hits(answers, judgments, rule, name=label)
    with right:
        st.markdown(hits.sentence())
        st.dataframe(hits.table, hide_index=True, width="stretch", height=260,
                     column_config={"score": st.column_config.TextColumn("judge score")})
    ir = run.table("ir_scores")
    gen_budget = view.generation_budget
    if ir is not None and gen_budget in set(ir["budget"]):
        table = abstention_by_evidence(answers, ir, gen_budget, rule.match)
        st.markdown(model.abstention_intro(gen_budget))
        st.dataframe(table.set_index("band").style.format(na_rep="—")
                     .format({"share": "{:.1%}"}, na_rep="—"), width="stretch")


def launcher(expanded: bool) -> None:
    """Generate and judge this run's answers: the cost estimate first, then a background job."""
    base = saved_config(run.manifest)
    with st.expander("Generate and judge answers for this run", expanded=expanded):
        st.caption("Answers come from each retriever's C_N and once without context (LLM "
                   "only); a judge scores them 1–5. The estimate below is computed first, "
                   "without any LLM call.")
        c1, c2, c3 = st.columns(3)
        gen_backend = c1.selectbox("Generator backend", BACKENDS, key="llm_gen_backend")
        gen_model = c1.text_input("Generator model", key="llm_gen_model",
                                  placeholder=f"empty: {LOCAL_GENERATOR} (local), else the "
                                              "backend's default")
        judge_backend = c2.selectbox("Judge backend", BACKENDS, key="llm_judge_backend")
        judge_model = c2.text_input("Judge model", key="llm_judge_model",
                                    placeholder="empty: qwen-1.5b (local); gpt-4o is the paper's")
        base_url = c3.text_input("Server URL (optional)", key="llm_base_url",
                                 placeholder="OpenAI-compatible URL or Ollama host")
        n_q = len(run.table("examples") if run.has("examples") else [])
        start = form_start(base, n_q)
        mode = c3.selectbox("Judge mode", JUDGE_MODES, index=JUDGE_MODES.index(start.mode),
                            key="llm_judge_mode",
                            help="grouped: all answers of a question in one call (the paper); "
                                 "single: one call per answer; stepwise: one or two short "
                                 "questions per answer (for small local judges)")
        prompt = st.radio("Generation prompt", GENERATION_PROMPTS,
                          index=GENERATION_PROMPTS.index(start.prompt), horizontal=True,
                          key="llm_prompt",
                          help="abstain: answer from the documents, and reply with a fixed "
                               "sentence only when they say nothing about the question (judge "
                               "1); paper: the paper's text unchanged")
        c4, c5 = st.columns(2)
        budget = c4.number_input("Token budget N of the contexts", 1, 100_000,
                                 default_of("generation.budget"), 100,
                                 key="llm_budget")
        limit = c5.number_input("Questions (the first N; 0 = all)", 0, start.limit_max, 0,
                                start.limit_step, key="llm_limit", help=start.limit_help)
        key = st.text_input("OpenAI API key (kept in memory only, never written: the job "
                            "process gets it in its environment)",
                            type="password", key="llm_api_key")
        st.caption(widgets.md(llm_keys.job_note(gen_backend, base_url or None, bool(key))))
        rule = refusal_rule()
        if rule is None:
            return
        form = LaunchForm(gen_backend, gen_model, judge_backend, judge_model, base_url,
                                mode, prompt, int(budget), int(limit), rule)
        gen, jud = form.llm_sections()
        if widgets.path_refused({"generation": {"llm": gen}, "judge": {"llm": jud}}):
            return
        try:
            spec = launch_spec(base, form)
        except (ConfigError, ValueError) as exc:
            st.error(f"The settings are not valid: {widgets.md(exc)}")
            return
        if st.button("Estimate calls, tokens, cost and time", key="llm_estimate"):
            try:
                est = dry_run(run, spec)
                st.session_state["llm_estimate_text"] = [
                    f"**{widgets.md(k)}**: {widgets.md(v)}" for k, v in est.items()]
                st.session_state["llm_estimate_plan"] = stage_plan(est)
            except (ValueError, FileNotFoundError) as exc:
                st.error(f"No estimate: {widgets.md(exc)}")
        shown = st.session_state.get("llm_estimate_text")
        for line in shown or []:
            st.markdown(line)
        job = jobs.current(run.path)
        busy = job is not None and job.active
        if st.button("▶ Start generation and judging", type="primary", key="llm_start",
                     disabled=not shown or busy, help="estimate first"):
            try:  # the key reaches the job process in its environment only
                jobs.start(spec.to_config(), run.path, llm_stages(), api_key=key or None,
                           kind="llm", plan=st.session_state.get("llm_estimate_plan"))
            except RunLocked as exc:  # another user, or a `ragdash` command, runs it now
                st.error(widgets.md(exc))
            st.session_state.pop("llm_estimate_text", None)
        job = jobs.current(run.path)
        if job is not None and not stage_launcher.is_single_stage_job(job) and (
                job.kind == "llm" or job.active or job.state == "interrupted"):
            jobs.follow_run(run.path, key="llm")

if answers is None and judgments is None:
    st.info(
        "**This run has no LLM stage yet.** Once answers are generated from C_N for each "
        "retriever (and once without context, *LLM only*) and judged 1–5, this page shows the "
        "judge-score distribution per system (the paper's Table 3.3), what retrieval adds over "
        "the LLM alone, the failed calls, latency, tokens and cost. Start below; meanwhile the "
        "**Thresholds** page already estimates answer outcomes from retrieval alone.", icon="🤖")
    launcher(expanded=True)
    st.stop()
order = state.view(run).order
st.caption("Judge scale (categorical, not ordinal): 1 not enough information · 2 partly "
           "correct with wrong details · 3 partly correct but incomplete · 4 fully incorrect · "
           "5 fully correct. Failed calls and unparseable judge replies are errors: listed "
           "apart, never averaged in.")

checks = state.view(run).audit()
widgets.judge_audit_banner(checks, "the score distributions below")

trust.summary(run, detail=True)

# --- Table 3.3 ------------------------------------------------------------------------------------
failed = judging.all_failed(judgments)
if failed:
    st.error(model.failed_line(failed), icon="⚠️")
elif judgments is not None:
    dist = judging.judge_distribution(judgments, order)
    systems = frames.order_systems(dist["system"], order)
    widgets.chart(llm.judge_stacked(dist, systems), key="llm_stacked")
    t = judging.table_3_3(judgments, order)
    st.subheader("Judge-score shares per system (Table 3.3)")
    st.dataframe(t.rename(index=label).rename(columns={"n": "judged", "errors": "errors"})
                 .style.format({str(s): "{:.1%}" for s in SCORES}, na_rep="—"),
                 width="stretch")

    # --- judge audit --------------------------------------------------------------------------
    st.subheader("Can the judge be trusted?")
    st.caption("Four checks that need no second judge. A judge that gives every answer the "
               "same score, scores identical answers differently, scores by the answer's place "
               "in the prompt, or ignores whether an answer states the true answer makes every "
               "distribution and threshold on these pages meaningless.")
    widgets.judge_audit_list(checks)

    # --- LLM only vs RAG ----------------------------------------------------------------------
    st.subheader("What retrieval adds over the LLM alone")
    gain = judging.rag_gain(judgments, order)
    if gain.empty:
        st.info("No LLM-only judgments in this run: nothing to compare retrieval against.")
    else:
        left, right = st.columns(2)
        with left:
            widgets.chart(llm.rag_gain_bars(gain), key="llm_gain")
        with right:
            rag = [s for s in systems if s != LLM_ONLY]
            pick = widgets.url_select("Retriever", rag, "llm_sys", format_func=label)
            ct = judging.llm_vs_rag(judgments, pick)
            widgets.chart(llm.crosstab_heatmap(ct, pick), key="llm_ct")
            st.markdown(model.gain_sentence(gain, pick, name=label))
    sweep = judging.sweep_distribution(all_judgments)
    if not sweep.empty:
        st.subheader("Judge scores across budgets (the paper's Table 3.2 pilot)")
        for sys_ in sweep["system"].unique():
            widgets.chart(llm.sweep_stacked(sweep[sweep["system"] == sys_], sys_),
                          key=f"llm_sweep_{sys_}")
else:
    widgets.missing("No judgments yet", "answers exist but have not been judged.")

# --- truthfulness (CRAG) ------------------------------------------------------------------------
if (truth := state.view(run).truthfulness()) is not None:
    table, classes, sources = truth
    st.subheader("Truthfulness: a wrong answer counts against a system (CRAG score)")
    st.caption(model.truthfulness_caption(sources, md=widgets.md))
    st.dataframe(truthfulness.display(table, name=label), hide_index=True, width="stretch")
    st.markdown(widgets.md(truthfulness.sentence(table, name=label)))

# --- reference metrics (no LLM) -------------------------------------------------------------------
ref = state.view(run).reference_summary()
if ref is not None and not ref.empty:
    st.subheader("Answers against the gold answers (no LLM)")
    st.caption("SQuAD's exact match and token F1 (lower case, punctuation and articles removed), "
               "the share of answers containing a gold answer as whole words, and for long "
               "answers in other words ROUGE-L and the MiniLM cosine with the gold answer; each "
               "the best over a question's gold answers. No LLM is involved, so they are a "
               "check on the judge; failed or empty answers score 0.")
    names = {m: REFERENCE_METRICS[m].label for m in ref.columns if m in REFERENCE_METRICS}
    st.dataframe(ref.assign(system=ref["system"].map(label)).set_index("system")
                 .rename(columns=names).style.format({
                     name: "{:.2f}" if m == "similarity" else "{:.1%}"  # a mean cosine
                     for m, name in names.items()}), width="stretch")

# --- which signal agrees with the truth -----------------------------------------------------------
agreement = state.view(run).signal_agreement()
if agreement is not None and not agreement[0].empty:
    signal_table, truth = agreement
    st.subheader("Which signal agrees with the truth here?")
    for line in model.agreement_captions(truth):
        st.caption(line)
    best = signals.best_line(signal_table, lambda name: f"**{widgets.md(name)}**")
    if best:
        st.markdown(best)
    st.dataframe(signals.display_table(signal_table), width="stretch",
                 hide_index=True,
                 column_config={"LLM calls": st.column_config.TextColumn(
                     help="LLM calls the signal cost: 0 for Score_IR and the reference metrics; "
                          "the judge's calls; for a metric, the calls of the steps it reads (a "
                          "step metrics share counts for each); – not recorded")})
    signal_scatter.panel(run)
if answers is not None:
    metrics_choice.chooser(run)

# --- eRAG: retrieval judged by the generator ----------------------------------------------------
if (erag := state.view(run).erag()) is not None:
    st.subheader("Retrieval judged by the generator (eRAG)")
    st.caption(model.erag_caption(state.view(run).erag_cost()))
    names = {m: signals.signal_label(m) for m in ERAG_LABELS}
    st.dataframe(erag.means.assign(system=erag.means["system"].map(label)).set_index("system")
                 .rename(columns={"n": "questions", **names})
                 .style.format("{:.3f}", subset=list(names.values())), width="stretch")

# --- controlled contexts ------------------------------------------------------------------------
if (stressed := stress_model.stress(state.view(run))) is not None:
    s = stressed.summary
    st.subheader("Does the evidence cause good answers? (controlled contexts)")
    answered, under_dose = model.stress_captions(stressed.contexts, stressed.questions,
                                                 stressed.budget, stressed.h is not None)
    st.caption(answered)
    for line in stressed.sentences:
        st.markdown(f"- {widgets.md(line)}")
    left, right = st.columns([3, 2])
    with left:
        widgets.chart(stress_viz.noise_curve(s.by_ratio), key="llm_stress_noise")
    with right:
        if len(s.by_position):
            widgets.chart(stress_viz.position_bars(s.by_position, stressed.position_ratio),
                          key="llm_stress_position")
    widgets.chart(stress_viz.dose_response(s.curve, stressed.observed, stressed.h, stressed.k),
                  key="llm_stress_dose")
    st.caption(under_dose)

if run.has("retrieved"):  # a launcher per LLM stage on an existing run (the registry's)
    stage_launcher.launchers(run, {
        "erag": ("Judge retrieval with the generator (eRAG)",
                 "One LLM call per question and retrieved chunk (up to k per retriever), each "
                 "chunk alone: the direct rival of Score_IR, which needs none. `ragdash erag "
                 "--run-dir` does the same.", 5),
        "stress": ("Test the generator on controlled contexts (noise, position, no evidence)",
                   "Nine calls per question by default: six noise ratios and three positions "
                   "of the evidence. `ragdash stress --run-dir` does the same.", 10)})

refusals()

# --- errors ---------------------------------------------------------------------------------------
st.subheader("Errors (kept apart)")
errs = judging.errors_table(all_answers, all_judgments)
if errs.empty:
    st.success("No failed generation or judge call.")
else:
    st.dataframe(model.error_counts(errs, order, name=label), width="stretch")
    with st.expander(f"All {len(errs):,} errors"):
        st.dataframe(errs.assign(system=errs["system"].map(label)), hide_index=True,
                     width="stretch")

# --- latency, tokens, cost ---------------------------------------------------------------------
if answers is not None:
    st.subheader("Latency, tokens and cost")
    use = judging.usage(all_answers, order)
    left, right = st.columns(2)
    with left:
        widgets.chart(llm.latency_box(all_answers, list(use["system"])), key="llm_latency")
    with right:
        widgets.chart(llm.tokens_bars(use), key="llm_tokens")
    st.dataframe(use.assign(system=use["system"].map(label)).set_index("system").rename(columns={
        "latency_median_s": "median latency (s)", "latency_p90_s": "p90 latency (s)",
        "tokens_in_mean": "prompt tokens (mean)", "tokens_out_mean": "answer tokens (mean)"})
        .style.format({"median latency (s)": "{:.2f}", "p90 latency (s)": "{:.2f}",
                       "prompt tokens (mean)": "{:,.0f}", "answer tokens (mean)": "{:,.0f}"}),
        width="stretch")
cost = judging.costs(all_answers, all_judgments, state.view(run).llm_backends)
if not cost.empty:
    st.markdown(model.cost_line(cost))
    st.dataframe(cost.style.format({"usd": "${:,.4f}", "latency_s": "{:,.1f}",
                                    "tokens_in": "{:,}", "tokens_out": "{:,}"}, na_rep="unknown"),
                 hide_index=True, width="stretch")

launcher(expanded=False)
