"""Small Streamlit building blocks shared by pages: headers, charts, pickers bound to the URL,
missing-file notices."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ragdash.rundir import Run
from ragdash.viz.colors import color_of, label

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2},
               "modeBarButtonsToRemove": ["lasso2d", "select2d"]}

GLOBAL_CSS = """
<style>
.block-container{padding-top:2.2rem;}
.rd-chip{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:6px;
  vertical-align:baseline;}
.rd-note{color:#5c677d;font-size:0.88rem;}
</style>
"""


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=^\"'])")
_AUTOLINK = re.compile(r"(?i)([a-z][a-z0-9+.\-]*:(?=/)|www(?=\.)|@)")
"""Where GitHub-flavoured Markdown starts a link on its own, escapes or not: a scheme before
`/` (`http://`), `www.`, and an e-mail's `@`."""
WORD_JOINER = "\u2060"
"""An invisible character that `md` puts after each `_AUTOLINK` start, so no link forms."""


def md(text: object) -> str:
    """`text` shown literally where Streamlit reads Markdown (st.markdown, captions, alerts,
    widget labels and help): every Markdown, HTML and Streamlit directive character
    (`:red[…]`, `:material/…:`, `$…$`) backslash-escaped, line breaks made spaces, and a
    word joiner after `http:`, `www` and `@` (Markdown's autolinks ignore escapes), so a run
    name, path, URL parameter or document string can make no link, image, tag or heading."""
    flat = re.sub(r"[\r\n\t\v\f]+", " ", str(text))
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub(rf"\1{WORD_JOINER}", flat))


def code(text: object) -> str:
    """`text` as an inline code span (shown verbatim in a monospace font), its backticks kept
    inside by a longer fence."""
    flat = re.sub(r"[\r\n\t\v\f]+", " ", str(text))
    fence = "`" * (max((len(m) for m in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat[:1] == "`" or flat[-1:] == "`" or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def css() -> None:
    st.html(GLOBAL_CSS)


def chart(fig: go.Figure, key: str | None = None) -> None:
    """A plotly figure at full width with the house toolbar."""
    st.plotly_chart(fig, width="stretch", theme=None, config=PLOT_CONFIG, key=key)


def header(title: str, run: Run | None = None, caption: str = "") -> None:
    st.title(title)
    if caption:
        st.caption(caption)


def chip(name: str) -> str:
    """HTML of a retriever name with its colour dot (name escaped by `label`'s plain text)."""
    import html

    return (f'<span class="rd-chip" style="background:{color_of(name)}"></span>'
            f"<b>{html.escape(label(name))}</b>")


def missing(what: str, how: str) -> None:
    """The informative notice for a run file a page needs but the run lacks."""
    st.info(f"**{what}** — {how}", icon="ℹ️")


def ir_scores_or_stop(run: Run) -> pd.DataFrame:
    """The run's Score_IR table; without one, an informative notice and the page stops."""
    ir = run.table("ir_scores")
    if ir is None:
        missing("No retrieval scores in this run", "its score stage has not run yet.")
        st.stop()
    return ir


SHARED_N = "budget_n"
"""The token budget N the user last chose on any page: every page's budget picker starts there
(its own URL parameter keeps it on a reload)."""


def shared_budget(budgets: Sequence[int], default: int) -> int:
    """The budget a page's picker starts at: the N last chosen on any page (the nearest of
    `budgets` to it), else `default`."""
    chosen = st.session_state.get(SHARED_N)
    if chosen is None or not budgets:
        return default
    return min(budgets, key=lambda b: (abs(int(b) - int(chosen)), b))


def remember_budget(n: int) -> int:
    """Make `n` the budget every page starts at; returns it."""
    st.session_state[SHARED_N] = int(n)
    return n


def budget_slider(box, label_: str, budgets: Sequence[int], default: int, key: str,
                  **kw) -> int:
    """A select slider over `budgets` bound to the URL (`?key=`), that starts at the N last
    chosen on any page (`shared_budget`) and makes its own choice that N."""
    target = shared_budget(budgets, default)
    if key in st.session_state:  # kept from an earlier visit: move it to the shared N
        if st.session_state[key] != target:
            st.session_state[key] = target
    else:
        kw["value"] = target
    return remember_budget(box.select_slider(
        label_, options=list(budgets), key=key, bind="query-params",
        on_change=lambda: remember_budget(st.session_state[key]), **kw))


def budget_picker(key: str, budgets: Sequence[int], default: int, label_: str = "Token budget N",
                  help_: str | None = None, container=None) -> int:
    """The page's token budget N (`budget_slider`)."""
    return budget_slider(container or st, label_, budgets, default, key,
                         help=help_ or "C_N: the first N tokens of the retrieved context.")


def url_select(label_: str, options: Sequence, key: str, default=None, multi: bool = False,
               format_func: Callable = str, container=None, **kw):
    """A selectbox (or multiselect with `multi`) whose value is kept in the URL as `?key=`.

    The URL holds the option itself (`str(option)`, repeated for a multiselect), not its
    displayed label, so links stay short and readable (`?qb_q=q012&qb_ret=bm25&qb_ret=sim`).
    The parameter is dropped while the value is the default.
    """
    box = container or st
    options = list(options)
    by_text = {str(o): o for o in options}
    seen = f"_url_{key}"  # what this widget last wrote to the URL
    asked = st.query_params.get_all(key)
    if asked and key in st.session_state and asked != st.session_state.get(seen, asked):
        del st.session_state[key]  # a link changed ?key= (not this widget): the link wins
    if key not in st.session_state and key in st.query_params:
        if multi:
            picked = [by_text[v] for v in st.query_params.get_all(key) if v in by_text]
            if picked:
                st.session_state[key] = picked
        elif st.query_params[key] in by_text:
            st.session_state[key] = by_text[st.query_params[key]]
    if key in st.session_state:  # drop values that are no longer offered
        cur = st.session_state[key]
        if multi:
            st.session_state[key] = [v for v in cur if v in options]
        elif cur not in options:
            del st.session_state[key]
    # the widget's own default stays the same on every run (changing it would make a new
    # widget); a value from the URL arrives through session state
    if multi:
        default = [d for d in (default or []) if d in options]
        value = box.multiselect(label_, options, default=default, key=key,
                                format_func=format_func, **kw)
        is_default = list(value) == list(default)
        url = [str(v) for v in value]
    else:
        index = options.index(default) if default in options else 0
        value = box.selectbox(label_, options, index=index, key=key, format_func=format_func,
                              **kw)
        is_default = bool(options) and value == options[index]
        url = str(value)
    _sync_url(key, [] if is_default else url if multi else [url], value, by_text, multi)
    st.session_state[seen] = st.query_params.get_all(key)
    return value


def _sync_url(key: str, wanted: list[str], value, by_text: dict, multi: bool) -> None:
    """Write `wanted` to `?key=` only when the URL means another value than the widget's.

    Every change of the query string is a new browser-history entry, so a link's first run
    leaves its URL as it came (a default it spells out stays) and Back leaves the page at once.
    """
    asked = st.query_params.get_all(key)
    if asked == wanted:
        return
    if asked and not wanted:  # the default: kept when the URL spells out that same value
        means = [by_text[v] for v in asked if v in by_text]
        if means and (means == list(value) if multi else means == [value]):
            return
    if wanted:
        st.query_params[key] = wanted if multi else wanted[0]
    else:
        st.query_params.pop(key, None)


def retriever_picker(key: str, options: Sequence[str], default: Sequence[str] | None = None,
                     label_: str = "Retrievers", container=None, **kw) -> list[str]:
    """A multiselect of retrievers (shown upper-case), kept in the URL."""
    return url_select(label_, options, key, list(options if default is None else default),
                      multi=True, format_func=label, container=container, **kw)


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}%}"


_AUDIT_BADGES = {"ok": ":green-badge[passed]", "warn": ":orange-badge[warning]",
                 "n/a": ":gray-badge[not applicable]"}


def judge_audit_banner(checks: Sequence, where: str) -> None:
    """A warning naming the failed judge checks (nothing when all pass)."""
    failed = [c for c in checks if c.status == "warn"]
    if failed:
        st.warning(f"**The judge's scores look unreliable** ({len(failed)} of {len(checks)} "
                   f"checks failed: {', '.join(c.title.lower() for c in failed)}), so {where} "
                   "may mean little. See *Can the judge be trusted?* on the LLM results page.",
                   icon="⚠️")


def judge_audit_list(checks: Sequence) -> None:
    """The judge checks, one line each: badge, check, finding and when it passes."""
    st.markdown("\n".join(f"- {_AUDIT_BADGES[c.status]} **{c.title}**: {c.finding} "
                          f"<span class='rd-note'>(passes when {c.limit})</span>"
                          for c in checks), unsafe_allow_html=True)


def verdict(evidence: dict, question: bool = True) -> None:
    """The one-line verdict of `predictiveness()` in a box coloured by its strength, after the
    question it answers (`question=False` under a heading that already asks it)."""
    box = {"strong": st.success, "moderate": st.info}.get(evidence.get("strength"), st.warning)
    ask = "**Does retrieval predict answer quality here?** " if question else ""
    box(ask + evidence["verdict"])


def llm_inputs(prefix: str, cols: Sequence) -> dict[str, str]:
    """Backend, model and base URL of an LLM, in three columns, as an `llm` config section
    (empty fields left out: the backend's defaults)."""
    from ragdash.llm.settings import BACKENDS

    backend = cols[0].selectbox("Backend", BACKENDS, key=f"{prefix}_backend")
    model = cols[1].text_input("Model (empty: the backend's default)", key=f"{prefix}_model",
                               placeholder="local: qwen (0.5B) or qwen-1.5b")
    url = cols[2].text_input("Base URL (empty: default)", key=f"{prefix}_url")
    section = {k: v for k, v in {"backend": backend, "model": model or None,
                                 "base_url": url or None}.items() if v is not None}
    if path_refused({"llm": section}):  # a GGUF path outside the allowed roots
        st.stop()
    return section


def path_refused(cfg: Mapping) -> bool:
    """Show, as errors, why `cfg` (a run config or a part of one) names a path outside the
    dashboard's allowed roots (`paths.refused_config`); True when it does."""
    from ragdash.ui import paths

    refused = paths.refused_config(cfg)
    for message in refused:
        st.error(md(message))
    return bool(refused)

