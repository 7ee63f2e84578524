"""Every signal per system in a real browser, on the bundled SQuAD demo (no metrics stage, its
labels are stand-ins, so the truth is the reference metric `contains`): Compare retrievers shows
the means with their intervals and the rank-agreement line with Kendall's tau; Compare runs
shows the same under its leaderboard. On the shared server (tests/browser/conftest.py);
screenshots 51-compare-signals, 52-runs-signals."""

from __future__ import annotations

import re

import pytest
from helpers import goto, no_exception, settle, shot
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RETRIEVERS = ("bm25", "sim", "mmr", "reo", "mlq")
CELL = re.compile(r"^\d\.\d{3} \[\d\.\d{3}–\d\.\d{3}\]")


def grid_cells(page: Page, table) -> list[str]:
    """The text of the grid's cells the data grid drew (its accessible table)."""
    table.scroll_into_view_if_needed()
    cells = table.locator('[role="gridcell"]')
    expect(cells.first).to_be_attached()
    return [c.strip() for c in cells.all_inner_texts()]


def test_compare_retrievers_then_runs_show_every_signal(server, page):
    page.set_viewport_size({"width": 1500, "height": 1500})
    query = "&".join(f"cmp_ret={r}" for r in RETRIEVERS)
    goto(page, server, f"compare?run=data/demo_squad&cmp_n=500&{query}")
    heading = page.get_by_role("heading", name=re.compile(
        r"Do the signals rank the retrievers the same way\? \(N = 500\)"))
    expect(heading).to_be_visible()
    line = page.get_by_test_id("stAlert").filter(has_text="Against the truth")
    expect(line).to_contain_text("Against the truth (contains a gold answer), 6 systems:")
    same = line.locator("li").filter(has_text="Same order as the reference (tau 1.00)")
    expect(same).to_contain_text("Score_IR (5 of the 6 systems)")
    partly = line.locator("li").filter(has_text="Partly the same order")
    expect(partly).to_contain_text("LLM judge (2 of 15 pairs reversed, tau 0.71)")
    means = page.get_by_test_id("stDataFrame").filter(has=page.locator("[role=grid]")).first
    cells = grid_cells(page, means)
    assert "LLM only" in cells and "BM25" in cells, cells[:20]
    assert "–" in cells  # the LLM-only answers have no Score_IR
    assert "0.887 [0.788–0.950]" in cells  # BM25's Score_IR at N = 500 (docs/metrics.md)
    assert sum(bool(CELL.match(c)) for c in cells) >= 20, cells
    no_exception(page, "compare retrievers, every signal")
    # SIM and MLQ tie on all 60 questions: no test, a dash (a null cell read "None")
    pairs = page.get_by_test_id("stDataFrame").filter(has=page.locator("[role=grid]")).filter(
        has_text="Holm p")
    row = [c for c in grid_cells(page, pairs) if c]
    at = row.index("SIM vs MLQ")
    assert row[at + 5:at + 7] == ["—", "—"] and "None" not in row, row[at:at + 7]
    settle(page)
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    shot(page, "51-compare-signals")

    goto(page, server, "runs?rn_runs=data/demo_squad&rn_n=500")
    board = page.get_by_role("heading", name="Leaderboard on every signal")
    expect(board).to_have_count(1)
    expect(page.get_by_test_id("stAlert").filter(has_text="Against the truth")).to_contain_text(
        "tau 1.00")
    no_exception(page, "compare runs, leaderboard on every signal")
    settle(page)
    board.evaluate("e => e.scrollIntoView({block: 'start'})")
    shot(page, "52-runs-signals")
