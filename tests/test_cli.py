"""The `ragdash` command line end to end: generic files, bad inputs, skipping and resuming."""

import pandas as pd
import pytest
from fixtures.corpus import QUESTIONS, write_jsonl

from ragdash.cli import main
from ragdash.rundir import Run


def run_cli(*args):
    return main(["run", *args, "-q"])


BASE = ["--retrievers", "bm25,sim,reo", "--chunker", "recursive", "--budgets", "10:60:10"]


def test_generic_jsonl_run_writes_every_file(generic, tmp_path, capsys):
    ds, corpus = generic
    run_dir = tmp_path / "run"
    assert run_cli("--dataset", str(ds), "--corpus", str(corpus), *BASE,
                   "--run-dir", str(run_dir)) == 0
    out = capsys.readouterr().out
    assert "Mean Score_IR" in out and "bm25" in out
    for f in ["run.json", "examples.parquet", "documents.parquet", "chunks.parquet",
              "retrieved.parquet", "ir_scores.parquet", "ir_summary.csv", "ir_metrics.csv",
              "issues.csv"]:
        assert (run_dir / f).exists(), f
    run = Run(run_dir)
    m = run.manifest
    assert m["source"]["format"] == "jsonl" and len(m["source"]["sha256"]) == 64
    assert all(m["stages"][s]["status"] == "done" for s in ("ingest", "chunk", "retrieve",
                                                             "score"))
    ex = run.read("examples")
    assert ex["topic"].tolist() == ["computing"] * 4  # metadata columns kept
    ir = run.read("ir_scores")
    assert set(ir["retriever"]) == {"bm25", "sim", "reo"}
    table = pd.read_csv(run_dir / "ir_summary.csv").set_index("budget")
    assert (table.diff().dropna() >= -1e-12).all().all()  # Score_IR never falls with N
    assert table.loc[60, "bm25"] > 0.8  # the lexical retriever finds these facts


def test_rerun_skips_finished_stages_and_force_redoes_them(generic, tmp_path):
    ds, corpus = generic
    args = ["--dataset", str(ds), "--corpus", str(corpus), *BASE,
            "--run-dir", str(tmp_path / "r")]
    assert run_cli(*args) == 0
    before = Run(tmp_path / "r").manifest["stages"]
    assert run_cli(*args) == 0
    after = Run(tmp_path / "r").manifest["stages"]
    assert all(before[s]["finished"] == after[s]["finished"] for s in before)
    # a changed budget list re-runs only the score stage
    assert run_cli(*args[:-2], "--budgets", "20,40", "--run-dir", str(tmp_path / "r")) == 0
    changed = Run(tmp_path / "r").manifest["stages"]
    assert changed["retrieve"]["key"] == before["retrieve"]["key"]
    assert changed["score"]["key"] != before["score"]["key"]
    assert sorted(Run(tmp_path / "r").read("ir_scores")["budget"].unique()) == [20, 40]


def test_interrupted_retrieval_resumes_finished_retrievers(generic, tmp_path, monkeypatch):
    ds, corpus = generic
    args = ["--dataset", str(ds), "--corpus", str(corpus), *BASE,
            "--run-dir", str(tmp_path / "r")]
    import ragdash.retrieval.dense as dense

    real = dense.Reorder.search_vector

    def boom(self, vector):
        raise KeyboardInterrupt

    monkeypatch.setattr(dense.Reorder, "search_vector", boom)
    assert run_cli(*args) == 130  # interrupted while reo runs
    run = Run(tmp_path / "r")
    assert run.stage("retrieve")["status"] == "interrupted"
    monkeypatch.setattr(dense.Reorder, "search_vector", real)
    assert run_cli(*args) == 0
    counts = run.stage("retrieve")["counts"]
    assert counts["bm25"] == "resumed" and counts["sim"] == "resumed"
    assert isinstance(counts["reo"], int)


def _expect_error(capsys, code, *args):
    assert main(list(args)) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_malformed_json_dataset_exits_with_a_located_message(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"_id": "x", "question": "q", ')
    err = _expect_error(capsys, 2, "ingest", "--dataset", str(bad), "--format", "hotpotqa",
                        "--run-dir", str(tmp_path / "r"), "-q")
    assert "bad.json" in err


def test_missing_column_names_file_and_field(generic, tmp_path, capsys):
    _, corpus = generic
    ds = write_jsonl(tmp_path / "noquestion.jsonl", [{"id": "1", "answer": "a",
                                                       "relevant_parts": ["x"]}])
    err = _expect_error(capsys, 2, "ingest", "--dataset", str(ds), "--corpus", str(corpus),
                        "--run-dir", str(tmp_path / "r"), "-q")
    assert "noquestion.jsonl" in err and "question" in err


def test_bad_records_are_skipped_and_counted(generic, tmp_path, capsys):
    _, corpus = generic
    rows = [{"id": q, "question": t, "answer": a, "relevant_parts": p} for q, t, a, p in QUESTIONS]
    rows[1]["question"] = ""
    rows.append(dict(rows[0]))  # duplicate id
    ds = write_jsonl(tmp_path / "some_bad.jsonl", rows)
    ds.write_text(ds.read_text() + "{not json}\n")
    assert main(["ingest", "--dataset", str(ds), "--corpus", str(corpus),
                 "--run-dir", str(tmp_path / "r"), "-q"]) == 0
    err = capsys.readouterr().err
    run = Run(tmp_path / "r")
    assert run.manifest["issues"]["skipped"] == 3
    assert run.stage("ingest")["counts"]["examples"] == 3
    issues = pd.read_csv(tmp_path / "r" / "issues.csv")
    assert set(issues["field"]) >= {"question", "id"}
    assert "some_bad.jsonl" in err and "line 2" in err


def test_nothing_loadable_is_an_error(generic, tmp_path, capsys):
    _, corpus = generic
    ds = write_jsonl(tmp_path / "empty_q.jsonl", [{"id": "1", "question": "", "answer": "a",
                                                   "relevant_parts": ["x"]}])
    err = _expect_error(capsys, 2, "ingest", "--dataset", str(ds), "--corpus", str(corpus),
                        "--run-dir", str(tmp_path / "r"), "-q")
    assert "no valid example" in err
    # the reasons are given, and written down
    assert "field 'question'" in err and "empty_q.jsonl" in err
    issues = pd.read_csv(tmp_path / "r" / "issues.csv")
    assert issues["field"].tolist() == ["question"]


def test_parquet_with_wrong_column_types_gives_its_reasons(generic, tmp_path, capsys):
    _, corpus = generic
    ds = tmp_path / "typed.parquet"
    pd.DataFrame({"id": [1, 2], "question": [None, None], "answer": ["a", "b"],
                  "relevant_parts": [[1.5], [2.5]]}).to_parquet(ds)
    err = _expect_error(capsys, 2, "ingest", "--dataset", str(ds), "--corpus", str(corpus),
                        "--run-dir", str(tmp_path / "r"), "-q")
    assert "no valid example" in err and "question" in err and "First:" in err
    assert len(pd.read_csv(tmp_path / "r" / "issues.csv")) >= 2


def test_bad_options_are_reported(generic, tmp_path, capsys):
    ds, corpus = generic
    err = _expect_error(capsys, 2, "run", "--dataset", str(ds), "--corpus", str(corpus),
                        "--retrievers", "bm25,colbert", "--run-dir", str(tmp_path / "r"))
    assert "colbert" in err
    err = _expect_error(capsys, 2, "run", "--config", str(tmp_path / "nope.yaml"))
    assert "nope.yaml" in err


@pytest.mark.parametrize("command", ["ingest", "chunk", "retrieve", "score", "run"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "--run-dir" in capsys.readouterr().out


def _two_doc_corpus(tmp_path, questions):
    ds, corpus = tmp_path / "qa.jsonl", tmp_path / "docs.jsonl"
    write_jsonl(ds, questions)
    write_jsonl(corpus, [
        {"doc_id": "d1", "title": "Tower", "text": "Ann built the tower in 1901. It still stands."},
        {"doc_id": "d2", "title": "River", "text": "The river floods every spring."}])
    return ds, corpus


FOUND = {"id": "q1", "question": "Who built the tower?", "answer": "Ann",
         "relevant_parts": ["Ann built the tower in 1901."]}
NOTHING = {"id": "q2", "question": "Unrelated words here?", "answer": "x",
           "relevant_parts": ["It still stands."]}


def test_a_question_that_retrieves_nothing_counts_as_zero(tmp_path, capsys):
    ds, corpus = _two_doc_corpus(tmp_path, [FOUND, NOTHING])
    run_dir = tmp_path / "run"
    assert run_cli("--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "bm25",
                   "--chunker", "none", "--budgets", "50,100", "--run-dir", str(run_dir)) == 0
    run = Run(run_dir)
    assert len(run.read("retrieved")[lambda d: d["qid"] == "q2"]) == 0  # BM25 found nothing
    ir = run.read("ir_scores")
    q2 = ir[ir["qid"] == "q2"]
    assert len(q2) == 2 and (q2["score"] == 0).all() and (q2["context_tokens"] == 0).all()
    table = pd.read_csv(run_dir / "ir_summary.csv").set_index("budget")
    assert table.loc[100, "bm25"] == pytest.approx(0.5)  # over both questions, not 1.0 over one


def test_a_run_where_nothing_is_retrieved_scores_zero(tmp_path, capsys):
    ds, corpus = _two_doc_corpus(tmp_path, [NOTHING])
    run_dir = tmp_path / "run"
    assert run_cli("--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "bm25",
                   "--chunker", "none", "--budgets", "50,100", "--run-dir", str(run_dir)) == 0
    assert "Traceback" not in capsys.readouterr().err
    run = Run(run_dir)
    assert (run.read("ir_scores")["score"] == 0).all()
    metrics = pd.read_csv(run_dir / "ir_metrics.csv")
    assert metrics["retriever"].tolist() == ["bm25"] and metrics["R@10"].tolist() == [0.0]


def test_config_plus_a_new_dataset_detects_its_format(tmp_path, capsys):
    """configs/paper.yaml says hotpotqa; --dataset my.jsonl without --format is read as JSONL,
    and --chunker none drops the semantic chunker's parameters."""
    from ragdash.config import PROJECT_ROOT

    paper = str(PROJECT_ROOT / "configs" / "paper.yaml")
    ds, corpus = _two_doc_corpus(tmp_path, [FOUND, NOTHING])
    args = ["--config", paper, "--dataset", str(ds), "--corpus", str(corpus), "--retrievers",
            "bm25", "--chunker", "none", "--budgets", "50,100"]
    assert run_cli(*args, "--run-dir", str(tmp_path / "ok")) == 0
    assert Run(tmp_path / "ok").manifest["source"]["format"] == "jsonl"
    assert run_cli(*args, "--format", "hotpotqa", "--run-dir", str(tmp_path / "bad")) != 0
    err = capsys.readouterr().err
    assert "read as 'hotpotqa' because the format was given" in err and "Traceback" not in err


@pytest.mark.parametrize("content, message", [
    ("not json at all", "not a JSON thresholds file"),
    ('{"h": 0.1}', "field 'k' is missing or not a number"),
    ('{"h": 0.1, "k": "high"}', "field 'k' is missing or not a number"),
    ("[0.1, 0.6]", "expected a JSON object with h and k"),
])
def test_estimate_with_a_bad_thresholds_file_names_it(tmp_path, capsys, content, message):
    bad = tmp_path / "thr.json"
    bad.write_text(content)
    assert main(["estimate", "--run-dir", str(tmp_path), "--thresholds", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and message in err and "Traceback" not in err


def test_run_dir_that_is_a_file_is_one_line(generic, tmp_path, capsys):
    ds, corpus = generic
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder")
    assert run_cli("--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "bm25",
                   "--chunker", "none", "--run-dir", str(blocker)) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragdash: error: ") and str(blocker) in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert blocker.read_text() == "not a folder"  # nothing lost


def test_index_is_a_hidden_deprecated_name_of_chunk(tmp_path, capsys):
    """The command is named after the stage it runs (chunk); `index` still works, with a
    one-line note, and is no longer listed."""
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "chunk" in listed and "index" not in listed.split("positional arguments")[0]
    ds, corpus = _two_doc_corpus(tmp_path, [FOUND])
    args = ["--dataset", str(ds), "--corpus", str(corpus), "--chunker", "none", "-q"]
    assert main(["index", *args, "--run-dir", str(tmp_path / "old")]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "deprecated" in line]
    assert notes == ["ragdash: note: `ragdash index` is deprecated; use `ragdash chunk` (the "
                     "stage it runs is called chunk)"]
    assert main(["chunk", *args, "--run-dir", str(tmp_path / "new")]) == 0
    assert "deprecated" not in capsys.readouterr().err
    old, new = (Run(tmp_path / d).manifest["stages"] for d in ("old", "new"))
    assert set(old) == set(new) == {"ingest", "chunk"}
    assert old["chunk"]["key"] == new["chunk"]["key"]
