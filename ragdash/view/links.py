"""Links into the question browser, as data: the URL parameters that open a question with
chosen retrievers (or runs) side by side, and the "largest differences" section of the Compare
pages built from them, so what a link opens is tested without a page.

    link = browser_link([("run", key), ("qb_q", "q7"), ("qb_ret", "bm25")], 500, budgets)
    link.url  # 'browser?run=...&qb_q=q7&qb_ret=bm25&qb_cut=500'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd

from ragdash.analysis.frames import default_budget
from ragdash.constants import LLM_ONLY

Params = tuple[tuple[str, str], ...]


def browser_query(pairs: Sequence[tuple[str, str]], cut: int,
                  budgets: Iterable[int]) -> list[tuple[str, str]]:
    """The question browser's URL parameters: `pairs`, then its cut at `cut` tokens unless
    that is the browser's default cut for a run of these `budgets`.

    Streamlit drops a URL-bound widget's default from the URL on the page's first run, a new
    browser-history entry: a link that spelled it out would take two presses of Back to leave.
    """
    keep = int(cut) != default_budget(budgets)
    return [*pairs, *([("qb_cut", str(int(cut)))] if keep else [])]


@dataclass(frozen=True)
class BrowserLink:
    """A link to the question browser: its URL parameters in order (a key may repeat)."""

    params: Params

    @property
    def url(self) -> str:
        """The relative URL a table's link column holds."""
        return "browser?" + urlencode(self.params)


def answer_params(run_key: str, qid: str, system: str) -> list[tuple[str, str]]:
    """The question browser's URL parameters for one answer: the run, the question and, for a
    RAG answer, its retriever (the LLM page's scatter opens them)."""
    return [("run", run_key), ("qb_q", qid), *([("qb_ret", system)] if system != LLM_ONLY
                                              else [])]


def browser_link(pairs: Sequence[tuple[str, str]], cut: int,
                 budgets: Iterable[int]) -> BrowserLink:
    """The link opening the browser on `pairs`, cut at `cut` (`browser_query`)."""
    return BrowserLink(tuple(browser_query(pairs, cut, budgets)))


@dataclass(frozen=True)
class LargestDifferences:
    """The Compare pages' "largest differences" section: the table (qid, question, the two
    scores, diff and `open`, each row's browser URL; None when no question was scored by
    both), the link to the largest difference with its label (None when there is none to
    open) and the line said instead of, or under, the table."""

    table: pd.DataFrame | None
    top: BrowserLink | None
    top_label: str
    note: str


def with_links(table: pd.DataFrame, link: Callable[[str], BrowserLink]) -> pd.DataFrame:
    """`table` (one row per question, largest difference first) with its `open` column."""
    return table.assign(open=[link(str(q)).url for q in table["qid"]])
