"""The Compare retrievers page's model: what it shows for the retrievers chosen and the budget N,
built by pure functions over a run's view (`RunView`), so the page only lays it out and its
figures and sentences are tested without a browser. `name` renders a retriever's name.

    pairs = every_pair(view, chosen, n, name=label)
    detail = pair(view, a, b, n, name=label)
    big = largest(detail, run_key, n, view.budgets)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import area, compare, sentences
from ragdash.view import RunView
from ragdash.view.links import BrowserLink, LargestDifferences, browser_link, with_links
from ragdash.view.overview import Tile

PAIR_COLUMNS = {"pair": "pair", "win": "first higher", "tie": "tie", "loss": "second higher",
                "mean_diff": "mean difference", "pvalue": "Wilcoxon p", "p_holm": "Holm p"}


@dataclass(frozen=True)
class Pair:
    """One pair at N: its title, the tiles (wins, ties, losses, mean difference, the unadjusted
    p-value), the verdict sentence (Holm-adjusted over the run's budgets, as the Overview's),
    and the questions with the largest differences (None: none scored by both)."""

    a: str
    b: str
    title: str
    tiles: list[Tile]
    verdict: str
    largest: pd.DataFrame | None
    all_tie: bool


def every_pair(view: RunView, chosen: Sequence[str], n: int,
               name: Callable[[str], str] = str) -> pd.DataFrame:
    """Every pair of the chosen retrievers at N: wins, ties, losses, mean difference, the
    Wilcoxon p and its Holm adjustment over the pairs (a pair without a test: NaN)."""
    pw = compare.pairwise(view.ir_scores(), list(chosen), n)
    out = pw.assign(pair=[f"{name(a)} vs {name(b)}" for a, b in
                          zip(pw["a"], pw["b"], strict=True)]).astype(
        {"pvalue": float, "p_holm": float})
    return out[list(PAIR_COLUMNS)].rename(columns=PAIR_COLUMNS)


def pair(view: RunView, a: str, b: str, n: int, name: Callable[[str], str] = str,
         largest: int = 15) -> Pair:
    """Retrievers `a` and `b` at N (`Pair`)."""
    ir = view.ir_scores()
    w = compare.win_tie_loss(ir, a, b, n)
    t = compare.paired_test(ir, a, b, n)
    p = t["pvalue"]
    tiles = [
        Tile(f"{name(a)} higher", f"{w['win']:,}", help="Questions where the first scores more"),
        Tile("Ties", f"{w['tie']:,}", help="Same Score_IR (often both 0 or both 1)"),
        Tile(f"{name(b)} higher", f"{w['loss']:,}"),
        Tile("Mean difference", f"{t['mean_diff']:+.3f}",
             help=f"Mean of {name(a)} − {name(b)} over {t['n']} questions"),
        Tile("Wilcoxon p (unadjusted)", sentences.p_text(p),
             help="Two-sided Wilcoxon signed-rank test on the non-zero differences "
                  f"({t['n_nonzero']} of {t['n']}), before the Holm adjustment over the run's "
                  "budgets that the verdict below uses (as the Overview does).")]
    examples = view.run.table("examples")
    big = (compare.largest_differences(ir, examples, a, b, n, n=largest)
           if examples is not None else None)
    big = big if big is not None and len(big) else None
    return Pair(a, b, f"{name(a)} vs {name(b)} at N = {n}", tiles,
                area.pair_verdict(ir, a, b, n, name=name), big,
                all_tie=big is not None and big.iloc[0]["diff"] == 0)


def largest(detail: Pair, run_key: str, n: int, budgets: Iterable[int]) -> LargestDifferences:
    """`detail`'s largest differences, each linked to the question browser showing the
    question in run `run_key` with both retrievers, cut at N (`ragdash.view.links`); no link
    to open when every question ties."""
    def link(qid: str) -> BrowserLink:
        return browser_link([("run", run_key), ("qb_q", qid), ("qb_ret", detail.a),
                             ("qb_ret", detail.b)], n, budgets)

    if detail.largest is None:
        return LargestDifferences(None, None, "", "No question was scored by both retrievers.")
    table = with_links(detail.largest, link)
    if detail.all_tie:
        return LargestDifferences(table, None, "",
                                  f"Every question ties at N = {n}: no difference to open.")
    top = str(table["qid"].iloc[0])
    return LargestDifferences(table, link(top),
                              f"Open the largest difference ({top}) in the question browser", "")
