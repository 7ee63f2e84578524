"""Run directory, configuration and the scoring stage's tables."""

import json

import pandas as pd
import pytest
from pydantic import ValidationError

from ragdash.analysis.curves import summary_table
from ragdash.budget import cuts, get_tokenizer, parse_budgets, reference_prefixes, reference_reaches
from ragdash.config import ConfigError, load_config
from ragdash.rundir import Run, atomic_path, list_runs
from ragdash.rundir.run import StageFailed
from ragdash.scoring.contexts import score_contexts


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half-written")
        raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_run_stage_records_and_failures(tmp_path):
    run = Run(tmp_path / "r1").create({"name": "x"})
    with run.running("ingest", "k1") as counts:
        counts["examples"] = 3
    assert run.stage_done("ingest", "k1")
    assert not run.stage_done("ingest", "other-key")
    with pytest.raises(StageFailed, match="^chunk: bad chunker$") as raised, \
            run.running("chunk", "k2"):
        raise ValueError("bad chunker")
    assert isinstance(raised.value.__cause__, ValueError)
    stage = run.stage("chunk")
    assert stage["status"] == "failed" and "bad chunker" in stage["error"]
    assert run.manifest["stages"]["ingest"]["counts"] == {"examples": 3}
    run.write("examples", pd.DataFrame({"qid": ["a"], "question": ["q?"], "answer": ["x"],
                                        "parts": [["x"]]}))
    assert run.read("examples")["qid"].tolist() == ["a"]
    with pytest.raises(ValueError, match="must have column.*question, answer, parts"):
        run.write("examples", pd.DataFrame({"qid": ["a"]}))  # the schema is checked on write
    with pytest.raises(KeyError, match="no run file 'examples.parquet'"):
        run.file("examples.parquet")  # files are named by key, declared once
    with pytest.raises(FileNotFoundError, match="chunks.parquet"):
        run.read("chunks")
    assert [r.path for r in list_runs(tmp_path)] == [run.path]
    assert "numpy" in run.manifest["versions"]


def test_config_defaults_file_and_overrides(tmp_path):
    cfg = load_config(None, {"budgets": "100:300:100", "retrievers": {"use": "bm25,sim"}})
    assert cfg["budgets"] == [100, 200, 300]
    assert cfg["retrievers"]["use"] == ["bm25", "sim"]
    assert cfg["retrievers"]["resolved"]["bm25"]["k"] == 5
    f = tmp_path / "c.yaml"
    f.write_text("name: mine\nretrievers:\n  preset: equal-k\n  use: [bm25]\n")
    cfg = load_config(f)
    assert cfg["name"] == "mine" and cfg["retrievers"]["resolved"]["bm25"]["k"] == 10


@pytest.mark.parametrize("text,match", [
    ("retrievers: {use: [colbert]}", "retrievers.use"),
    ("budgets: 'abc'", "budgets"),
    ("budgets: [0, 100]", "budgets"),
    ("scoring: {method: fuzzy}", "scoring.method"),
    ("colour: blue", "unknown key"),
    ("retrievers: {params: {sim: {fetch_k: 3}}}", "unknown parameter"),
    ("dataset: {limit: -1}", "limit"),
    ("- just\n- a list", "mapping"),
    ("a: [unclosed", "not valid YAML"),
    # misspelled nested keys name the closest valid one
    ("retrievers: {param: {bm25: {k: 3}}}", "unknown key 'retrievers.param'; did you mean "
                                            "'retrievers.params'"),
    ("chunker: {maxchars: 100}", "did you mean 'chunker.max_chars'"),
    ("scoring: {methd: token}", "did you mean 'scoring.method'"),
    ("chunker: {method: semantc}", "did you mean 'semantic'"),
    ("chunker: {method: semantic, params: {bufer_size: 2}}", "chunker.params: .*bufer_size"),
    # wrongly typed values
    ("retrievers: {use: 5}", "retrievers.use must be a list"),
    ("chunker: none", "'chunker' must be a mapping"),
    ("dataset: [a, b]", "'dataset' must be a mapping"),
    ("budgets: 0", "positive"),
    ("dataset: {limit: ten}", "dataset.limit must be a whole number, not 'ten'"),
    ("scoring: {relevance_share: half}", "relevance_share must be a number, not 'half'"),
    ("generation: {budget: abc}", "generation.budget must be a whole number"),
    ("tokenizer: /no/such/tokenizer.json", "neither one of .* nor an existing tokenizer.json"),
    # budgets that would exhaust memory
    ("budgets: '1:40000000:1'", "40,000,000 budgets; at most 200"),
    ("budgets: [100, 5000000]", "above the 1,000,000-token limit"),
    # retriever parameters are checked before any stage runs, against their defaults' types
    ("retrievers: {params: {bm25: {k: x}}}", "bm25.k must be a whole number .* not 'x'"),
    ("retrievers: {params: {bm25: {k: 0}}}", "bm25.k must be a whole number between 1 and 10000"),
    ("retrievers: {params: {bm25: {k: 2.5}}}", "bm25.k must be a whole number"),
    ("retrievers: {params: {bm25: {k: true}}}", "bm25.k must be a whole number"),
    ("retrievers: {params: {bm25: {b: 1.5}}}", "bm25.b must be a number between 0 and 1, not 1.5"),
    ("retrievers: {params: {bm25: {k1: high}}}", "bm25.k1 must be a number of at least 0"),
    ("retrievers: {params: {bm25: {stemmer: snowball}}}", "stemmer must be one of porter2"),
    ("retrievers: {params: {sim: {index: lsh}}}", "sim.index must be one of exact, hnsw, ivf"),
    ("retrievers: {use: [mmr], params: {mmr: {k: 30}}}", r"fetch_k \(20\) must be at least k"),
    ("retrievers: {use: [mmr], params: {mmr: {lambda_mult: 2}}}", "between 0 and 1"),
    ("retrievers: {params: {sim: {model: 3}}}", "sim.model must be text"),
])
def test_config_errors_name_the_key(tmp_path, text, match):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_config(f)


def test_valid_retriever_parameters_keep_the_values_written():
    cfg = load_config(overrides={"retrievers": {"use": ["bm25", "mmr"], "params": {
        "bm25": {"k": 7, "k1": 2, "b": 0}, "mmr": {"k": 25, "fetch_k": 25}}}})
    assert cfg["retrievers"]["resolved"]["bm25"] == {**cfg["retrievers"]["resolved"]["bm25"],
                                                    "k": 7, "k1": 2, "b": 0}
    assert type(cfg["retrievers"]["resolved"]["bm25"]["k1"]) is int  # stage keys stay as before
    assert cfg["retrievers"]["resolved"]["mmr"]["k"] == 25


def test_missing_config_file():
    with pytest.raises(ConfigError, match="does not exist"):
        load_config("/nonexistent/config.yaml")


def test_parse_budgets():
    assert parse_budgets("100:1000:100")[-1] == 1000
    assert parse_budgets("100:300") == [100, 200, 300]
    assert parse_budgets("500,100") == [100, 500]
    with pytest.raises(ValueError):
        parse_budgets("1:2:3:4")


def _ctx():
    return pd.DataFrame({
        "qid": ["q1", "q1"], "retriever": ["good", "bad"],
        "context": ["Alan Turing was born in London. " * 3 + "He studied at Cambridge.",
                    "Completely unrelated text about the weather and the sea."],
    })


def test_score_contexts_corrected_mode_rises_with_budget():
    parts = {"q1": ["Alan Turing was born in London.", " He studied at Cambridge."]}
    ir = score_contexts(_ctx(), parts, [5, 10, 1000], "llama3", "substring", "corrected")
    good = ir[ir.retriever == "good"].set_index("budget")
    assert good["score"].is_monotonic_increasing
    assert good.loc[1000, "score"] == pytest.approx(1.0, abs=0.05)
    assert not good.loc[1000, "reached"] and good.loc[5, "reached"]
    bad = ir[ir.retriever == "bad"].set_index("budget")
    assert bad.loc[1000, "score"] < 0.3
    # the cut column is where C_N ends in the context
    assert good.loc[5, "cut"] == cuts(_ctx().context[0], [5])[0]
    assert len(good.loc[5, "part_scores"]) == 2


def test_reference_mode_reproduces_the_original_quirks():
    context = "He said , hello . It is n't so"
    prefixes, total = reference_prefixes(context, [3, 100])
    assert total == get_tokenizer("llama3").count(context) + 1  # BOS counted
    assert prefixes[0] == "He said"  # N - 1 = 2 tokens
    assert prefixes[1] == "He said, hello. It isn't so"  # clean-up removed the spaces
    assert reference_reaches(150, 200) and not reference_reaches(150, 300)
    parts = {"q1": ["Alan Turing was born in London."]}
    ir = score_contexts(_ctx(), parts, [5, 1000], "llama3", "substring", "reference")
    assert set(ir.columns) >= {"score", "reached", "context_tokens"}
    table = summary_table(ir, mode="reference")
    assert 1000 not in table.index  # no context reaches 1000 tokens: survivorship drops it
    assert 1000 in summary_table(ir, mode="corrected").index


def test_run_json_is_plain_json(tmp_path):
    run = Run(tmp_path / "r").create({"budgets": [100]})
    json.loads((run.path / "run.json").read_text())


def test_create_removes_temp_files_an_interrupted_write_left(tmp_path):
    from ragdash.rundir import Run

    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / ".run.json.k2j4x_").write_text("{half")  # left by a kill -9 mid-write
    (run_dir / ".ir_scores.parquet.abc").write_bytes(b"PAR")
    (run_dir / ".parts").mkdir()  # resume data is a folder: kept
    Run(run_dir).create({"name": "r"})
    assert sorted(p.name for p in run_dir.iterdir()) == [".parts", "run.json"]


@pytest.mark.parametrize(("demo", "gen_budget"), [("data/demo_squad", 500),
                                                  ("data/demo_run", 1000)])
def test_bundled_runs_load_through_the_typed_view(demo, gen_budget):
    from ragdash.constants import PROJECT_ROOT
    from ragdash.view import RunView

    view = RunView(PROJECT_ROOT / demo)  # runs written before the run-directory schema
    spec = view.spec
    assert spec.compared == ["bm25", "sim", "mmr", "reo", "mlq"]
    assert spec.generation.budget == gen_budget
    assert view.retrievers[:1] and set(view.retrievers) <= set(spec.compared)
    cal = view.run.calibration()
    assert 0 <= cal.h <= 1 and 0 <= cal.k <= 1
    data = view.thresholds(cal.budget)
    assert data.has_judgments and len(data.pairs) == cal.n
    assert view.summary().columns.tolist() == view.retrievers
    with pytest.raises(ValidationError):
        spec.dataset = None  # read-only
