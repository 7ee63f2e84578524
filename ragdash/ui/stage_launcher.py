"""One LLM stage of an existing run started from the LLM results page as a background job (eRAG,
the controlled contexts): how many questions, the dry-run estimate of the stage's own calls
(what `ragdash <stage> --run-dir R --dry-run` prints: the calls a run sends), and a button.
Nothing calls an LLM before the button."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from ragdash.config import ConfigError, RunSpec, deep_merge, saved_config
from ragdash.planning import stage_estimate
from ragdash.rundir import Run
from ragdash.rundir.lock import RunLocked
from ragdash.stages import REGISTRY, STAGES
from ragdash.ui import jobs, state, widgets

SINGLE = tuple(s.name for s in REGISTRY if s.llm_stage and s.on_run_dir)
"""The stages the LLM page starts alone (LLM stages that work on an existing run: the metrics,
eRAG, the controlled contexts), each with its own launcher."""


CHOOSERS = ("metrics",)
"""Those of SINGLE started from a chooser of their own (`ragdash.ui.metrics_choice`)."""


def launchers(run: Run, texts: Mapping[str, tuple[str, str, int]]) -> None:
    """A `launcher` per stage of SINGLE but CHOOSERS, in registry order: with the page's title,
    caption and default number of questions where `texts` has them, else the stage's own
    words (a stage added to the registry gets its launcher without a page edit)."""
    for name in SINGLE:
        if name in CHOOSERS:
            continue
        stage = STAGES[name]
        title, about, limit = texts.get(name, (
            f"Run {name}: {stage.about}", f"`ragdash {stage.cli} --run-dir` does the same.", 10))
        launcher(run, name, title, about, default_limit=limit)


def is_single_stage_job(job) -> bool:
    """Whether a run's job runs one of SINGLE alone (its launcher follows it, not the page's
    generation launcher)."""
    return len(job.stages) == 1 and job.stages[0] in SINGLE


def launcher(run: Run, stage: str, title: str, about: str, default_limit: int = 10) -> None:
    """An expander: the first N questions (`limit` of the stage's section), the estimate of its
    plan (`ragdash.planning.stage_estimate`), the API key and the start button; the job's
    progress once started."""
    saved = saved_config(run.manifest)
    n_q = len(run.table("examples")) if run.has("examples") else 0
    with st.expander(title):
        st.caption(about)
        limit = st.number_input("Questions (the first N; 0 = all)", 0, max(n_q, 1),
                                min(default_limit, n_q), 1, key=f"{stage}_limit")
        base = {k: v for k, v in saved.items() if not k.startswith("_")}
        try:
            spec = RunSpec.from_config(deep_merge(base, {STAGES[stage].section: {
                "enabled": True, "limit": int(limit) or None}}))
        except ConfigError as exc:
            st.error(f"The settings are not valid: {widgets.md(exc)}")
            return
        try:
            est, cached = state.MEMO.get(
                (f"{stage} estimate", str(run.path), int(limit)),
                lambda reader: stage_estimate(Run(run.path, reader), spec, stage),
                "Planning the calls…")
        except (ValueError, FileNotFoundError) as exc:
            st.error(f"No estimate: {widgets.md(exc)}")
            return
        money = "price unknown" if est.usd is None else f"${est.usd:,.2f}"
        done = f" · {cached:,} more answered by the reply cache" if cached else ""
        st.markdown(f"**{est.calls:,} LLM calls** · {est.tokens_in:,} tokens in · "
                    f"{est.tokens_out:,} tokens out · {money} · "
                    f"**{widgets.md(est.time_text())}**{done}")
        job = jobs.current(run.path)
        busy = job is not None and job.active
        key = st.text_input("OpenAI API key (kept in memory only; the job process gets it in "
                            "its environment)", type="password", key=f"{stage}_api_key")
        if st.button("▶ Start", type="primary", key=f"{stage}_start",
                     disabled=busy or est.calls + cached == 0):
            try:
                jobs.start(spec.to_config(), run.path, (stage,), api_key=key or None,
                           kind="llm")
            except RunLocked as exc:
                st.error(widgets.md(exc))
        job = jobs.current(run.path)
        if job is not None and tuple(job.stages) == (stage,):
            jobs.follow_run(run.path, key=f"{stage}_job")
