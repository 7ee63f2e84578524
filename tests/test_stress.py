"""Issue 35 §2: controlled contexts (`ragdash.stress`, the `stress` stage, `ragdash stress`):
the contexts RGB's construction gives (Chen et al., AAAI 2024) at each noise ratio and position,
hard negatives from the retrievers' misses, the summary's Wilson intervals and rejection rate,
and the command end to end against a scripted generator that answers only from evidence: the
accuracy follows the evidence, the dry run prices exactly the calls sent, a re-run sends none."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.corpus import QUESTIONS
from fixtures.pipeline import llm_args
from statsmodels.stats.proportion import proportion_confint

from ragdash.cli import main
from ragdash.config import ConfigError, load_spec, saved_spec
from ragdash.planning import dry_run, stage_estimate
from ragdash.rundir import Run
from ragdash.stress.contexts import conditions, hard_negatives, noise_count, placed
from ragdash.stress.settings import StressSpec
from ragdash.stress.summary import summary


def test_noise_counts_follow_rgb():
    assert [noise_count(r, 5) for r in (0, 0.2, 0.4, 0.6, 0.8, 1.0)] == [0, 1, 2, 3, 4, 5]
    assert noise_count(0.5, 5) == 3  # ceil, as RGB
    assert noise_count(0.3, 10) == 3  # no float ceil to 4


def test_the_conditions_of_one_question():
    spec = StressSpec(chunks=5)
    conds = conditions("q1", ["r1", "r2"], ["n1", "n2", "n3", "n4", "n5"], spec)
    noise = {c.ratio: c for c in conds if c.test == "noise"}
    assert [(noise[r].relevant, noise[r].noise) for r in spec.ratios] == [
        (2, 0), (2, 1), (2, 2), (2, 3), (1, 4), (0, 5)]  # fewer relevant chunks: shorter
    assert sorted(noise[0.4].chunk_ids) == ["n1", "n2", "r1", "r2"]
    pos = {c.position: c.chunk_ids for c in conds if c.test == "position"}
    assert pos == {"first": ("r1", "n1", "n2", "n3", "n4"), "last": ("n1", "n2", "n3", "n4", "r1"),
                   "middle": ("n1", "n2", "r1", "n3", "n4")}
    assert conds == conditions("q1", ["r1", "r2"], ["n1", "n2", "n3", "n4", "n5"], spec)  # seed
    assert noise[0.4].name == "stress:noise:0.4:shuffled"
    assert conditions("q1", [], ["n1"], spec) == []  # no evidence: nothing to control
    few = {c.ratio: c for c in conditions("q1", ["r1"], ["n1"], spec) if c.test == "noise"}
    assert (few[1.0].relevant, few[1.0].noise) == (0, 1)  # as many negatives as there are


def test_integration_needs_parts_in_different_chunks():
    from ragdash.stress.contexts import part_cover

    # part 0 in a (alone) and b; part 1 in b and c: b holds both, so nothing to integrate
    assert part_cover([{"a", "b"}, {"b", "c"}], ["b", "a", "c"]) == ([], None)
    cover, single = part_cover([{"a"}, {"c", "d"}, {"d"}], ["d", "c", "a"])
    assert (cover, single) == (["d", "a"], "a")  # d holds two parts; a the first alone
    assert part_cover([{"a"}, set()], ["a"]) == ([], None)  # a part found nowhere
    spec = StressSpec(chunks=4, ratios=(), positions=())
    conds = conditions("q", ["d", "a"], ["n1", "n2", "n3"], spec, cover, single)
    assert [(c.position, c.chunk_ids) for c in conds] == [
        ("one part", ("a", "n1", "n2", "n3")), ("all parts", ("d", "a", "n1", "n2"))]
    assert conditions("q", ["d", "a"], ["n1"], StressSpec(integration=False), cover, single) \
        == conditions("q", ["d", "a"], ["n1"], StressSpec(), [], None)


def test_shuffled_positions_differ_between_questions_but_keep_every_chunk():
    rng = np.random.default_rng(0)
    orders = {placed(["r"], ["a", "b", "c", "d"], "shuffled", rng) for _ in range(20)}
    assert len(orders) > 1 and all(sorted(o) == ["a", "b", "c", "d", "r"] for o in orders)


def test_hard_negatives_come_from_the_retrievers_misses_first():
    ranked = [["r1", "a", "b"], ["c", "a", "r1"]]
    got = hard_negatives(ranked, {"r1"}, ["r1", "a", "b", "c", "x", "y"], 5,
                         np.random.default_rng(0))
    assert got[:3] == ["c", "a", "b"]  # best rank over the lists: c 0, a 1, b 2
    assert sorted(got[3:]) == ["x", "y"] and "r1" not in got  # then the pool at random
    assert hard_negatives(ranked, {"r1"}, [], 2, np.random.default_rng(0)) == ["c", "a"]


def test_the_summary_counts_answered_contexts_with_wilson_intervals():
    rows = []
    for q in range(10):
        rows.append({"qid": f"q{q}", "test": "noise", "ratio": 0.0, "position": "shuffled",
                     "relevant": 1, "correct": q < 8, "refused": False, "error": None})
        rows.append({"qid": f"q{q}", "test": "noise", "ratio": 1.0, "position": "shuffled",
                     "relevant": 0, "correct": False if q else None, "refused": q < 6 if q
                     else None, "error": None if q else "timeout"})
        rows.append({"qid": f"q{q}", "test": "position", "ratio": 0.8, "position": "last",
                     "relevant": 1, "correct": q < 5, "refused": False, "error": None})
    s = summary(pd.DataFrame(rows).assign(score_ir=lambda d: d["relevant"].astype(float)))
    assert s.by_ratio.loc[0.0, "accuracy"] == 0.8 and s.by_ratio.loc[0.0, "n"] == 10
    lo, hi = proportion_confint(8, 10, alpha=0.05, method="wilson")
    assert (s.by_ratio.loc[0.0, "lo"], s.by_ratio.loc[0.0, "hi"]) == pytest.approx((lo, hi))
    assert s.by_ratio.loc[1.0, "n"] == 9  # the failed call is left out
    assert s.rejection == pytest.approx(5 / 9) and s.rejection_n == 9
    assert list(s.by_position.index) == ["last"] and s.by_position.loc["last", "accuracy"] == 0.5
    assert s.curve["n"].sum() == 29 and s.curve["accuracy"].iloc[-1] == pytest.approx(13 / 20)


@pytest.mark.parametrize("bad, key", [({"ratios": [1.5]}, "stress.ratios"),
                                      ({"positions": ["top"]}, "stress.positions"),
                                      ({"chunk": 3}, "stress.chunk"),
                                      ({"position_ratio": 1}, "stress.position_ratio"),
                                      ({"limit": 0}, "stress.limit")])
def test_bad_settings_are_refused_with_their_key(bad, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_spec(None, {"stress": bad})


def evidence_only(body: dict) -> Reply:
    """Answers a question with its gold answer when its context holds it, else declines."""
    text = body["messages"][-1]["content"]
    for _, question, answer, _ in QUESTIONS:
        if question in text:
            context = text.split("Documents:", 1)[-1].split("Query:", 1)[0]
            return Reply(text=f"It is {answer}." if answer in context else
                         "The documents do not contain the answer.")
    return Reply(text="I do not know.")


@pytest.fixture
def env_key(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stress")
    monkeypatch.chdir(tmp_path)


def _scored(generic, srv: FakeLLMServer, run_dir, *extra: str) -> None:
    """`ragdash score` of the generic dataset into `run_dir`, the fake server as its LLM."""
    ds, corpus = generic
    assert main(["score", "--dataset", str(ds), "--corpus", str(corpus),
                 *llm_args(srv.openai_url, run_dir), *extra]) == 0


def test_stress_end_to_end_follows_the_evidence(generic, tmp_path, env_key, capsys):
    run_dir = tmp_path / "r"
    with FakeLLMServer(default=evidence_only) as srv:
        _scored(generic, srv, run_dir, "--set", "generation.prompt=abstain")
        run = Run(run_dir)
        spec = load_spec(None, {**saved_spec(run.manifest).to_config(),
                                "stress": {"enabled": True, "limit": 3}})
        priced, cached = stage_estimate(run, spec, "stress")
        assert cached == 0 and dry_run(run, spec)["stress"].calls == priced.calls
        assert main(["stress", "--run-dir", str(run_dir), "--limit", "3", "--dry-run"]) == 0
        assert srv.chat_requests() == []  # a dry run asks nothing
        capsys.readouterr()
        assert main(["stress", "--run-dir", str(run_dir), "--limit", "3", "-q"]) == 0
        sent = len(srv.chat_requests())
        printed = capsys.readouterr().out
        assert sent == priced.calls > 0  # the estimate is the calls made
        assert main(["stress", "--run-dir", str(run_dir), "--limit", "3", "-q"]) == 0
        assert len(srv.chat_requests()) == sent  # up to date: nothing asked again
    table = Run(run_dir).read("stress")
    assert table["qid"].nunique() == 3 and table["error"].isna().all()
    s = summary(table)
    assert s.by_ratio.loc[0.0, "accuracy"] == 1.0  # evidence alone: always right
    assert s.by_ratio.loc[1.0, "accuracy"] == 0.0 and s.rejection == 1.0  # none: declines
    zero = table[(table["test"] == "noise") & (table["ratio"] == 0.0)]
    assert (zero["score_ir"] == 1.0).all()  # the relevant chunk alone holds every part
    assert (table.loc[table["relevant"] == 0, "score_ir"] < 1.0).all()
    assert "Rejection rate with no evidence (noise only): 100.0%" in printed
    assert "  0% noise: 100.0%" in printed
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["llm"]["stress"]["model"] == "fake-model"


def test_a_failed_call_is_kept_apart_and_retried(generic, tmp_path, env_key, capsys):
    run_dir = tmp_path / "r"
    with FakeLLMServer(default=evidence_only) as srv:
        _scored(generic, srv, run_dir)
        srv.push(*[Reply(status=400, text="bad request")] * 1)
        assert main(["stress", "--run-dir", str(run_dir), "--limit", "1", "-q",
                     "--set", "stress.ratios=0.0", "--set", "stress.positions=first"]) == 0
        table = Run(run_dir).read("stress")
        assert table["error"].notna().sum() == 1 and table["correct"].isna().sum() == 1
        assert "failed calls kept apart" in capsys.readouterr().out
        assert main(["stress", "--run-dir", str(run_dir), "--limit", "1", "-q",
                     "--set", "stress.ratios=0.0", "--set", "stress.positions=first"]) == 0
        assert Run(run_dir).read("stress")["error"].isna().all()
