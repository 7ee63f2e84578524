"""The user's own RAG system imported from a file of its results (`ragdash.systems`): each format
as its tool writes it, matching to the dataset's questions, `ragdash run --system` beside a
built-in retriever (scores, chunk metrics, answers, judging), and bad input refused with a
located error before anything is written."""

import json

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer
from fixtures import systems as sy
from fixtures.corpus import QUESTIONS, write_jsonl
from fixtures.pipeline import llm_args, responder

from ragdash.cli import main
from ragdash.config import ConfigError, load_spec
from ragdash.data import DataError
from ragdash.run_spec import run_spec
from ragdash.rundir import Run
from ragdash.systems import match, read_system
from ragdash.systems.formats import MAX_CONTEXTS

BASE = ["--retrievers", "bm25", "--chunker", "none", "--tokenizer", "whitespace",
        "--budgets", "5,10,60", "-q"]
QIDS = [q for q, _, _, _ in QUESTIONS]
TEXTS = [t for _, t, _, _ in QUESTIONS]


def _ragas_parquet(path):
    pd.read_json(sy.ragas_jsonl(path.with_suffix(".jsonl")), lines=True).to_parquet(path)
    return path


def _ragas_xlsx(path):
    """A sheet of the RAGAS columns, the contexts as a JSON list in their cell."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append(["user_input", "retrieved_contexts", "response", "reference"])
    for i, (_, q, a, _) in enumerate(sy.ANSWERED):
        ws.append([q, json.dumps(sy.contexts(i)), sy.answer(i), a])
    wb.save(path)
    return path


WRITERS = {"ragas.jsonl": (sy.ragas_jsonl, "ragas"), "ragas.csv": (sy.ragas_csv, "ragas"),
           "ragas.parquet": (_ragas_parquet, "ragas"), "ragas.xlsx": (_ragas_xlsx, "ragas"),
           "spans.parquet": (sy.spans_parquet, "spans"), "spans.jsonl": (sy.spans_jsonl, "spans"),
           "flat.parquet": (sy.flattened_spans, "spans"), "run.trec": (sy.trec, "trec")}


@pytest.mark.parametrize("name", list(WRITERS))
def test_each_format_is_read_as_its_tool_writes_it(tmp_path, name):
    write, fmt = WRITERS[name]
    got = read_system(write(tmp_path / name))
    assert got.format == fmt and len(got.records) == 3
    first = got.records[0]
    if fmt == "trec":
        assert first.qid == "q1" and first.refs == ("turing", "hopper")
        assert first.scores == (10.0, 9.0) and first.ref_records == ("line 1", "line 2")
        return
    assert list(first.contexts) == sy.contexts(0)  # in rank order
    assert first.answer == sy.answer(0)  # the LLM span's message, not the chain's JSON
    assert QUESTIONS[0][1].casefold() in [q.strip().casefold() for q in first.questions]
    if fmt == "spans":
        assert first.context_ids == ("doc-0-0", "doc-0-1")
        assert first.record.startswith("trace ") and ("row 2" in first.record
                                                      or "line 2" in first.record)


def test_records_are_matched_by_id_then_text_then_normalised(tmp_path):
    rows = [{"id": "q2", "user_input": "something else", "retrieved_contexts": ["a"]},
            {"user_input": TEXTS[0], "retrieved_contexts": ["b"]},
            {"user_input": "  " + TEXTS[2].upper(), "retrieved_contexts": ["c"]},
            {"user_input": TEXTS[0], "retrieved_contexts": ["again"]},
            {"user_input": "Who wrote Hamlet?", "retrieved_contexts": ["d"]}]
    f = read_system(write_jsonl(tmp_path / "r.jsonl", rows))
    m = match("mine", f, QIDS, TEXTS)
    assert {q: r.contexts[0] for q, r in m.records.items()} == {"q1": "b", "q2": "a", "q3": "c"}
    assert list(m.records) == ["q1", "q2", "q3"]  # the dataset's order
    assert m.by == {"id": 1, "text": 1, "normalized": 1} and m.missing == 1
    said = {i.record: i.message for i in m.issues()}
    assert "second record for question 'q1'" in said["line 4"] and "line 2" in said["line 4"]
    assert "matches no question" in said["line 5"] and "Hamlet" in said["line 5"]
    # two dataset questions with the same text: a record naming it is ambiguous
    m = match("mine", f, ["a", "b"], [TEXTS[0], " " + TEXTS[0].lower()])
    assert m.records["a"].contexts == ("b",)  # the exact text decides
    with pytest.raises(DataError, match="not one of its 5 records matches"):
        match("mine", f, ["x"], ["Unrelated?"])


def test_ambiguous_text_is_listed(tmp_path):
    f = read_system(write_jsonl(tmp_path / "r.jsonl", [
        {"user_input": "same question", "retrieved_contexts": ["a"]},
        {"id": "k", "user_input": "x", "retrieved_contexts": ["b"]}]))
    m = match("mine", f, ["a", "b", "k"], ["Same  question", "same question ", "x"])
    assert m.ambiguous and m.ambiguous[0][1] == ["a", "b"]
    assert "matches 2 questions" in m.issues()[0].message


@pytest.mark.parametrize(("rows", "where", "what"), [
    ([{"user_input": "q", "retrieved_contexts": ["ok"]},
      {"user_input": "q2", "retrieved_contexts": "one text, not a list"}],
     "line 2", "must be a list of texts in rank order"),
    ([{"user_input": "q", "retrieved_contexts": [1, 2]}], "line 1",
     "retrieved_contexts[0]"),
    ([{"user_input": "q", "retrieved_contexts": ["x"] * 10_000}], "line 1",
     f"holds 10,000 contexts, over the limit of {MAX_CONTEXTS:,}"),
    ([{"user_input": "q"}], "line 1", "no column of retrieved contexts"),
])
def test_bad_records_are_located(tmp_path, rows, where, what):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DataError) as err:
        read_system(path)
    text = str(err.value)
    assert "bad.jsonl" in text and what in text
    assert where in text or "header" in text


def test_spans_without_a_retriever_span_are_refused(tmp_path):
    frame = sy.spans_frame()
    frame = frame[frame["span_kind"] != "RETRIEVER"]
    frame.to_parquet(tmp_path / "spans.parquet")
    with pytest.raises(DataError, match="holds no RETRIEVER span.*CHAIN 3, LLM 3"):
        read_system(tmp_path / "spans.parquet")


def test_system_names_are_checked():
    with pytest.raises(ConfigError, match="built-in retriever 'bm25'"):
        load_spec(None, {"systems.BM25.file": "x.jsonl"})
    with pytest.raises(ConfigError, match="is not allowed"):
        load_spec(None, {"systems": {"<b>x</b>": {"file": "x.jsonl"}}})
    with pytest.raises(ConfigError, match="built-in system 'llm_only'"):
        load_spec(None, {"systems.llm_only.file": "x.jsonl"})
    with pytest.raises(ConfigError, match="unknown key 'systems.mine.fille'"):
        load_spec(None, {"systems.mine.fille": "x.jsonl"})
    spec = load_spec(None, {"systems.mine.file": "x.jsonl", "retrievers.use": "bm25"})
    assert spec.compared == ["bm25", "mine"] and spec.systems["mine"].format == "auto"


@pytest.mark.parametrize(("system", "what"), [
    ("bm25={f}", "built-in retriever 'bm25'"),
    ("<img src=x>={f}", "is not allowed"),
    ("mine", "expected NAME=FILE"),
])
def test_bad_system_options_stop_before_anything_is_written(generic, tmp_path, capsys,
                                                            system, what):
    ds, corpus = generic
    f = sy.ragas_jsonl(tmp_path / "mine.jsonl")
    code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), *BASE,
                 "--system", system.format(f=f), "--run-dir", str(tmp_path / "r")])
    assert code == 2 and what in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_bad_file_stops_the_run_before_any_stage(generic, tmp_path, capsys):
    ds, corpus = generic
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"user_input": TEXTS[0],
                                                "retrieved_contexts": {"a": 1}}])
    code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), *BASE,
                 "--system", f"mine={bad}", "--run-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "bad.jsonl: record line 1, field 'retrieved_contexts'" in err
    assert not (tmp_path / "r").exists()


def test_trec_ids_outside_the_corpus_fail_retrieval_and_write_nothing_of_it(
        generic, tmp_path, capsys):
    ds, corpus = generic
    run = tmp_path / "trec.txt"
    run.write_text("q1 Q0 turing 1 2.0 t\nq2 Q0 nosuch 1 2.0 t\nq3 Q0 gone 1 1.0 t\n")
    code = main(["run", "--dataset", str(ds), "--corpus", str(corpus), *BASE,
                 "--system", f"mine={run}", "--run-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "record line 2, field 'docid'" in err and "'nosuch'" in err
    assert "line 3 'gone'" in err
    r = Run(tmp_path / "r")
    assert r.manifest["stages"]["retrieve"]["status"] == "failed"
    assert not r.has("retrieved") and not r.has("imported")


def test_run_with_every_format_beside_bm25(generic, tmp_path, capsys):
    ds, corpus = generic
    files = {"ragas": sy.ragas_jsonl(tmp_path / "ragas.jsonl"),
             "phoenix": sy.spans_parquet(tmp_path / "spans.parquet"),
             "trec": sy.trec(tmp_path / "run.trec")}
    assert main(["run", "--dataset", str(ds), "--corpus", str(corpus), *BASE,
                 *[a for n, f in files.items() for a in ("--system", f"{n}={f}")],
                 "--run-dir", str(tmp_path / "r")]) == 0
    out, err = capsys.readouterr()
    assert "ragas is scored on 3 of 4 questions" in err
    run = Run(tmp_path / "r")
    assert run_spec(run).compared == ["bm25", "ragas", "phoenix", "trec"]
    ir = run.read("ir_scores")
    at = ir[ir["budget"] == 60].set_index(["retriever", "qid"])["score"]
    assert at["bm25"].size == 4 and at["ragas"].size == 3  # scored on the questions it has
    for name in ("ragas", "phoenix"):  # the gold sentence first: every part of q1, q2
        assert at[name]["q1"] == at[name]["q2"] == 1.0
    assert at["trec"]["q1"] == 1.0 and at["trec"]["q2"] == 1.0  # whole documents
    # C_N is the contexts joined with one space, cut at N tokens, as for built-in chunks
    five = ir[(ir["budget"] == 5) & (ir["retriever"] == "ragas") & (ir["qid"] == "q1")]
    assert five["score"].iloc[0] < 1.0 and five["cut"].iloc[0] == len("He was born in Maida")
    retrieved = run.read("retrieved")
    mine = retrieved[(retrieved["retriever"] == "ragas") & (retrieved["qid"] == "q1")]
    assert mine["rank"].tolist() == [0, 1]
    metrics = pd.read_csv(run.path / "ir_metrics.csv").set_index("retriever")
    assert metrics.loc["ragas", "RR"] == 1.0 and metrics.loc["trec", "P@5"] > 0
    summary = pd.read_csv(run.path / "ir_summary.csv")
    assert {"bm25", "ragas", "phoenix", "trec"} <= set(summary.columns)
    assert run.manifest["systems"]["ragas"]["by"] == {"normalized": 3}
    assert run.manifest["systems"]["trec"]["by"] == {"id": 3}
    assert "ragas" in out and "phoenix" in out
    # eRAG judges its contexts, the stress tests build contexts from them (no LLM call here)
    from ragdash.config import saved_spec
    from ragdash.stages import erag, stress

    spec = saved_spec(run.manifest)
    items = [i for i in erag.chunk_items(run, spec) if i.system == "ragas" and i.qid == "q1"]
    assert [i.text for i in items] == sy.contexts(0)
    assert any(c.startswith("@ragas/") for cond in stress.build(run, spec)
               for c in cond.chunk_ids)


def test_imported_answers_are_judged_and_not_generated(generic, tmp_path, capsys,
                                                       monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    ds, corpus = generic
    ragas, trec = sy.ragas_jsonl(tmp_path / "r.jsonl"), sy.trec(tmp_path / "t.trec")
    spans = sy.spans_jsonl(tmp_path / "s.jsonl")
    with FakeLLMServer(default=responder) as srv:
        code = main(["judge", "--dataset", str(ds), "--corpus", str(corpus),
                     "--system", f"mine={ragas}", "--system", f"tr={trec}",
                     "--system", f"again={spans}", "--set", "systems.again.generate=true",
                     *llm_args(srv.openai_url, tmp_path / "r", "--retrievers", "bm25")])
        assert code == 0, capsys.readouterr().err
        sent = json.dumps([m for r in srv.chat_requests() for m in [r["body"]["messages"]]
                           if "Scoring Criteria" not in m[0]["content"]])  # generation only
    run = Run(tmp_path / "r")
    answers = run.read("answers").set_index(["system", "qid"])
    assert answers.loc[("mine", "q1"), "answer"] == sy.answer(0)  # as the file gives it
    assert answers.loc[("mine", "q1"), "model"] == "imported"
    assert ("mine", "q4") not in answers.index  # no record, no answer
    assert sy.answer(0) not in sent  # never sent to the generator
    # a TREC run has no answers, and `generate: true`: the run's generator answers them
    assert answers.loc[("tr", "q1"), "answer"].startswith("From the documents")
    assert answers.loc[("again", "q1"), "answer"].startswith("From the documents")
    judged = run.read("judgments")
    assert {"mine", "tr", "again", "bm25"} <= set(judged["system"])
    assert judged[judged["system"] == "mine"]["score"].notna().sum() == 3

    from ragdash.labels.store import labelable

    assert "mine" in set(labelable(run)["system"])


@pytest.mark.slow  # the evidence finder embeds the pool
def test_without_parts_or_corpus_the_evidence_comes_from_the_pool(tmp_path, capsys):
    ds = write_jsonl(tmp_path / "qa.jsonl", [{"id": q, "question": t, "answer": a}
                                             for q, t, a, _ in QUESTIONS])
    ragas = sy.ragas_jsonl(tmp_path / "mine.jsonl")
    assert main(["run", "--dataset", str(ds), *BASE, "--system", f"mine={ragas}",
                 "--run-dir", str(tmp_path / "r")]) == 0, capsys.readouterr().err
    run = Run(tmp_path / "r")
    pool = run.manifest["pool"]
    assert pool["systems"] == ["mine"] and pool["passages"] == 6  # distinct texts
    assert run.manifest["source"]["corpus"] is None and run.manifest["evidence"]["found"] == 4
    docs = run.read("documents")
    assert docs["doc_id"].str.startswith("pool-").all() and len(docs) == 6
    parts = run.read("examples").set_index("qid")["parts"]
    assert list(parts["q1"]) == ["He was born in Maida Vale, London."]  # a pooled passage
    ir = run.read("ir_scores")
    top = ir[ir["budget"] == 60].set_index(["retriever", "qid"])["score"]
    assert top["mine"]["q1"] == 1.0 and top["bm25"]["q1"] == 1.0  # bm25 searched the pool

    from ragdash.view import RunView
    from ragdash.view.overview import overview

    said = overview(RunView(run.path)).systems
    assert "pool of the 6 distinct passages" in said[0] and "relative to the pool" in said[0]
    assert said[1].startswith("mine: imported from mine.jsonl (ragas), scored on 3 of 4")


def test_a_trec_run_needs_a_corpus_to_pool(tmp_path, capsys):
    ds = write_jsonl(tmp_path / "qa.jsonl", [{"id": q, "question": t, "answer": a}
                                             for q, t, a, _ in QUESTIONS])
    code = main(["run", "--dataset", str(ds), *BASE, "--system",
                 f"t={sy.trec(tmp_path / 'run.trec')}", "--run-dir", str(tmp_path / "r")])
    assert code == 2 and "is a TREC run" in capsys.readouterr().err


def test_a_text_repeated_in_one_retriever_span_is_kept_and_a_later_spans_repeat_is_not(
        tmp_path):
    """What the LLM was given: one RETRIEVER span's documents as they are (a repeat included);
    a second RETRIEVER span (another query of the same trace) adds only texts not retrieved."""
    frame = sy.spans_frame().reset_index()
    first = frame.index[frame["span_kind"] == "RETRIEVER"][0]
    docs = frame.at[first, "attributes.retrieval.documents"]
    frame.at[first, "attributes.retrieval.documents"] = [*docs, docs[0]]
    again = frame.loc[[first]].assign(**{"context.span_id": "extra", "attributes.retrieval."
                                         "documents": [[docs[1], {"document.content": "new"}]]})
    pd.concat([frame, again], ignore_index=True).to_parquet(tmp_path / "s.parquet")
    got = read_system(tmp_path / "s.parquet").records[0].contexts
    assert got == (*sy.contexts(0), sy.contexts(0)[0], "new")


def test_the_build_page_passes_its_systems_and_the_path_check_sees_their_files():
    """The Build page's form hands the systems uploaded on the Data page to the run, and the
    dashboard's check of every path a run names (allowed roots only) names their files."""
    from ragdash.config import expand
    from ragdash.ui.paths import named_paths
    from ragdash.view.build_form import BuildForm

    form = BuildForm("r", {"path": "qa.jsonl"}, retrievers=["bm25"],
                     systems={"prod": {"file": "/elsewhere/r.jsonl", "format": "auto"}})
    over = form.overrides("runs")
    assert over["systems.prod.file"] == "/elsewhere/r.jsonl"
    assert ("systems.prod.file", "/elsewhere/r.jsonl") in named_paths(expand(over))


def test_a_file_read_in_the_format_given_says_so_and_how_to_detect_it(tmp_path):
    f = sy.ragas_jsonl(tmp_path / "ragas.jsonl")
    with pytest.raises(DataError) as err:
        read_system(f, "trec")
    message = err.value.issue.message
    assert "(read as 'trec' because the format was given: --system-format or " \
           "systems.NAME.format; leave it out to detect it from the content)" in message
    assert read_system(f).format == "ragas"


def test_a_users_system_is_shown_as_its_owner_named_it():
    """The paper's retrievers in capitals, a user's system as named ('my-rag', not 'MY-RAG')."""
    from ragdash.constants import label

    assert [label(n) for n in ("llm_only", "bm25", "mlq", "my-rag", "Prod_v2")] == \
        ["LLM only", "BM25", "MLQ", "my-rag", "Prod_v2"]
