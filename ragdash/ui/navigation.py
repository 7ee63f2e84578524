"""The dashboard's pages, declared once: `app.py` builds the navigation from them, and pages
link to each other with `page(name)` instead of file paths (the question browser's link
parameters: `ragdash.view.links`).

The page files live in `app_pages/`, not `pages/`: with `st.navigation`, a `pages/` folder
beside the entry point would also turn on Streamlit's legacy multipage router.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class PageSpec:
    name: str  # the file app_pages/<name>.py
    title: str
    icon: str
    url_path: str
    section: str
    default: bool = False
    hidden: bool = False


EXPLORE, SET_UP = "Explore a run", "Set up"
PAGES = (
    PageSpec("overview", "Overview", "dashboard", "home", EXPLORE, default=True),
    PageSpec("retrieval", "Retrieval scores", "show_chart", "retrieval", EXPLORE),
    PageSpec("browser", "Question browser", "manage_search", "browser", EXPLORE),
    PageSpec("compare", "Compare retrievers", "compare_arrows", "compare", EXPLORE),
    PageSpec("runs", "Compare runs", "leaderboard", "runs", EXPLORE),
    PageSpec("llm", "LLM results", "smart_toy", "llm", EXPLORE),
    PageSpec("label", "Label answers", "rate_review", "label", EXPLORE),
    PageSpec("thresholds", "Thresholds", "tune", "thresholds", EXPLORE),
    PageSpec("report", "Report", "download", "report", EXPLORE),
    # the default page lives at "/": its own path too, so a link to /overview works
    PageSpec("overview", "Overview", "dashboard", "overview", SET_UP, hidden=True),
    PageSpec("data", "Data", "dataset", "data", SET_UP),
    PageSpec("build", "Build a run", "play_circle", "build", SET_UP),
)


def _page(spec: PageSpec) -> st.Page:
    return st.Page(f"app_pages/{spec.name}.py", title=spec.title,
                   icon=f":material/{spec.icon}:", url_path=spec.url_path,
                   default=spec.default, visibility="hidden" if spec.hidden else "visible")


def sections() -> dict[str, list[st.Page]]:
    """{section: its pages} for `st.navigation`."""
    out: dict[str, list[st.Page]] = {}
    for spec in PAGES:
        out.setdefault(spec.section, []).append(_page(spec))
    return out


def page(name: str) -> st.Page:
    """The page of app_pages/<name>.py, for `st.switch_page` and `st.page_link`."""
    spec = next((s for s in PAGES if s.name == name and not s.hidden), None)
    if spec is None:
        raise KeyError(f"no dashboard page '{name}' (pages: "
                       f"{', '.join(dict.fromkeys(s.name for s in PAGES))})")
    return _page(spec)
