"""The LLM page's metric chooser and signal scatter on the bundled SQuAD demo, checked on their
models without a browser (they were in tests/browser/test_browser_metrics_choice.py, which
keeps the clicks, the job and the scatter's link): every metric ticked costs more than one, the
estimate priced as the chooser prices it (`job_config`, the stage's `step_plan`, the checker's
settings, `estimate_text`) for the first 20 questions; the scatter of token F1 against
Score_IR is titled by the two signals' names as its pickers show them."""

from __future__ import annotations

import pytest

from ragdash.analysis.signals import signal_label
from ragdash.config import saved_config
from ragdash.constants import PROJECT_ROOT
from ragdash.metrics import CATALOGUE
from ragdash.rundir import Run
from ragdash.rundir.root import RunsRoot
from ragdash.stages.metrics import metrics_settings, step_plan
from ragdash.ui.metrics_choice import estimate_text, job_config
from ragdash.view import RunView
from ragdash.viz.signals import signal_scatter

pytestmark = pytest.mark.slow

DEMO = PROJECT_ROOT / "data" / "demo_squad"


def _estimate(run: Run, chosen: list[str]) -> tuple[int, str]:
    """What the chooser shows for `chosen` at its default limit (20 questions here)."""
    spec = job_config(saved_config(run.manifest), chosen, 20, None)
    est, cached = step_plan(run, spec).chosen(chosen).price(metrics_settings(spec),
                                                           RunsRoot(spec.runs_root))
    return est.calls, estimate_text(est, len(chosen), cached)


def test_every_metric_ticked_costs_more_than_one():
    run = Run(DEMO)
    one, one_text = _estimate(run, ["faithfulness"])
    every, every_text = _estimate(run, [m.name for m in CATALOGUE])
    assert one_text.startswith(f"**1 metric → {one:,} LLM calls**"), one_text
    assert every_text.startswith(f"**{len(CATALOGUE)} metrics → {every:,} LLM calls**")
    assert 0 < one < every, (one, every)
    assert "tokens in" in every_text and "calls/min" in every_text, every_text
    assert "assumed from" in every_text or "measured on" in every_text, every_text


def test_the_scatter_of_token_f1_against_score_ir():
    frame, truth, names, correct_at = RunView(Run(DEMO)).answer_signals()
    assert {"f1", "score_ir"} <= set(names)  # both offered by the pickers
    assert signal_label("f1", detail=True) == "token F1 (vs gold answer)"
    assert signal_label("score_ir", detail=True) == "Score_IR (retrieval, no LLM)"
    fig = signal_scatter(frame, "score_ir", "f1", truth, correct_at)
    assert "token F1 (vs gold answer) against Score_IR" in fig.layout.title.text
    assert sum(bool(t.name) and t.showlegend is not False for t in fig.data) >= 1  # a legend
