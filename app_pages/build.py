"""Build a run: choose the dataset, chunker, retrievers and their parameters, tokenizer, budgets
and sample size; the pipeline runs as a job process of its own (ragdash.jobs) while this page
follows its progress from the run directory, and stays usable. Earlier runs are listed below."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from ragdash import chunking, retrieval
from ragdash.budget import TOKENIZERS
from ragdash.config import SAMPLE_DATASET, ConfigError, expand, load_spec
from ragdash.data import DataError
from ragdash.llm import keys as llm_keys
from ragdash.llm.prompts import GENERATION_PROMPTS
from ragdash.llm.settings import BACKENDS, JUDGE_MODES, LOCAL_GENERATOR, judge_model_for
from ragdash.params import Param
from ragdash.planning import stage_plan
from ragdash.retrieval import custom as live_retrievers
from ragdash.rundir import Run, list_runs
from ragdash.rundir.lock import RunLocked
from ragdash.rundir.manage import delete_run, rename_run
from ragdash.rundir.manifest import ManifestError
from ragdash.scoring import METHODS
from ragdash.stages.runner import configured_stages
from ragdash.ui import jobs, navigation, paths, server, state, sweep_grid, systems_upload, widgets
from ragdash.view import build as build_view
from ragdash.view.build_form import BuildForm
from ragdash.viz import questions
from ragdash.viz.colors import label


def param_inputs(owner: str, params: tuple[Param, ...], values: dict, prefix: str) -> dict:
    """One widget per declared parameter (`ragdash.params.Param`): a choice box, or a number
    input within its bounds, or a text box, with its one-line help; returns the chosen values."""
    out = {}
    cols = st.columns(3)
    for i, p in enumerate(params):
        box, value = cols[i % 3], values.get(p.name, p.default)
        kw = {"key": f"{prefix}_{owner}_{p.name}", "help": p.help}
        bounds = {k: p.kind(v) for k, v in (("min_value", p.low), ("max_value", p.high))
                  if v is not None}
        if p.choices is not None:
            out[p.name] = box.selectbox(p.name, p.choices, index=p.choices.index(value)
                                        if value in p.choices else 0, **kw)
        elif p.kind is int:
            out[p.name] = int(box.number_input(p.name, value=int(value), step=1, **bounds,
                                               **kw))
        elif p.kind is float:
            out[p.name] = float(box.number_input(p.name, value=float(value), format="%.3f",
                                                 **bounds, **kw))
        else:
            out[p.name] = box.text_input(p.name, str(value), **kw)
    return out


def _manage(action, done: str) -> None:
    """Rename or delete a run, then say what happened (the run picker drops a run that is gone)."""
    try:
        action()
    except (ValueError, OSError) as exc:
        st.error(str(exc))
        return
    st.session_state["build_note"] = done
    st.rerun()


def _open(key: str) -> None:
    st.session_state["run"] = key
    st.session_state["build_goto"] = True


if st.session_state.pop("build_goto", False):
    st.switch_page(navigation.page("overview"))

st.title("Build a run")
st.caption("Runs the ingest → chunk → retrieve → score stages into a run directory under "
           f"{widgets.code(state.run_key(state.runs_root()) + '/')}. Finished stages with "
           "unchanged settings are skipped, so re-running a name resumes it. Generating and "
           "judging answers is optional (section 5).")

# --- dataset ------------------------------------------------------------------------------------
upload = st.session_state.get("data_upload")
names = build_view.source_names(SAMPLE_DATASET.name, upload)
with st.container(border=True):
    st.subheader("1 · Dataset")
    source = st.radio("Dataset", build_view.SOURCES, format_func=names.get, key="build_source",
                      index=1 if upload else 0, label_visibility="collapsed")
    typed = ("", "")
    if source == "upload" and not upload:
        st.info("Upload a dataset (and a corpus) on the **Data** page first.")
        st.page_link(navigation.page("data"), label="Go to Data", icon=":material/dataset:")
    elif source == "upload":
        st.caption(build_view.upload_caption(upload, widgets.md, widgets.code))
    elif source == "path":
        c1, c2 = st.columns(2)
        typed = (c1.text_input("Dataset path", key="build_path"),
                 c2.text_input("Corpus path (file, folder or .zip)", key="build_cpath"))
    ds = build_view.dataset_section(source, str(SAMPLE_DATASET), upload, *typed)
    limit = st.number_input("Sample size: the first N questions (0 = all)", 0, 1_000_000,
                            100 if source == "sample" else 0, step=50, key="build_limit")

# --- chunker --------------------------------------------------------------------------------
with st.container(border=True):
    st.subheader("2 · Chunking")
    method = st.selectbox("Chunker", list(chunking.CHUNKERS), key="build_chunker",
                          format_func=lambda m: f"{m} — {chunking.describe(m)}")
    ch_params = param_inputs(method, chunking.params_of(method),
                             chunking.default_params(method), "build_ch")
    max_chars = st.number_input("Split chunks longer than (characters, 0 = never)", 0, 100_000,
                                0, step=100, key="build_maxchars")

# --- retrievers -----------------------------------------------------------------------------
with st.container(border=True):
    st.subheader("3 · Retrievers")
    c1, c2 = st.columns([1, 3])
    preset = c1.selectbox("Preset", list(retrieval.PRESETS), key="build_preset",
                          help="paper: BM25 and MLQ keep 5 chunks, SIM/MMR/REO 10; equal-k: 10 "
                               "everywhere")
    try:  # live retrievers: only those of the server's config file (never typed here)
        live = live_retrievers.configured()
    except ValueError as exc:
        live = {}
        st.warning(widgets.md(exc))
    use = c2.multiselect("Retrievers", [*retrieval.RETRIEVERS, *live], default=["bm25"],
                         format_func=label, key="build_rets",
                         help="\n\n".join([*retrieval.DESCRIPTIONS.values(),
                                            *(live_retrievers.describe(n, live[n])
                                              for n in live)]))
    own = systems_upload.build_choice(c2)  # the user's own systems, from the Data page
    if "mlq" in use:
        st.warning("MLQ writes sub-questions with an LLM: the local llama.cpp model is started "
                   "for it (minutes on a CPU).")
    r_params = {}
    for name in use:
        if name in live:  # its settings are the server's
            st.caption(widgets.md(live_retrievers.describe(name, live[name])))
            continue
        with st.expander(f"{label(name)} parameters"):
            st.caption(retrieval.DESCRIPTIONS[name])
            r_params[name] = param_inputs(name, retrieval.params_of(name),
                                          retrieval.resolve_params(name, preset),
                                          f"build_r_{preset}")

# --- chunk preview -------------------------------------------------------------------------------
with st.expander("Preview the chunks before the run", expanded=False):
    st.caption("Chunks the first 20 documents of the corpus with the chunker above: how many "
               "chunks, how long, the first ones, and a warning when the run could not tell "
               "retrievers apart.")
    k_max = build_view.preview_k(r_params)
    if not ds.get("path"):
        st.info("Choose a dataset first.")
    elif refused := paths.refused_config({"dataset": ds, "chunker": {"params": ch_params}}):
        st.error(widgets.md(refused[0]))
    elif st.toggle("Show the preview (follows the settings above)", key="build_preview"):
        try:
            pv = server.chunk_preview(
                (ds["path"], ds["format"], ds.get("corpus"), ds["corpus_format"],
                 ds.get("sheet"), tuple(sorted((ds.get("columns") or {}).items()))),
                int(limit) or None, method, tuple(sorted(ch_params.items())),
                int(max_chars) or None, k_max)
        except (ValueError, OSError) as exc:  # DataError is a ValueError
            st.error(f"Cannot preview: {widgets.md(exc)}")
        else:
            m = st.columns(3)
            m[0].metric("Chunks", f"{pv.chunks:,}",
                        help=f"From the first {pv.documents} of {pv.corpus_documents:,} "
                             "documents")
            m[1].metric("Mean length", f"{pv.mean_chars:,.0f} characters")
            m[2].metric("Corpus", f"{pv.corpus_chars:,} characters")
            for w in pv.warnings:
                st.warning(w)
            widgets.chart(questions.lengths_histogram(pv.lengths, "Chunk length", "chunks"),
                          key="build_preview_hist")
            st.dataframe(pd.DataFrame([{"chunk": c.chunk_id, "characters": len(c.text),
                                        "text": c.text[:300]} for c in pv.first]),
                         hide_index=True, width="stretch")

# --- budgets and scoring ----------------------------------------------------------------------
with st.container(border=True):
    st.subheader("4 · Budgets and scoring")
    c = st.columns(4)
    tokenizer = c[0].selectbox("Tokenizer", TOKENIZERS, key="build_tok",
                               help="Counts the N tokens of C_N (llama3: the paper's)")
    budgets = c[1].text_input("Budgets N", "100:1000:100", key="build_budgets",
                              help="START:STOP:STEP or a list like 100,500,1000")
    s_method = c[2].selectbox("Matching", METHODS, key="build_method")
    s_mode = c[3].selectbox("Mode", ["corrected", "reference"], key="build_mode")

# --- LLM stages --------------------------------------------------------------------------------
with st.container(border=True):
    st.subheader("5 · Answers and judging (optional)")
    use_llm = st.toggle("Generate answers from C_N, judge them and fit h and k", False,
                        key="build_llm",
                        help="Adds the generate → judge → calibrate stages. The local model "
                             "needs no server but takes seconds per answer on a CPU.")
    llm_cfg: dict = {}
    api_key = ""
    if use_llm:
        c = st.columns(3)
        backend = c[0].selectbox("Backend", BACKENDS, key="build_llm_backend")
        model = c[1].text_input(
            "Model (empty: the backend's default)", key="build_llm_model",
            placeholder=f"local: {LOCAL_GENERATOR} answers, qwen writes MLQ sub-questions",
            help="Empty: for the local backend Qwen2.5-Coder 1.5B generates the answers (the "
                 "0.5B refuses most questions even with the evidence in its context; "
                 "docs/llm.md) and Qwen2.5 0.5B writes MLQ's sub-questions; a model named "
                 "here does both.")
        base_url = c[2].text_input("Base URL (empty: default)", key="build_llm_url")
        llm_cfg = {"backend": backend, "model": model or None, "base_url": base_url or None}
        c = st.columns(3)
        judge_backend = c[0].selectbox("Judge backend", BACKENDS, key="build_judge_backend")
        judge_model = c[1].text_input(
            "Judge model", key="build_judge_model",
            placeholder="local: qwen-1.5b (Qwen2.5-Coder 1.5B); openai: gpt-4o",
            help="Empty: Qwen2.5-Coder 1.5B for the local backend, else the backend's default. "
                 "The 0.5B generator cannot judge (it scores by position).")
        judge_mode = c[2].selectbox(
            "Judge mode", JUDGE_MODES, index=JUDGE_MODES.index("stepwise"), key="build_judge_mode",
            help="stepwise: one or two short questions per answer, for small local judges; "
                 "grouped: the paper's one call per question, for large judges such as GPT-4o")
        prompt = st.radio(
            "Generation prompt", GENERATION_PROMPTS, index=GENERATION_PROMPTS.index("abstain"),
            horizontal=True, key="build_prompt",
            help="abstain: answer from the documents in one or two sentences, and reply 'I "
                 "cannot find enough information in the documents.' only when they say nothing "
                 "about the question, so the 'lacks information' class (judge 1) occurs; "
                 "paper: the paper's text unchanged")
        judge_cfg = {"backend": judge_backend, "base_url": base_url or None,
                     "model": judge_model_for(judge_backend, judge_model)}
        api_key = st.text_input(
            "API key for this server (optional; kept in memory only, never written: the job "
            "process gets it in its environment)", type="password", key="build_api_key")
        st.caption(widgets.md(llm_keys.job_note(backend, base_url or None, bool(api_key))))

# --- several runs at once ----------------------------------------------------------------------
with st.container(border=True):
    st.subheader("6 · Several runs at once (optional)")
    sweeping = st.toggle("Vary one or two settings: one run per combination", False,
                         key="build_sweep",
                         help="As `ragdash sweep --vary KEY=V1,V2`: the runs go into one folder "
                              "named as the run below, share indexes and caches, and open "
                              "together on Compare runs.")
    vary_texts: list[str] = []
    if sweeping:
        keys = build_view.sweep_settings(use, retrieval.RETRIEVERS)
        c = st.columns(2)
        for i in range(2):
            k = c[i].selectbox(f"Setting {i + 1}", ["", *keys], key=f"build_vary_key{i}",
                               format_func=lambda x: x or "—")
            v = c[i].text_input(f"Values of setting {i + 1} (comma-separated)",
                                key=f"build_vary_values{i}",
                                placeholder=build_view.SWEEP_EXAMPLES.get(k, "5, 10") if k else "")
            if k and v.strip():
                vary_texts.append(f"{k}={v}")

stamp = datetime.now().strftime("%Y%m%d-%H%M")
name = st.text_input("Run name (folder under the runs root)", f"run-{stamp}", key="build_name")
form = BuildForm(name, ds, source, upload, int(limit), method, ch_params, int(max_chars), preset,
                 use, r_params, tokenizer, budgets, s_method, s_mode,
                 llm_cfg if use_llm else None, judge_cfg if use_llm else None,
                 judge_mode if use_llm else "stepwise", prompt if use_llm else "abstain",
                 custom={n: live[n] for n in use if n in live}, systems=own)
problems = form.problems()
run_dir = state.runs_root() / (name or "_")
if Run(run_dir).exists() and not problems:
    st.caption(f"{widgets.code(state.run_key(run_dir))} exists: finished stages with the same "
               "settings are kept, the rest is redone.")
overrides = form.overrides(state.runs_root())  # dotted keys, as `ragdash run --set` takes
# the dashboard reads only under its allowed roots: every path the settings name is checked
# before anything reads it (the sweep's values in `sweep_grid.plan`)
problems += paths.refused_config(expand(overrides))
if not problems:  # checked as the settings change: the start button waits for valid ones
    try:
        load_spec(None, overrides)
    except (ConfigError, ValueError) as exc:
        problems.append(f"The settings are not valid: {exc}")
planned: list = []
if sweeping and not problems:
    if not vary_texts:
        problems.append("Give a setting and at least one value to vary, or switch the sweep "
                        "off.")
    else:
        try:
            planned = sweep_grid.plan(overrides, vary_texts, run_dir)
        except (ConfigError, ValueError) as exc:
            problems.append(f"Sweep: {exc}")
    if planned:
        st.markdown(f"**{len(planned)} runs** in {widgets.code(state.run_key(run_dir))}:")
        st.dataframe(sweep_grid.table(planned), hide_index=True, width="stretch")
for p in problems:
    st.warning(widgets.md(p))

plan: dict = {}  # the LLM stages' time, for the job's ETA
if use_llm and not problems and not planned:
    with st.container(border=True):
        st.markdown("**What the LLM stages would cost** (estimated before any call)")
        try:
            est = server.llm_estimate(json.dumps(overrides, sort_keys=True, default=str))
        except (ConfigError, DataError, ValueError, OSError) as exc:
            st.warning(f"No estimate: {widgets.md(exc)}")
        else:
            for part, value in build_view.estimate_lines(est):
                st.markdown(f"**{widgets.md(part)}**: {widgets.md(value)}")
            st.caption("The judge is priced for every answer; answers the refusal rule scores "
                       "are never sent to it, so it takes less when the generator abstains.")
            plan = stage_plan(est)

job = jobs.current(run_dir)
busy = job is not None and job.active
if st.button(build_view.start_label(len(planned)), type="primary", disabled=bool(problems) or busy,
             key="build_start"):
    try:
        cfg = load_spec(None, overrides).to_config()
    except (ConfigError, ValueError) as exc:
        st.error(f"The settings are not valid: {widgets.md(exc)}")
    else:
        try:
            job = sweep_grid.start(planned, run_dir, api_key or None) if planned else \
                jobs.start(cfg, run_dir, configured_stages(cfg), api_key=api_key or None,
                           plan=plan)
        except (RunLocked, paths.OutsideRoots, ManifestError) as exc:  # RunLocked: another
            st.error(widgets.md(exc))  # user, or a `ragdash` command, runs it now; ManifestError:
            # a run of that name whose run.json cannot be read, left as it is
        else:
            st.session_state["build_job"] = str(run_dir)

# --- progress: this session's run, and every job under the runs root (a reload, or a restarted
# server, reconnects: jobs run in their own processes and report in their run directories) ------
homes = [st.session_state.get("build_job"), *(str(j.home) for j in jobs.recent(state.runs_root()))]
for i, home in enumerate(dict.fromkeys(h for h in homes if h)):
    jobs.follow_run(home, on_open=lambda h=home: _open(state.run_key(Path(h))), key=f"build{i}")
    current = jobs.current(home)
    if current is not None and current.runs and current.state == "finished":
        st.page_link(navigation.page("runs"), icon=":material/leaderboard:",
                     label=f"Compare the {len(current.runs)} runs of {current.home.name}",
                     query_params={"rn_runs": [state.run_key(d) for d in current.runs]})

# --- earlier runs ------------------------------------------------------------------------------
st.subheader("Earlier runs")
runs = list_runs(state.runs_root())
if not runs:
    st.caption("No run under the runs root yet.")
else:
    table, unreadable = build_view.earlier_runs(runs, name=label)
    st.dataframe(table, hide_index=True, width="stretch")
    keys = {state.run_key(r.path): r for r in runs}
    c1, c2, c3, c4 = st.columns([4, 1, 1, 1])
    pick = c1.selectbox("Open an earlier run", list(keys), key="build_pick",
                        format_func=lambda k: f"{keys[k].path.name} (unreadable)"
                        if unreadable[str(keys[k].path)] else keys[k].id,
                        label_visibility="collapsed")
    c2.button("Open", on_click=_open, args=(pick,), key="build_open_earlier", width="stretch",
              disabled=bool(unreadable[str(keys[pick].path)]))
    picked = keys[pick]
    busy_pick = jobs.busy(picked.path)
    with c3.popover("Rename", width="stretch", disabled=busy_pick,
                    help="A running run cannot be renamed" if busy_pick else None):
        new_name = st.text_input("New name", picked.path.name, key="build_rename_to")
        if st.button("Rename the run", key="build_rename_go"):
            _manage(lambda: rename_run(picked, new_name, state.runs_root()),
                    f"Renamed {picked.path.name} to {new_name}.")
    with c4.popover("Delete", width="stretch", disabled=busy_pick,
                    help="A running run cannot be deleted" if busy_pick else None):
        st.warning(f"Delete run **{widgets.md(picked.path.name)}** and every file in it? This "
                   "cannot be undone.")
        if st.button("Delete for good", type="primary", key="build_delete_go"):
            _manage(lambda: delete_run(picked, state.runs_root()),
                    f"Deleted {picked.path.name}.")
if note := st.session_state.pop("build_note", None):
    st.success(widgets.md(note))
