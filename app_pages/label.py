"""Label answers: a person says whether each sampled answer is correct, one answer at a time.

The sample is drawn once by a rule fixed before labelling (by default stratified by system and
the judge's verdict, which narrows the interval for the same labels) and stored in the run, so
labelling stops and resumes, by several people. The judge's score is never shown here. Labels go
to labels.parquet; the Overview and LLM results pages then show how far the judge is from them
and the share correct with its interval. Before each label the page says how wide the intervals
are now and how many labels reach ±5 points."""

from __future__ import annotations

import html

import streamlit as st

from ragdash import labels
from ragdash.constants import LLM_ONLY
from ragdash.labels import headline, sampling, store, tables
from ragdash.ui import evidence, navigation, server, state, trust, widgets
from ragdash.view.context import cut_context, part_matches
from ragdash.viz.colors import PART_COLORS, label

run = state.require_run()
st.title("Label answers")
st.caption("Say whether each answer is correct, as a careful reader would: these labels check "
           "the judge and give the share correct with an interval that stays valid whatever "
           "the judge's bias. The judge's score is hidden here. Keys: **1** correct · **2** "
           "partly correct · **3** wrong · **4** cannot tell · **U** undo.")

if state.view(run).answers() is None:
    widgets.missing("No answers to label", "generate answers first (the LLM results page, or "
                    "`ragdash generate`).")
    st.stop()

labeller = st.text_input("Your name (stored with each label)", key="lb_name",
                         bind="query-params", max_chars=store.MAX_LABELLER,
                         placeholder="e.g. Ana").strip()

# --- the sample, drawn once ----------------------------------------------------------------------
sample = store.read_sample(run)
total = len(store.labelable(run))
with st.expander("The sample to label" + (f": {len(sample)} answers" if sample is not None
                                           else ""), expanded=sample is None):
    if sample is not None:
        st.caption(f"Drawn {sample['drawn'].iloc[0][:16].replace('T', ' ')} UTC by rule "
                   f"**{sample['rule'].iloc[0]}**, seed {int(sample['seed'].iloc[0])}, from "
                   f"{total:,} answers. A larger size extends it in the same random order.")
    c = st.columns([1, 1, 1, 1])
    n = c[0].number_input("Answers to label", 1, max(total, 1),
                          min(max(len(sample) if sample is not None else 0,
                                  labels.DEFAULT_SAMPLE), max(total, 1)), key="lb_n")
    rule = c[1].selectbox("Rule", store.RULES, key="lb_rule", disabled=sample is not None,
                          index=0 if sample is None else store.RULES.index(sample["rule"].iloc[0]),
                          format_func=sampling.RULE_NAMES.get,
                          help="by system × judge's verdict (default): each system's answers "
                               "judged 5 and not, in proportion; Neyman: the same strata, more "
                               "labels where the answers differ most (the narrowest pooled "
                               "interval); uniform: every answer equally likely; equal per "
                               "system: the same number per system, when each system's figure "
                               "is the goal")
    seed = c[2].number_input("Seed", 0, 2**31 - 1,
                             0 if sample is None else int(sample["seed"].iloc[0]), key="lb_seed",
                             disabled=sample is not None)
    c[3].write("")
    if c[3].button("Draw the sample" if sample is None else "Extend the sample",
                   key="lb_draw", width="stretch",
                   disabled=sample is not None and n <= len(sample)):
        try:
            store.draw_sample(run, int(n), rule, int(seed))
        except (ValueError, RuntimeError) as exc:
            st.error(widgets.md(exc))
        else:
            st.rerun()
if sample is None:
    st.info("Draw the sample first: its rule is fixed before anyone labels, so the labelled "
            "answers stay a random sample.")
    st.stop()
if not labeller:
    st.info("Give your name to start: labels are kept per person, so two people labelling the "
            "same answers give their agreement.")
    st.stop()

# --- progress ------------------------------------------------------------------------------------
done = store.progress(run, labeller)
everyone = store.progress(run)
st.progress(done["labelled"] / max(done["sample"], 1),
            text=f"{done['labelled']} of {done['sample']} labelled by {widgets.md(labeller)}"
                 + (f" · {everyone['labelled']} of {everyone['sample']} by anyone"
                    if everyone["labelled"] != done["labelled"] else ""))

if (flash := st.session_state.pop("lb_flash", None)) is not None:
    st.toast(flash)


def _where_it_stands() -> None:
    """How wide the pooled and each system's interval are now, and the labels for ±5 points."""
    found = trust.sections(run)
    if found is None:
        return
    st.caption(widgets.md(headline.intervals_now(found["share"], name=label)))


_where_it_stands()


def _label(item: store.Item, choice: str) -> None:
    """A button's callback: store the label, then the next answer appears."""
    try:
        store.add_label(run, item.qid, item.system, choice, labeller,
                        st.session_state.get("lb_comment", ""))
    except (ValueError, RuntimeError) as exc:
        st.session_state["lb_flash"] = f"Not saved: {exc}"
        return
    st.session_state["lb_comment"] = ""
    st.session_state["lb_flash"] = f"Saved: {choice} ({item.qid}, {label(item.system)})"


def _undo() -> None:
    row = store.undo_last(run, labeller)
    st.session_state["lb_flash"] = ("Nothing to undo" if row is None else
                                    f"Undone: {row['label']} ({row['qid']}, "
                                    f"{label(row['system'])})")


item = store.next_to_label(run, labeller)
undo_col, next_col = st.columns([1, 3])
undo_col.button("↶ Undo my last label", key="lb_undo", on_click=_undo, shortcut="U",
                disabled=done["labelled"] == 0)
if item is None:
    st.success(f"All {done['sample']} answers of the sample are labelled by you. Extend the "
               "sample above to label more, or see what the labels say.")
    st.page_link(navigation.page("overview"), label="See the estimate on the Overview",
                 icon=":material/dashboard:")
else:
    with st.container(border=True):
        golds = "".join(f"<li>{html.escape(g)}</li>" for g in item.gold_answers) or \
            "<li><i>none given</i></li>"
        st.html(f'<div style="overflow-wrap:anywhere"><div class="rd-note">Answer '
                f"{item.position} of the sample · question {html.escape(item.qid)} · "
                f"{widgets.chip(item.system)}</div>"
                f'<h3 style="margin:0.4rem 0">{html.escape(item.question)}</h3>'
                f"<div><b>Gold answer(s):</b><ul style='margin:0'>{golds}</ul></div>"
                f'<div style="font-size:1.15rem;margin-top:0.6rem;padding:10px 14px;'
                f'background:#f1f3f5;border-radius:6px"><b>Answer:</b> '
                f"{html.escape(item.answer)}</div></div>")
        st.text_input("Comment (optional)", key="lb_comment", max_chars=store.MAX_COMMENT)
        keys = st.columns(4)
        for col, (choice, key) in zip(keys, (("correct", "1"), ("partly correct", "2"),
                                             ("wrong", "3"), ("cannot tell", "4")), strict=True):
            # all four alike: no button suggests an answer to the labeller
            col.button(choice.capitalize(), key=f"lb_{key}", on_click=_label,
                       args=(item, choice), shortcut=key, type="secondary", width="stretch")

    # the context the answer was generated from, relevant parts highlighted
    budget = run.config.generation_budget
    if item.system == LLM_ONLY:
        st.caption("This answer was generated without retrieval (LLM only).")
    elif budget is not None:
        examples = run.table("examples")
        row = examples[examples["qid"].astype(str) == item.qid]
        parts = list(row["parts"].iloc[0]) if len(row) else []
        view = cut_context(state.view(run), item.qid, item.system, budget, server.tokenizer)
        st.markdown(f"**The context it was given** (the first {budget:,} tokens of "
                    f"{widgets.md(label(item.system))}'s chunks; relevant parts highlighted)")
        if view is None:
            st.info("The retriever found nothing for this question: the answer had no context.")
        else:
            st.html(evidence.CSS + evidence.parts_legend(parts, None, PART_COLORS))
            with st.container(height=420, border=False):
                st.html(evidence.CSS + evidence.context_html(
                    view.chunks, part_matches(view, parts), view.cut, budget,
                    whole=not view.reached))

# --- two labellers on the same answers -----------------------------------------------------------
given = store.read_labels(run)
given = given[given["label"] != "cannot tell"]
if given["labeller"].nunique() > 1:
    from ragdash.calibration.agreement import inter_annotator

    if (pairs := tables.annotators_frame({"annotators": inter_annotator(given)})) is not None:
        st.subheader("Agreement between labellers")
        st.caption("On the answers both labelled (\"cannot tell\" left out); Cohen's kappa is 1 "
                   "for full agreement and 0 for agreement no better than chance.")
        st.dataframe(pairs, hide_index=True, width="stretch", column_config={
            "n": st.column_config.NumberColumn("answers"),
            "same label": st.column_config.NumberColumn(format="percent"),
            "Cohen's κ": st.column_config.NumberColumn(format="%.2f")})
