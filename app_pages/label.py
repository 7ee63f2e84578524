"""Label answers: a person says whether each sampled answer is correct, one answer at a time.

The sample is drawn once by a rule fixed before labelling (by default stratified by system and
the judge's verdict, which narrows the interval for the same labels) and stored in the run, so
labelling stops and resumes, by several people. The judge's score is never shown here. Labels go
to labels.parquet; the Overview and LLM results pages then show how far the judge is from them
and the share correct with its interval. Before each label the page says how wide the intervals
are now and how many labels reach ±5 points."""

from __future__ import annotations

import streamlit as st

from ragdash.labels import headline, sampling, store
from ragdash.ui import evidence, navigation, server, state, trust, widgets
from ragdash.view import label as model
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
box = model.sample_box(sample, len(store.labelable(run)), sampling.RULE_NAMES)
with st.expander(box.title, expanded=not box.fixed):
    if box.caption:
        st.caption(box.caption)
    c = st.columns([1, 1, 1, 1])
    n = c[0].number_input("Answers to label", 1, box.largest, box.size, key="lb_n")
    rule = c[1].selectbox("Rule", store.RULES, key="lb_rule", disabled=box.fixed,
                          index=store.RULES.index(box.rule), format_func=sampling.RULE_NAMES.get,
                          help="by system × judge's verdict (default): each system's answers "
                               "judged 5 and not, in proportion; Neyman: the same strata, more "
                               "labels where the answers differ most (the narrowest pooled "
                               "interval); uniform: every answer equally likely; equal per "
                               "system: the same number per system, when each system's figure "
                               "is the goal")
    seed = c[2].number_input("Seed", 0, 2**31 - 1, box.seed, key="lb_seed", disabled=box.fixed)
    c[3].write("")
    if c[3].button(box.button, key="lb_draw", width="stretch",
                   disabled=box.fixed and n <= box.drawn):
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
done = model.progress(store.progress(run, labeller), store.progress(run), labeller, widgets.md)
st.progress(done.fraction, text=done.text)

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
    st.session_state["lb_flash"] = model.saved_note(item, choice, label)


def _undo() -> None:
    st.session_state["lb_flash"] = model.undone_note(store.undo_last(run, labeller), label)


item = store.next_to_label(run, labeller)
undo_col, next_col = st.columns([1, 3])
undo_col.button("↶ Undo my last label", key="lb_undo", on_click=_undo, shortcut="U",
                disabled=done.labelled == 0)
if item is None:
    st.success(done.finished)
    st.page_link(navigation.page("overview"), label="See the estimate on the Overview",
                 icon=":material/dashboard:")
else:
    with st.container(border=True):
        st.html(model.card_html(item, widgets.chip(item.system)))
        st.text_input("Comment (optional)", key="lb_comment", max_chars=store.MAX_COMMENT)
        for col, (choice, key) in zip(st.columns(4), model.CHOICES, strict=True):
            # all four alike: no button suggests an answer to the labeller
            col.button(choice.capitalize(), key=f"lb_{key}", on_click=_label,
                       args=(item, choice), shortcut=key, type="secondary", width="stretch")

    # the context the answer was generated from, relevant parts highlighted
    ctx = model.context_of(item, run.table("examples"), state.view(run).generation_budget)
    if ctx.note:
        st.caption(ctx.note)
    elif ctx.budget is not None:
        budget, parts = ctx.budget, list(ctx.parts)
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
if (pairs := model.agreement(store.read_labels(run))) is not None:
    st.subheader("Agreement between labellers")
    st.caption("On the answers both labelled (\"cannot tell\" left out); Cohen's kappa is 1 "
               "for full agreement and 0 for agreement no better than chance.")
    st.dataframe(pairs, hide_index=True, width="stretch", column_config={
        "n": st.column_config.NumberColumn("answers"),
        "same label": st.column_config.NumberColumn(format="percent"),
        "Cohen's κ": st.column_config.NumberColumn(format="%.2f")})
