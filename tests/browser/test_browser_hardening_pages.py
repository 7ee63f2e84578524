"""A run whose every judgment failed, in a real browser (the shared server of
tests/browser/conftest.py): the Overview, LLM results and Report pages show no exception and
say plainly that every judgment failed; the Overview also warns that BM25 retrieved nothing for
a question."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fixtures.make_run import fail_judgments, make_run
from helpers import goto, no_exception, shot
from playwright.sync_api import expect

from ragdash.rundir import Run
from ragdash.stages.retrieve import empty_message, empty_results

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N_Q = 10
SENTENCE = (f"All {N_Q * 6} judgments failed (the judge's replies could not be read): no "
            "judge-based figure can be shown.")


@pytest.fixture(scope="module")
def failed_run(server):
    """Every judgment an error, and BM25 with nothing retrieved for q003; its URL key."""
    path = make_run(server["root"] / "runs" / "all-failed", n_questions=N_Q, seed=9)
    fail_judgments(path)
    run = Run(path)
    retrieved = run.read("retrieved")
    retrieved = retrieved[~((retrieved["retriever"] == "bm25") & (retrieved["qid"] == "q003"))]
    run.write("retrieved", retrieved)
    warnings = empty_results(retrieved, run.read("examples"), ["bm25", "sim"])
    run.set_stage("retrieve", warnings=[{**w, "message": empty_message(w)} for w in warnings])
    return str(path.resolve())


@pytest.mark.parametrize("name", ["overview", "llm", "report"])
def test_a_run_whose_judgments_all_failed_says_so(server, page, failed_run, name):
    goto(page, server, f"{name}?run={quote(failed_run)}")
    no_exception(page, name)
    expect(page.get_by_role("heading", name="Run all-failed")).to_have_count(
        1 if name == "overview" else 0)
    box = page.locator('[data-testid="stAlertContentError"]').filter(has_text=SENTENCE)
    expect(box).to_have_count(1)
    expect(box).to_be_visible()
    if name == "overview":
        warning = page.locator('[data-testid="stAlertContentWarning"]').filter(
            has_text="bm25 retrieved nothing for 1 of 10 questions")
        expect(warning).to_be_visible()
        expect(warning.locator("code").filter(has_text="q003")).to_have_count(1)
    if name == "llm":
        expect(page.get_by_role("heading", name="Errors (kept apart)")).to_have_count(1)
    shot(page, f"60-all-judgments-failed-{name}")
