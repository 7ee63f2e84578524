"""The LLM page's metric chooser: a checkbox per RAGAS and RAGChecker metric, grouped by
framework, the dry-run estimate of calls, tokens and time of the ticked ones (the same plan as
`ragdash metrics --dry-run`, re-priced as boxes are ticked), and a button that runs them as a
background job of the run (`ragdash.ui.jobs`). Nothing calls an LLM before the button."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from ragdash.config import ConfigError, RunSpec, deep_merge, saved_config
from ragdash.llm.cost import Estimate
from ragdash.llm.settings import BACKENDS
from ragdash.metrics import CATALOGUE, FRAMEWORKS
from ragdash.rundir import Run
from ragdash.rundir.lock import RunLocked
from ragdash.rundir.root import RunsRoot
from ragdash.stages.metrics import MAX_TOKENS, metrics_llm, metrics_settings, step_plan
from ragdash.ui import jobs, state, widgets

FRAMEWORK_TITLES = {"ragas": "RAGAS (Es et al. 2024)",
                    "ragchecker": "RAGChecker (Ru et al. 2024)"}
KEY = "mc"
LOCAL_CHECKER = ("Checked by the bundled local model: on 30 SQuAD answers its claim checks "
                 "agreed with the truth (claim recall, AUC 0.85 against `contains`) but its "
                 "verdicts on chunks were near chance (kappa 0.10 for RAGAS's usefulness, 0.20 "
                 "for RAGChecker's entailment). Read the chunk-level metrics from a larger "
                 "checker, or take `rc_context_precision_parts` (no LLM). No stronger checker "
                 "installs from a package here (docs/metrics.md, \"A stronger checker?\").")
"""What the measured local checker can and cannot check (`benchmarks/checker_agreement.py`)."""
"""Prefix of the chooser's widget keys: `mc_<metric>` per checkbox, `mc_limit`, `mc_start`."""


def job_config(saved: dict[str, Any], use: Sequence[str], limit: int | None,
               llm: dict[str, Any] | None) -> RunSpec:
    """The run's saved config with the metrics switched on: `use`, the first `limit` questions
    (None: all) and `llm` (None: the judge's, `stages.metrics.metrics_llm`); ConfigError for an
    invalid choice (no metric, a bad limit)."""
    if not use:
        raise ConfigError("tick at least one metric")
    base = {k: v for k, v in saved.items() if not k.startswith("_")}
    return RunSpec.from_config(deep_merge(base, {"metrics": {
        "enabled": True, "use": list(use), "limit": limit, "llm": llm}}))


def estimate_text(est: Estimate, chosen: int, cached: int = 0) -> str:
    """The estimate in one Markdown line (numbers in bold), with the `cached` calls the reply
    cache answers (not in the estimate)."""
    money = "price unknown" if est.usd is None else f"${est.usd:,.2f}"
    done = f" · {cached:,} more answered by the reply cache" if cached else ""
    return (f"**{chosen} metric{'s' if chosen != 1 else ''} → {est.calls:,} LLM calls** · "
            f"{est.tokens_in:,} tokens in · {est.tokens_out:,} tokens out · {money} · "
            f"**{widgets.md(est.time_text())}**{done}")


def _plan(run: Run, spec: RunSpec):
    """Every metric's steps on the run's answers at the spec's limit, kept until a file
    changes."""
    return state.MEMO.get(("metric steps", str(run.path), spec.metrics.limit), lambda reader:
                          step_plan(Run(run.path, reader), spec),
                          "Planning the metrics' calls…")


def _llm_override(borrowed: dict[str, Any]) -> dict[str, Any] | None:
    """The checker LLM's widgets; None while they keep the judge's settings."""
    c1, c2, c3 = st.columns(3)
    backend0 = borrowed.get("backend") or "local"
    backend = c1.selectbox("Checker backend", BACKENDS, key=f"{KEY}_backend",
                           index=BACKENDS.index(backend0) if backend0 in BACKENDS else 0)
    model = c2.text_input("Checker model", key=f"{KEY}_model",
                          placeholder=f"the judge's: {borrowed.get('model') or 'default'}")
    url = c3.text_input("Server URL (optional)", key=f"{KEY}_url",
                        placeholder="OpenAI-compatible URL or Ollama host")
    if backend == backend0 and not model and not url:
        return None
    return {"backend": backend, "model": model or None, "base_url": url or None,
            "max_tokens": MAX_TOKENS}


@st.fragment
def chooser(run: Run, expanded: bool = False) -> None:
    """The metric chooser of the LLM page (needs answers; see the module's docstring). A
    fragment: ticking a box re-prices the choice without redrawing the rest of the page."""
    saved = saved_config(run.manifest)
    n_q = len(run.table("examples")) if run.has("examples") else 0
    with st.expander("Measure the answers with RAGAS and RAGChecker metrics",
                     expanded=expanded):
        st.caption("Tick the metrics to compute; the estimate below updates at once and no "
                   "LLM is called until you press the button. An LLM checks each answer "
                   "(its claims, each retrieved chunk): calls add up fast on a local model, so "
                   "start with a few questions. Steps several metrics share are asked once "
                   "(docs/metrics.md).")
        limit = st.number_input("Questions (the first N; 0 = all)", 0, max(n_q, 1),
                                min(20, n_q), 1, key=f"{KEY}_limit",
                                help=f"Measure the answers to the first N of the run's "
                                     f"{n_q:,} questions")
        try:
            full = RunSpec.from_config(saved)
        except ConfigError as exc:
            st.error(f"The run's config is not valid: {widgets.md(exc)}")
            return
        llm = _llm_override(metrics_llm(full))
        if ((llm or metrics_llm(full)).get("backend") or "local") == "local":
            st.caption(LOCAL_CHECKER)
        if llm is not None and widgets.path_refused({"metrics": {"llm": llm}}):
            return
        cols = st.columns(len(FRAMEWORKS))
        chosen: list[str] = []
        for col, fw in zip(cols, FRAMEWORKS, strict=True):
            with col:
                st.markdown(f"**{FRAMEWORK_TITLES[fw]}**")
                for m in CATALOGUE:
                    if m.framework == fw and st.checkbox(
                            m.name, key=f"{KEY}_{m.name}",
                            help=m.about + ("" if m.steps else " (no LLM call)")):
                        chosen.append(m.name)
        try:
            spec = job_config(saved, chosen or ["faithfulness"], int(limit) or None, llm)
        except ConfigError as exc:
            st.error(f"The settings are not valid: {widgets.md(exc)}")
            return
        if not run.has("answers"):
            st.info("The metrics measure answers: generate them first (below).")
            return
        if not chosen:
            st.info("Tick one or more metrics to see what they would cost.")
        else:
            checker = metrics_settings(spec)  # priced as the stage's plan is
            est, cached = _plan(run, spec).chosen(chosen).price(checker,
                                                                RunsRoot(spec.runs_root))
            shown = ("the first question" if limit == 1 else
                     f"the first {int(limit):,} questions" if limit else f"all {n_q:,} questions")
            st.markdown(estimate_text(est, len(chosen), cached))
            st.caption(f"Dry-run estimate for {shown}, checker {widgets.md(est.model)} "
                       f"({widgets.md(checker.backend)}): a lower bound, correction rounds "
                       "after unreadable replies are not counted.")
        job = jobs.current(run.path)
        busy = job is not None and job.active
        key = st.text_input("OpenAI API key (kept in memory only; the job process gets it in "
                            "its environment)", type="password", key=f"{KEY}_api_key")
        if st.button("▶ Compute the ticked metrics", type="primary", key=f"{KEY}_start",
                     disabled=not chosen or busy,
                     help="tick a metric first" if not chosen else None):
            try:
                jobs.start(spec.to_config(), run.path, ("metrics",), api_key=key or None,
                           kind="llm")
            except RunLocked as exc:
                st.error(widgets.md(exc))
        job = jobs.current(run.path)
        if job is not None and is_metrics_job(job):
            jobs.follow_run(run.path, key=f"{KEY}_job")


def is_metrics_job(job) -> bool:
    """Whether a run's job is the chooser's (it runs the metrics stage alone)."""
    return tuple(job.stages) == ("metrics",)
