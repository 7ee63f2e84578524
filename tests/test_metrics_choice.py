"""Choosing metrics before running them, and what each signal cost: the per-step plan priced for
any choice of metrics (the same numbers as the dry run), each step's calls and tokens recorded by
the metrics stage, the signals' cost (0 for Score_IR and the reference metrics, the judge's
calls, each metric's steps, unknown when not recorded), the job's config; then the LLM page under
AppTest: ticking boxes changes the estimate, nothing starts before the button, the signals table
shows its costs and the scatter takes any two signals."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, fast_settings
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.metric_replies import ITEM, bag_of_words, llm

from ragdash.analysis.signals import best_line, signal_costs
from ragdash.analysis.signals import display_table as signals_display
from ragdash.config import ConfigError
from ragdash.llm.cost import estimate, estimate_prompts
from ragdash.metrics import METRICS, steps_for
from ragdash.metrics.evaluate import evaluate
from ragdash.metrics.plan import planned_prompts, step_plan
from ragdash.ui.metrics_choice import LOCAL_CHECKER, estimate_text, job_config
from ragdash.ui.signal_scatter import default_pair
from ragdash.view.links import answer_params
from ragdash.viz.signals import jittered, signal_scatter

OTHER = ITEM._replace(qid="q2", system="sim", answer="Hamlet is a play by Shakespeare.")


def test_the_plan_prices_any_choice_as_the_dry_run_does():
    plan = step_plan([ITEM, OTHER])
    for use in (None, "ragas", ["faithfulness"], ["claim_f1", "hallucination"]):
        prompts, outs = planned_prompts([ITEM, OTHER], use)
        direct = estimate_prompts([[{"role": "user", "content": p}] for p in prompts], "m",
                                  tokens_out=sum(outs) / len(outs))
        priced = plan.estimate(use, "m")
        assert (priced.calls, priced.tokens_in, priced.tokens_out) == \
            (direct.calls, direct.tokens_in, direct.tokens_out), use
    one, every = plan.totals(["faithfulness"]), plan.totals(None)
    assert 0 < one[0] < every[0] and one[1] < every[1]
    # shared steps are asked once: claim_f1 costs what precision and recall cost together
    assert plan.totals(["claim_f1"]) == plan.totals(["claim_precision", "claim_recall"])
    assert plan.totals(["rc_context_precision_parts"]) == (0, 0, 0)  # no LLM
    with pytest.raises(ValueError, match="unknown metric"):
        plan.totals(["bleu"])


def test_the_estimate_line_names_the_calls_the_cache_answers():
    est = estimate(12, 300, 20, "m", rate=6.0)
    assert estimate_text(est, 2).startswith("**2 metrics → 12 LLM calls**")
    assert "reply cache" not in estimate_text(est, 2)
    assert estimate_text(est, 2, 40).endswith(" · 40 more answered by the reply cache")
    none = estimate(0, 0, 0, "m", rate=6.0)
    assert "no call to make" in estimate_text(none, 1, 40) and "0 s" not in str(none)


def test_the_stage_records_each_steps_calls_and_the_signals_cost():
    with FakeLLMServer(default=llm) as srv:
        table = evaluate([ITEM], fast_settings(srv), embed=bag_of_words)
    cost = json.loads(table.iloc[0]["detail"])["cost"]
    assert set(cost) == set(steps_for(METRICS))
    assert sum(c[0] for c in cost.values()) == table.iloc[0]["calls"] == 13
    assert cost["chunk_check"][0] == 3 and all(c[1] > 0 for c in cost.values())
    judgments = pd.DataFrame({"call_id": ["a", "a", "b", None], "tokens_in": [100, 100, 50, 0],
                              "tokens_out": [10, 10, 5, 0]})
    names = ["score_ir", "f1", "judge", "faithfulness", "claim_f1", "rc_context_precision_parts"]
    got = signal_costs(names, judgments=judgments, metrics=table)
    assert got["score_ir"] == got["f1"] == (0.0, 0.0)
    assert got["judge"] == (2.0, 165.0)  # a grouped call counted once; a rule's row no call
    nli, claims = cost["nli"], cost["answer_claims"]
    assert got["faithfulness"] == (nli[0] + claims[0], sum(nli[1:]) + sum(claims[1:]))
    assert got["claim_f1"][0] == 4 and got["rc_context_precision_parts"] == (0.0, 0.0)
    # a table from before the record, and a run without metrics: unknown, never 0
    old = table.assign(detail=[json.dumps({"values": {}})])
    assert all(math.isnan(v) for v in signal_costs(["faithfulness"], metrics=old)
               ["faithfulness"])
    assert math.isnan(signal_costs(["judge"])["judge"][0])
    assert math.isnan(signal_costs(["judge"], judgments=judgments.drop(columns="call_id"))
                      ["judge"][0])


def test_the_job_config_switches_the_chosen_metrics_on_and_rejects_none():
    saved = {"_private": 1, "dataset": {"path": "d.jsonl"}}
    spec = job_config(saved, ["claim_f1", "faithfulness"], 5, None)
    assert spec.metrics.enabled and spec.metrics.limit == 5
    assert spec.metrics.use == ["faithfulness", "claim_f1"]
    assert "_private" not in spec.to_config()
    with pytest.raises(ConfigError, match="tick at least one"):
        job_config(saved, [], 5, None)
    with pytest.raises(ConfigError, match="unknown metric"):
        job_config(saved, ["bleu"], 5, None)
    with pytest.raises(ConfigError, match="positive"):
        job_config(saved, ["faithfulness"], -1, None)


def test_scatter_points_carry_their_answer_and_link_to_the_browser():
    frame = pd.DataFrame({"qid": ["q1", "q1", "q2"], "system": ["bm25", "llm_only", "bm25"],
                          "score_ir": [0.9, np.nan, 0.1], "judge": [1.0, 0.0, 0.0],
                          "truth": [1.0, 0.0, 0.0], "question": ["Who?", "Who?", "<b>x</b>"]})
    fig = signal_scatter(frame, "score_ir", "judge", "reference metric: contains", 0.5)
    correct, wrong = fig.data
    assert list(correct.customdata[:, 0]) == ["q1"] and list(wrong.customdata[:, 0]) == ["q2"]
    assert len(wrong.x) == 1  # the LLM-only answer has no Score_IR: left out
    assert abs(correct.y[0] - 1.0) <= 0.015 and abs(correct.x[0] - 0.9) <= 0.015  # jittered
    assert wrong.customdata[0, 3] == "&lt;b&gt;x&lt;/b&gt;"  # question text never read as HTML
    many = jittered(pd.Series(np.linspace(0, 1, 50)))
    assert (many == np.linspace(0, 1, 50)).all()  # a continuous signal is left as it is
    assert list(jittered(pd.Series([0.0, 1.0]), 3)) == list(jittered(pd.Series([0.0, 1.0]), 3))
    assert answer_params("r", "q1", "bm25") == [("run", "r"), ("qb_q", "q1"), ("qb_ret", "bm25")]
    assert answer_params("r", "q1", "llm_only") == [("run", "r"), ("qb_q", "q1")]
    assert default_pair(["f1", "judge", "score_ir"]) == ("score_ir", "judge")
    assert default_pair(["f1", "em"]) == ("f1", "em")


@pytest.fixture(scope="module")
def demo(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("mc")
    run = make_run(root / "demo", n_questions=12, seed=3)
    monkeypatch_module.setenv("RAGDASH_DEMO_RUN", str(run))
    monkeypatch_module.setenv("RAGDASH_RUNS_ROOT", str(root / "runs"))
    return run


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _estimate(at) -> str:
    """The chooser's estimate ("**2 metrics → 40 LLM calls** · ..."), not another launcher's."""
    return next((m.value for m in at.markdown if "LLM calls**" in m.value and " → " in m.value),
                "")


def test_llm_page_ticks_metrics_and_reprices_before_any_call(demo):
    at = open_app("llm")
    assert at.button(key="mc_start").disabled and not _estimate(at)
    assert LOCAL_CHECKER in [c.value for c in at.caption]  # the demo's checker is local
    at.checkbox(key="mc_faithfulness").check().run()
    one = _estimate(at)
    assert one.startswith("**1 metric → ") and "time" in one or "calls/min" in one, one
    for name in METRICS:
        at.checkbox(key=f"mc_{name}").check()
    at.run()
    every = _estimate(at)
    assert every.startswith(f"**{len(METRICS)} metrics → ") and every != one
    calls = [int(t.split("→ ")[1].split(" LLM")[0].replace(",", "")) for t in (one, every)]
    assert 0 < calls[0] < calls[1]
    at.number_input(key="mc_limit").set_value(2).run()
    fewer = int(_estimate(at).split("→ ")[1].split(" LLM")[0].replace(",", ""))
    assert 0 < fewer < calls[1]
    assert not at.button(key="mc_start").disabled and not at.exception
    assert not (demo / "metrics.parquet").exists()  # nothing ran


def test_signals_table_shows_costs_and_the_scatter_takes_two_signals(demo):
    at = open_app("llm")
    table = next(d.value for d in at.dataframe if "LLM calls" in d.value.columns) \
        .set_index("signal")
    judge, f1 = "LLM judge (1 = fully correct, 0 = wrong)", "token F1 (vs gold answer)"
    assert int(table.loc[judge, "LLM calls"].replace(",", "")) > 0  # named for people
    assert table.loc[f1, "LLM calls"] == "0" and table.loc[f1, "tokens"] == "0"
    x = at.selectbox(key="llm_sig_x")
    # Score_IR at the answers' budget (the run's generation.budget) against the judge first;
    # the options are named for people
    assert x.value == "score_ir" and at.selectbox(key="llm_sig_y").value == "judge"
    assert {"LLM judge (1 = fully correct, 0 = wrong)", "token F1 (vs gold answer)"} <= set(
        x.options)
    at.selectbox(key="llm_sig_y").set_value("f1").run()
    assert not at.exception and at.selectbox(key="llm_sig_y").value == "f1"


def test_the_report_has_the_signal_section_with_its_verdict(demo):
    from ragdash.html_report import build_report

    page = build_report(demo)
    section = page[page.index("<h2>Which signal agrees with the truth here?</h2>"):]
    section = section[:section.index("<h2>", 10)] if "<h2>" in section[10:] else section
    assert "Best here: " in section and "AUC" in section and "LLM calls" in section
    row = re.search(r"<td>LLM judge \(1 = fully correct, 0 = wrong\)</td>(.*?)</tr>", section,
                    re.S)  # signals named as on the page
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))  # answers, AUC, Spearman, calls, ...
    assert int(cells[3].replace(",", "")) > 0 and int(cells[4].replace(",", "")) > 0
    at = open_app("report")
    assert any("**signal_agreement**" in m.value for m in at.markdown)


def test_the_table_for_people_says_dash_where_there_is_no_value():
    table = pd.DataFrame([{"signal": "em", "n": 1200, "auc": np.nan, "auc_low": np.nan,
                           "auc_high": np.nan, "spearman": np.nan, "calls": np.nan,
                           "tokens": np.nan, "verdict": "cannot tell"},
                          {"signal": "judge", "n": 3, "auc": 0.8123, "auc_low": 0.7,
                           "auc_high": 0.9, "spearman": 0.5, "calls": 1234.0,
                           "tokens": 56789.0, "verdict": "agrees well"}])
    shown = signals_display(table)
    assert shown["signal"].tolist() == ["exact match (vs gold answer)",
                                        "LLM judge (1 = fully correct, 0 = wrong)"]
    em, judge = shown.set_index("signal").to_dict("records")
    assert list(em.values()) == ["1,200", "–", "–", "–", "–", "cannot tell"]
    assert judge["AUC (95 % CI)"] == "0.812 (0.70–0.90)"
    assert (judge["LLM calls"], judge["tokens"]) == ("1,234", "56,789")
    assert best_line(table) is None  # the best first: here one without an AUC
    assert best_line(table.iloc[::-1], lambda s: f"**{s}**") == \
        "Best here: **LLM judge (1 = fully correct, 0 = wrong)**, AUC 0.81 (95 % CI " \
        "0.70–0.90): agrees well."
