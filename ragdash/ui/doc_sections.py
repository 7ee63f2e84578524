"""Sections of the project's own Markdown docs (docs/), shown on a page beside the numbers they
explain, so the page and the doc say the same thing."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def section(doc: str, heading: str, root: Path = DOCS) -> str | None:
    """The Markdown under the heading `heading` (its text, without the #s) of `root`/`doc`, up to
    the next heading of the same level or above; None when the file or the heading is missing
    (an installed package without docs)."""
    path = root / doc
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(#+)\s+(.*)", line)
        if m and m.group(2).strip() == heading:
            level = len(m.group(1))
            body = []
            for rest in lines[i + 1:]:
                h = re.match(r"(#+)\s", rest)
                if h and len(h.group(1)) <= level:
                    break
                body.append(rest)
            return "\n".join(body).strip()
    return None


PAPER_DOC = "reproducing-the-paper.md"


def paper_comparison() -> None:
    """Under a HotpotQA run's Table 3.1: the paper's table beside ragdash's and what explains the
    difference, measured, from docs/reproducing-the-paper.md; its name alone without the docs."""
    import streamlit as st

    tables = section(PAPER_DOC, "The two tables")
    why = section(PAPER_DOC, "What explains the difference, measured")
    if tables is None or why is None:
        st.caption("The paper's Table 3.1 beside ragdash's, and what moves the order of BM25 and "
                   f"SIM: `docs/{PAPER_DOC}`.")
        return
    with st.expander("The paper's Table 3.1 beside ragdash's: why the order of BM25 and SIM "
                     "differs, measured"):
        st.markdown(tables)
        st.markdown("**What explains the difference, measured**\n\n" + why)
        st.caption(f"From `docs/{PAPER_DOC}`, where every figure has the command that makes it.")
