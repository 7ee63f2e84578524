"""The Compare runs page's model: the catalogue of runs filtered as its filters say and grouped
by dataset, the runs picked on a first visit, the best pair of each run, the leaderboard's shown
columns, the two pairs' tiles and the questions where they differ most (with the question
browser's view of each), built by pure functions so the page only lays them out and each is
tested without a browser.

    shown = CatalogueFilters(search="sweep").apply(catalogue)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import compare, sentences
from ragdash.view.leaderboard import split_entry
from ragdash.view.links import BrowserLink, LargestDifferences, browser_link, with_links
from ragdash.view.overview import Tile

LLM_CHOICES = ("any", "ran", "not run")
"""The catalogue's LLM-stages filter: any run, runs whose generation and judging ran, or not."""


@dataclass(frozen=True)
class CatalogueFilters:
    """`search` in the run's name, folder or key (case-insensitive, literal); the datasets,
    chunkers chosen (empty: any); whether the LLM stages ran (`LLM_CHOICES`)."""

    search: str = ""
    datasets: Sequence[str] = ()
    chunkers: Sequence[str] = ()
    llm: str = "any"

    def apply(self, catalogue: pd.DataFrame) -> pd.DataFrame:
        """The catalogue's rows (`RunsView.catalogue` with a `name` column) that pass."""
        shown = catalogue
        if self.search:
            hay = shown["name"] + " " + shown["folder"] + " " + shown["key"]
            shown = shown[hay.str.contains(self.search, case=False, regex=False)]
        if self.datasets:
            shown = shown[shown["dataset_key"].isin(list(self.datasets))]
        if self.chunkers:
            shown = shown[shown["chunker"].isin(list(self.chunkers))]
        if self.llm != "any":
            shown = shown[(shown["llm"] != "no") == (self.llm == "ran")]
        return shown


CATALOGUE_COLUMNS = ("name", "varied", "questions", "chunker", "chunker_params", "retrievers",
                     "retriever_params", "budgets", "tokenizer", "scoring", "llm",
                     "judged_correct", "size_mb", "updated")
"""The catalogue's columns in a dataset's table ("varied" only where a sweep set values)."""


@dataclass(frozen=True)
class DatasetGroup:
    """The runs of one dataset file in the catalogue: its name and sha256, the run keys (in
    the catalogue's order) and their table with the columns shown."""

    key: str
    dataset: str
    sha256: str
    runs: list[str]
    table: pd.DataFrame

    @property
    def count(self) -> str:
        """'1 run', '3 runs'."""
        return f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}"


def dataset_groups(shown: pd.DataFrame) -> list[DatasetGroup]:
    """The filtered catalogue (`CatalogueFilters.apply`) grouped by dataset file, in the order
    the datasets first appear; "varied" is shown only in a group with sweep values."""
    out = []
    for key, group in shown.groupby("dataset_key", sort=False):
        cols = [c for c in CATALOGUE_COLUMNS
                if c != "varied" or group["varied"].astype(bool).any()]
        first = group.iloc[0]
        out.append(DatasetGroup(str(key), str(first["dataset"]), str(first["sha256"]),
                                group["key"].tolist(), group[cols]))
    return out


def first_selection(catalogue: pd.DataFrame, is_demo: Callable[[str], bool],
                    most: int = 6) -> list[str]:
    """The runs a first visit compares: the largest group of one's own runs on one dataset
    (else of every run, the demos with them), at most `most`; none when no dataset has two."""
    for pool in (catalogue[~catalogue["key"].map(is_demo)], catalogue):
        groups = pool.groupby("dataset_key", sort=False)["key"].agg(list)
        biggest = max(groups, key=len, default=[])
        if len(biggest) > 1:
            return list(biggest[:most])
    return []


def best_pairs(best: pd.DataFrame, n: int, md: Callable[[str], str] = str,
               name: Callable[[str], str] = str) -> str:
    """'Each run with its best retriever at N: **a** 0.812 (BM25) · **b** 0.790 (SIM, -0.022)'
    from `leaderboard.best_per_run`'s rows (run name, score, retriever, gap to the leader)."""
    return f"Each run with its best retriever at N = {n}: " + " · ".join(
        f"**{md(r['name'])}** {r['score']:.3f} ({name(r['retriever'])}"
        + ("" if r["gap"] == 0 else f", {r['gap']:+.3f}") + ")"
        for r in best.to_dict("records"))


def leaderboard_rows(board: pd.DataFrame, pct: Callable[[float | None], str]) -> pd.DataFrame:
    """The board with its interval as text, the gap to the leader ('leader' on rank 1) and the
    judged and estimated correct shares as percentages (`pct`, '—' where missing)."""
    return board.assign(
        ci=[f"{lo:.3f}–{hi:.3f}" for lo, hi in zip(board["lo"], board["hi"], strict=True)],
        gap=["leader" if r == 1 else f"{g:+.3f}"
             for r, g in zip(board["rank"], board["gap"], strict=True)],
        **{c: [pct(None if pd.isna(v) else v) for v in board[c]]
           for c in ("judged_correct", "est_correct")})


def pair_tiles(pair: dict, first: str, second: str) -> list[Tile]:
    """Two (run, retriever) pairs question by question (`RunsView.pair`'s numbers): wins, ties,
    losses, the mean difference with its interval and the unadjusted Wilcoxon p."""
    pv = pair["pvalue"]
    return [
        Tile("First higher", f"{pair['win']:,}", help=f"Questions where {first} scores more."),
        Tile("Ties", f"{pair['tie']:,}", help="Same Score_IR (often both 0 or both 1)."),
        Tile("Second higher", f"{pair['loss']:,}",
             help=f"Questions where {second} scores more."),
        Tile("Mean difference", f"{pair['mean_diff']:+.3f}",
             delta=f"95 % CI {pair['lo']:+.3f} to {pair['hi']:+.3f}" if pair["win"] or
             pair["loss"] else "every question ties: no interval",
             help=f"Mean of first − second over {pair['n']} questions."),
        Tile("Wilcoxon p (unadjusted)", sentences.p_text(pv),
             help="Two-sided Wilcoxon signed-rank test on the non-zero differences "
                  f"({pair['n_nonzero']} of {pair['n']})."),
    ]


def differences(scores: pd.DataFrame, examples: pd.DataFrame | None, a: str, b: str, n: int,
                limit: int = 15) -> pd.DataFrame:
    """The questions where entries `a` and `b` differ most at N = `n` (at most `limit`, the
    largest |a − b| first; ties left out): qid, question, a, b, diff. Empty without the
    examples."""
    if examples is None:
        return pd.DataFrame(columns=["qid", "question", a, b, "diff"])
    big = compare.largest_differences(scores, examples, a, b, n, n=limit)
    return big[big["diff"].abs() > compare.TIE].reset_index(drop=True)


def side_by_side(a: str, b: str, qid: str) -> list[tuple[str, str]]:
    """The question browser's URL parameters showing `qid` in both entries: one run with both
    retrievers, or the first run beside the second (the cut is the page's to add,
    `ragdash.view.links.browser_query`)."""
    (ka, ra), (kb, rb) = split_entry(a), split_entry(b)
    second = [("qb_ret", r) for r in dict.fromkeys([ra, rb])] if ka == kb else \
        [("qb_ret", ra), ("qb_run2", kb), ("qb_ret2", rb)]
    return [("run", ka), ("qb_q", qid), *second]


def largest(scores: pd.DataFrame, examples: pd.DataFrame | None, a: str, b: str, n: int,
            budgets: Iterable[int], first: str, second: str) -> LargestDifferences:
    """The questions where entries `a` and `b` differ most at N (`differences`), each linked to
    the question browser with both pairs side by side (`side_by_side`), cut at N unless that is
    the browser's default for `budgets` (the first run's); `first` and `second` name the pairs
    in the largest difference's link."""
    big = differences(scores, examples, a, b, n)
    if big.empty:
        return LargestDifferences(None, None, "", f"No question differs at N = {n}: the two "
                                  "score the same on every shared question.")

    def link(qid: str) -> BrowserLink:
        return browser_link(side_by_side(a, b, qid), n, budgets)

    top = str(big["qid"].iloc[0])
    return LargestDifferences(
        with_links(big, link), link(top),
        f"Open the largest difference ({top}) in the question browser, {first} beside {second}",
        f"{sentences.plural(len(big), 'question')} shown, the largest |first − second| first; "
        "the links open them in the question browser with both pairs side by side.")
