"""The `semantic` Score_IR method: paraphrases score where substrings do not, verbatim parts
score 1, unrelated contexts 0; every budget in one pass with each distinct text embedded once;
the config keys (`scoring.also`, `calibration.scores`) and the run files they add, without
changing the stage keys of existing configs."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pandas as pd
import pytest
from fixtures.make_run import make_run
from fixtures.paraphrase import ITEMS, scores

from ragdash.analysis import matching
from ragdash.analysis.threshold_panel import threshold_data
from ragdash.config import ConfigError, RunSpec, fingerprint, load_config
from ragdash.run_spec import ir_scores, score_methods
from ragdash.rundir import Run
from ragdash.scoring import METHODS, part_scores
from ragdash.scoring import semantic as sem
from ragdash.scoring.contexts import score_contexts
from ragdash.stages import calibrate as calibrate_stage
from ragdash.stages import score as score_stage
from ragdash.stages.base import StageContext
from ragdash.stages.runner import stage_keys
from ragdash.ui import evidence
from ragdash.view import RunView
from ragdash.viz.retrieval import method_curves

BUDGETS = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic stand-in for MiniLM in plumbing tests: hashed word counts, unit length
    (the same text gives the same vector, shared words give a positive cosine)."""
    out = np.zeros((len(texts), 64), np.float32)
    for i, t in enumerate(texts):
        for w in re.findall(r"\w+", t.lower()):
            out[i, zlib.crc32(w.encode()) % 64] += 1
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


class Spy:
    """Counts the texts and the calls given to the embedder."""

    def __init__(self):
        self.texts: list[str] = []
        self.calls = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts += texts
        return bag_of_words(texts)


@pytest.fixture
def spy(monkeypatch) -> Spy:
    s = Spy()
    monkeypatch.setattr(sem, "minilm", lambda model=None: s)
    return s


# --- the real model on the paraphrase fixture ----------------------------------------------------

@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, list[float]]]:
    return scores()


def test_verbatim_parts_score_one(measured):
    assert min(measured["verbatim"]["semantic"]) >= 0.99
    assert min(measured["verbatim"]["substring"]) == 1.0


def test_paraphrases_score_where_substrings_do_not(measured):
    para = measured["paraphrase"]
    assert len(para["semantic"]) >= 10
    assert np.mean(para["substring"]) < 0.2  # a paraphrase shares only short runs of characters
    assert min(para["semantic"]) > 0.25
    assert np.mean(para["semantic"]) > 3 * np.mean(para["substring"])


def test_unrelated_contexts_score_zero(measured):
    assert max(measured["unrelated"]["semantic"]) <= 0.05
    assert max(measured["unrelated"]["semantic"]) < min(measured["paraphrase"]["semantic"])


def test_the_same_subject_without_the_fact_scores_below_the_fact(measured):
    # the documented limitation: topical similarity scores above 0, but below the fact itself
    removed = measured["fact removed"]["semantic"]
    assert np.mean(removed) < np.mean(measured["paraphrase"]["semantic"])
    assert np.mean(removed) < 0.5


def test_the_browser_finds_the_sentence_a_paraphrase_means():
    item = ITEMS[0]
    [m] = matching.semantic_matches([item.paraphrase], item.context)
    assert item.context[m.start:m.end] == item.verbatim
    assert 0.5 < m.cosine < 1 and m.score == pytest.approx(float(sem.to_score(m.cosine)))
    # the score the browser shows is the score the stage stores
    assert m.score == pytest.approx(part_scores([item.paraphrase], item.context,
                                                [len(item.context)], "semantic")[0, 0])


# --- one pass over budgets, one embedding per text (a stand-in embedder) --------------------------

def test_scores_never_fall_as_the_budget_grows(spy):
    rng = np.random.default_rng(0)
    for item in ITEMS:
        cuts = sorted(rng.integers(0, len(item.context) + 20, 12).tolist())
        s = part_scores([item.verbatim, item.paraphrase], item.context, cuts, "semantic")
        assert (np.diff(s, axis=0) >= -1e-12).all()
    whole = part_scores([ITEMS[0].verbatim], ITEMS[0].context, [10, 10_000], "semantic")
    assert whole[0, 0] == 0.0 and whole[1, 0] == pytest.approx(1.0)


def test_a_sentence_counts_once_it_ends_inside_c_n(spy):
    context = "Alpha beta gamma. The part sentence is here. Omega."
    part = "The part sentence is here."
    end = context.index(part) + len(part)
    s = part_scores([part], context, [0, end - 1, end, len(context)], "semantic")[:, 0]
    assert s[0] == 0.0 and s[1] < 1.0
    assert s[2] == pytest.approx(1.0) and s[3] == pytest.approx(1.0)


def test_a_part_of_two_sentences_is_matched_by_a_pair_window(spy):
    part = "He was born in St. Louis. He moved to Paris."
    assert sem.window_size([part]) == 3 and sem.window_size(["One sentence."]) == 1
    context = f"Intro here. {part} Other facts follow."
    assert part_scores([part], context, [len(context)], "semantic")[0, 0] == pytest.approx(1.0)
    spans = sem.windows(context, 2)
    assert (context.index("He was"), context.index("Louis.") + 6) in spans  # a pair
    assert all(context[a:b] == context[a:b].strip() for a, b in spans)


def test_a_verbatim_fragment_of_a_longer_sentence_scores_one(spy):
    context = 'Her roles include "Rugrats" and the spin-off "Teen Titans Go!", and more. Next.'
    part = "Teen Titans Go!"
    end = context.index(part) + len(part)
    s = part_scores([part], context, [end - 1, end], "semantic")[:, 0]
    assert s[0] < 1 and s[1] == pytest.approx(1.0)
    assert spy.texts.count(part) == 1  # its occurrence reuses the part's own vector
    [m] = matching.semantic_matches([part], context)
    assert context[m.start:m.end] == part and m.cosine == pytest.approx(1.0)


def test_no_sentence_no_part_and_bad_inputs(spy):
    assert part_scores(["a part."], "", [0, 10], "semantic").tolist() == [[0.0], [0.0]]
    assert part_scores(["a part."], "   ", [3], "semantic").tolist() == [[0.0]]
    assert part_scores([], "Some text.", [5, 10], "semantic").shape == (2, 0)
    with pytest.raises(ValueError, match="empty"):
        part_scores([""], "Some text.", [5], "semantic")
    [m] = matching.semantic_matches(["a part."], "No whole sentence", 5)
    assert m.length == 0 and m.score == 0.0 and np.isnan(m.cosine)


def test_an_embedder_returning_the_wrong_count_is_an_error():
    vectors = sem.Vectors(lambda texts: np.zeros((len(texts) + 1, 4), np.float32))
    with pytest.raises(ValueError, match="vectors for"):
        vectors(["one", "two"])


def test_each_distinct_text_is_embedded_once_across_budgets_and_retrievers(spy):
    chunks = [item.context for item in ITEMS[:4]]
    ctx = pd.DataFrame([  # the same chunks in several contexts, for two questions
        ("q1", "bm25", " ".join(chunks[:3])), ("q1", "sim", " ".join(chunks[1:4])),
        ("q2", "bm25", " ".join(chunks[:3])), ("q2", "sim", " ".join(chunks[::-1]))],
        columns=["qid", "retriever", "context"])
    parts = {"q1": [ITEMS[1].paraphrase], "q2": [ITEMS[2].verbatim, ITEMS[3].paraphrase]}
    ir = score_contexts(ctx, parts, BUDGETS, "whitespace", "semantic", "corrected")
    assert len(spy.texts) == len(set(spy.texts))  # never the same text twice
    expected = {t for q, c in zip(ctx["qid"], ctx["context"], strict=True)
                for t in [*parts[q], *(c[a:b] for a, b in sem.windows(c, 1))]}
    assert set(spy.texts) == expected
    assert spy.calls == 1  # one batch here (BATCH texts per call)
    # the batched pass gives what scoring one context alone gives
    one = part_scores(parts["q2"], ctx["context"][3], ir["cut"][ir["qid"].eq("q2")
                      & ir["retriever"].eq("sim")].tolist(), "semantic")
    got = np.array(ir[ir["qid"].eq("q2") & ir["retriever"].eq("sim")]["part_scores"].tolist())
    np.testing.assert_allclose(got, one)


def test_embedding_calls_are_batched(monkeypatch):
    s = Spy()
    vectors = sem.Vectors(s, batch=3)
    vectors.add([f"text {i}" for i in range(7)] + ["text 1"])
    assert s.calls == 3 and len(vectors) == 7
    vectors(["text 0", "text 6"])
    assert s.calls == 3  # nothing new to embed


# --- configuration and stage keys ----------------------------------------------------------------

def test_semantic_is_a_scoring_method_and_bad_values_are_refused():
    assert "semantic" in METHODS
    assert load_config(overrides={"scoring": {"method": "semantic"}})["scoring"]["method"] == \
        "semantic"
    cfg = load_config(overrides={"scoring": {"also": "semantic, token,semantic,substring"}})
    assert cfg["scoring"]["also"] == ["semantic", "token"]  # no repeat, not the main method
    for bad in ("meaning", ["semantic", "fuzzy"], 3, [1], {"a": 1}):
        with pytest.raises(ConfigError, match="scoring.also"):
            load_config(overrides={"scoring": {"also": bad}})
    with pytest.raises(ConfigError, match="scoring.method"):
        load_config(overrides={"scoring": {"method": "semantics"}})
    with pytest.raises(ConfigError, match="calibration.scores"):
        load_config(overrides={"calibration": {"scores": "semantic"}})  # not scored
    ok = load_config(overrides={"scoring": {"also": ["semantic"]},
                                "calibration": {"scores": "semantic"}})
    assert ok["calibration"]["scores"] == "semantic"


def test_new_keys_at_their_defaults_keep_existing_stage_keys():
    cfg = load_config()
    keys = stage_keys(cfg)
    before = {k: v for k, v in cfg["scoring"].items() if k != "also"}  # the schema before
    assert keys["score"] == fingerprint(keys["retrieve"], cfg["tokenizer"], cfg["budgets"],
                                        before)
    calibration = {k: v for k, v in cfg["calibration"].items()
                   if k not in ("scores", "estimand")}  # later keys, left out at defaults
    assert keys["calibrate"] == fingerprint(keys["judge"], keys["score"], calibration)
    more = stage_keys(load_config(overrides={"scoring": {"also": ["semantic"]}}))
    assert more["score"] != keys["score"] and more["retrieve"] == keys["retrieve"]
    fit = stage_keys(load_config(overrides={"scoring": {"also": ["semantic"]},
                                            "calibration": {"scores": "semantic"}}))
    assert fit["calibrate"] != more["calibrate"] and fit["score"] == more["score"]


# --- the score and calibrate stages, and reading a run's methods ---------------------------------

@pytest.fixture
def synthetic(tmp_path) -> Run:
    return Run(make_run(tmp_path / "run", n_questions=16, seed=3,
                        retrievers=("bm25", "sim", "mmr")))


def _cfg(**calibration) -> dict:
    return load_config(overrides={
        "tokenizer": "whitespace", "budgets": BUDGETS,
        "retrievers": {"use": ["bm25", "sim", "mmr"]}, "scoring": {"also": ["semantic"]},
        "calibration": {"enabled": True, "n_boot": 20, **calibration}})


def test_the_score_stage_writes_the_other_methods_beside_the_main_one(synthetic, spy):
    run = synthetic
    cfg = _cfg()
    run.create(cfg)
    counts = score_stage.run(StageContext(run, RunSpec.from_config(cfg), "k"))
    assert counts["methods"] == ["substring", "semantic"]
    assert score_methods(run) == ["substring", "semantic"]
    main, other = ir_scores(run), ir_scores(run, "semantic")
    assert "method" not in main and "method" not in other
    keys = ["qid", "retriever", "budget"]
    pd.testing.assert_frame_equal(main[keys], other[keys])
    assert (other["score"] != main["score"]).any()
    assert len(set(spy.texts)) == len(spy.texts)
    with pytest.raises(ValueError, match="no Score_IR by 'token'"):
        ir_scores(run, "token")
    # asked for no more: the other method's file goes (its scores would be shown as current)
    plain = {**cfg, "scoring": {**cfg["scoring"], "also": []}}
    run.create(plain)
    score_stage.run(StageContext(run, RunSpec.from_config(plain), "k2"))
    assert not run.has("ir_scores_also") and score_methods(run) == ["substring"]


def test_a_run_made_before_the_option_reads_as_one_method(synthetic):
    assert not synthetic.has("ir_scores_also")
    assert score_methods(synthetic) == ["substring"]
    pd.testing.assert_frame_equal(ir_scores(synthetic), synthetic.read("ir_scores"))
    assert ir_scores(synthetic, "substring").equals(synthetic.read("ir_scores"))


def test_calibration_fits_on_the_method_it_is_given(synthetic, spy):
    from ragdash.calibration import calibrate

    run = synthetic
    cfg = _cfg(scores="semantic")
    run.create(cfg)
    spec = RunSpec.from_config(cfg)
    score_stage.run(StageContext(run, spec, "k"))
    counts = calibrate_stage.run(StageContext(run, spec, "c"))
    cal = run.calibration()
    assert counts["scores"] == cal.scores == "semantic"
    direct = calibrate(ir_scores(run, "semantic"), run.read("judgments"), budget=1000,
                       n_boot=20)
    assert (cal.h, cal.k) == (direct.h, direct.k)
    # the Thresholds panel shows the main method's scores, so it refits rather than showing
    # thresholds fitted on other scores
    data = RunView(run).thresholds(1000)
    fresh = threshold_data(run.read("ir_scores"), RunView(run).judgments(), 1000,
                           RunView(run).order)
    assert (data.fit_h, data.fit_k) == (fresh.fit_h, fresh.fit_k)
    assert (cal.h, cal.k) != (data.fit_h, data.fit_k)  # the check above means something


# --- display ------------------------------------------------------------------------------------

def test_the_semantic_window_is_underlined_and_escaped():
    chunks = pd.DataFrame({"rank": [0, 1], "chunk_id": ["c0", "c1"], "title": ["T", "U"],
                           "text": ["First <b>bold</b> sentence here.", "Second one."],
                           "score": [1.0, 0.5]})
    context = "First <b>bold</b> sentence here. Second one."
    w = matching.SemanticMatch(0, 0, len("First <b>bold</b> sentence here."), 0.8123, 0.73)
    out = evidence.context_html(chunks, [], len(context), 1000, windows=[w])
    assert 'class="rd-sem"' in out and "cos 0.81" in out
    assert "&lt;b&gt;bold&lt;/b&gt;" in out and "<b>bold</b>" not in out
    legend = evidence.semantic_legend([w, matching.SemanticMatch(1, 0, 0)])
    assert "73%" in legend and "no whole sentence in C_N yet" in legend
    assert 'class="rd-sem"' not in evidence.context_html(chunks, [], len(context), 1000)


def test_the_curves_overlay_both_methods():
    bands = pd.DataFrame({"retriever": ["bm25", "bm25", "sim", "sim"], "budget": [100, 200] * 2,
                          "mean": [0.2, 0.4, 0.3, 0.5], "lo": [0.1, 0.3, 0.2, 0.4],
                          "hi": [0.3, 0.5, 0.4, 0.6], "n": [10] * 4})
    fig = method_curves({"substring": bands, "semantic": bands.assign(mean=bands["mean"] + .1)},
                        ["bm25", "sim"])
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == ["BM25 · substring", "BM25 · semantic", "SIM · substring",
                                       "SIM · semantic"]
    assert [t.line.dash for t in lines] == ["solid", "dot"] * 2
    assert lines[0].line.color == lines[1].line.color != lines[2].line.color
