"""Reference metrics (no LLM): SQuAD v1.1's exact match and token F1 and "contains a gold
answer", every gold answer kept from the datasets, the reference stage and `ragdash reference`."""

import gzip
import json
import math
import shutil
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply

from ragdash.analysis import reference
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.data import load_dataset
from ragdash.run_spec import run_spec
from ragdash.rundir import Run

# (answer, gold answers, EM, F1, contains), F1 worked out by hand with SQuAD v1.1's definition:
# normalised tokens, common = multiset intersection, P = common/answer, R = common/gold.
CASES = [
    ("The Eiffel Tower!", ["eiffel tower"], 1.0, 1.0, True),  # case, article, punctuation
    ("U.S.", ["US"], 1.0, 1.0, True),  # punctuation inside a word goes
    ("in Paris, France", ["Paris"], 0.0, 0.5, True),  # P 1/3, R 1
    ("the cat sat on a mat", ["cat on mat"], 0.0, 6 / 7, False),  # P 3/4, R 1; not contiguous
    ("New York New York", ["New York"], 0.0, 2 / 3, True),  # multiset: common 2, P 2/4
    ("another theory", ["theory"], 0.0, 2 / 3, True),  # "an" inside a word stays
    ("Parisian style", ["Paris"], 0.0, 0.0, False),  # a substring, not a whole token
    ("Denver Broncos", ["Broncos", "the Denver Broncos", "Carolina"], 1.0, 1.0, True),
    # the maximum over the gold answers: F1 0.5 against the first, 0.8 (P 2/3, R 1) against
    # the second
    ("Santa Clara, California", ["California", "Santa Clara"], 0.0, 0.8, True),
    # F1 0.4 against the first (P 1/3, R 1/2), 1/3 against the second; neither is contained
    ("1990 and 1991", ["in 1990", "1991 to 1995"], 0.0, 0.4, False),
    ("", ["Paris"], 0.0, 0.0, False),  # an empty answer scores 0
    ("   ", ["Paris"], 0.0, 0.0, False),
    (None, ["Paris"], 0.0, 0.0, False),
]


def official_f1(answer, gold):
    """Token F1 as SQuAD v1.1 defines it, written out longhand for the fixture's check."""
    a, g = reference.normalize(answer).split(), reference.normalize(gold).split()
    same = sum((Counter(a) & Counter(g)).values())
    return 0.0 if not same else 2 * (same / len(a)) * (same / len(g)) / (
        same / len(a) + same / len(g))


def test_the_fixture_f1_values_are_the_definitions():
    # "1990 and 1991" vs "in 1990": P 1/3, R 1/2 -> 0.4; vs "1991 to 1995": P 1/3, R 1/3
    assert official_f1("1990 and 1991", "in 1990") == pytest.approx(0.4)
    assert official_f1("1990 and 1991", "1991 to 1995") == pytest.approx(1 / 3)
    # "Santa Clara, California" vs "California": P 1/3, R 1 -> 0.5; vs "Santa Clara": 0.8
    assert official_f1("Santa Clara, California", "Santa Clara") == pytest.approx(0.8)


@pytest.mark.parametrize(("answer", "golds", "em", "f1", "contains"), CASES)
def test_exact_match_f1_and_contains_by_hand(answer, golds, em, f1, contains):
    got = reference.score(answer, golds)
    assert got.em == em
    assert got.f1 == pytest.approx(f1)
    assert got.contains is contains


def test_normalisation_is_squads():
    assert reference.normalize("  The  Eiffel\tTower!  ") == "eiffel tower"
    assert reference.normalize("A cat, an owl and THE dog.") == "cat owl and dog"
    assert reference.normalize("Theatre anthem") == "theatre anthem"  # whole words only


def test_no_gold_answer_gives_no_score():
    for golds in ([], ["", "  "]):
        got = reference.score("Paris", golds)
        assert math.isnan(got.em) and math.isnan(got.f1) and got.contains is None


def test_a_gold_answer_that_normalises_to_nothing_is_scored_as_squad_does():
    # SQuAD v1.1: "" == "" is an exact match, and F1 is 0 when no token is shared
    got = reference.score("a", ["The"])
    assert (got.em, got.f1, got.contains) == (1.0, 0.0, False)


def test_score_answers_rows_errors_and_missing_golds():
    examples = pd.DataFrame({"qid": ["q1", "q2", "q3"], "answer": ["Paris", "Lyon", ""],
                             "answers": [["Paris", "Paris, France"], ["Lyon"], []]})
    answers = pd.DataFrame({
        "qid": ["q1", "q1", "q2", "q3", "q9"],
        "system": ["llm_only", "bm25", "bm25", "bm25", "sim"],
        "budget": [None, 60, 60, 60, 60],
        "answer": ["It is Paris, France.", "Paris", None, "x", "Paris"],
        "error": [None, "timeout", "HTTP 503", None, None]})
    table = reference.score_answers(answers, examples)
    assert list(table.columns) == list(reference.COLUMNS)
    assert table["qid"].tolist() == ["q1", "q1", "q2", "q3", "q9"]
    first = table.iloc[0]  # "it is paris france" vs "paris france": P 2/4, R 1
    assert (first["em"], first["contains"]) == (0.0, True)
    assert first["f1"] == pytest.approx(2 / 3)
    # a failed call scores 0 even with a text; so does a missing answer
    assert table.iloc[1][["em", "f1"]].tolist() == [0.0, 0.0] and not table.iloc[1]["contains"]
    assert table.iloc[2][["em", "f1"]].tolist() == [0.0, 0.0]
    # no gold answer (q3), or a qid the examples lack (q9): no score
    assert table.iloc[3:]["em"].isna().all() and table.iloc[3:]["contains"].isna().all()

    s = reference.summary(table).set_index("system")
    assert s.index.tolist() == ["llm_only", "bm25"]  # sim has no scored answer
    # no embedding model given: no similarity, so the summary has no column for it
    assert table["similarity"].isna().all() and "similarity" not in s.columns
    assert s.loc["bm25"].tolist() == [2, 0.0, 0.0, 0.0, 0.0]  # n, em, f1, contains, rouge_l
    assert s.loc["llm_only", "n"] == 1 and s.loc["llm_only", "contains"] == 1.0
    assert s.loc["llm_only", "rouge_l"] == pytest.approx(2 / 3)  # LCS 2: P 2/4, R 2/2


ROUGE_CASES = [  # (answer, gold, ROUGE-L F): LCS over stemmed tokens, lower case, no punctuation
    ("the cat sat on the mat", "the cat sat on the mat", 1.0),
    ("the cat sat on the mat", "a cat was sitting on a mat",
     2 * (3 / 6) * (3 / 7) / (3 / 6 + 3 / 7)),
    ("Cats were sitting.", "cat sits", 2 * (2 / 3) * 1 / (2 / 3 + 1)),  # stems: cat, sit
    ("nothing in common", "Paris", 0.0),
]


@pytest.mark.parametrize(("answer", "gold", "expected"), ROUGE_CASES)
def test_rouge_l_is_the_lcs_f_measure(answer, gold, expected):
    assert reference.rouge_l(answer, gold) == pytest.approx(expected)


def test_long_answers_get_rouge_l_and_meaning_where_exact_metrics_give_nothing():
    """A correct long answer in other words: EM 0 and no gold answer contained, but ROUGE-L
    and the meaning score see it; an unrelated answer scores low on both."""
    gold = ("The Eiffel Tower was built for the 1889 World's Fair to mark the centenary of the "
            "French Revolution.")
    examples = pd.DataFrame({"qid": ["q1"], "answer": [gold], "answers": [[gold]]})
    answers = pd.DataFrame({
        "qid": ["q1", "q1", "q1"], "system": ["bm25", "sim", "llm_only"], "budget": [60] * 3,
        "answer": ["It was erected for the World's Fair of 1889, which celebrated 100 years "
                   "since the French Revolution.",
                   "Bananas are rich in potassium and grow in tropical climates.", ""],
        "error": [None, None, None]})
    embedded: list[list[str]] = []

    def embed(texts):  # counts words of a small vocabulary: a stand-in that is easy to check
        embedded.append(texts)
        vocab = ("eiffel", "tower", "fair", "1889", "revolution", "french", "world", "banana",
                 "potassium", "tropical")
        return [[t.lower().count(w) + 0.01 for w in vocab] for t in texts]

    table = reference.score_answers(answers, examples, embed=embed).set_index("system")
    assert table.loc["bm25", "em"] == 0 and not table.loc["bm25", "contains"]
    assert table.loc["bm25", "rouge_l"] > 0.3 > table.loc["sim", "rouge_l"]
    assert table.loc["bm25", "similarity"] > 0.8 > 0.2 > table.loc["sim", "similarity"]
    assert table.loc["llm_only", ["rouge_l", "similarity"]].tolist() == [0.0, 0.0]  # empty
    assert len(embedded) == 1 and len(embedded[0]) == len(set(embedded[0])) == 3  # once each


def test_similarity_is_the_best_cosine_over_the_gold_answers():
    vectors = {"a": [1.0, 0.0], "g1": [0.0, 1.0], "g2": [1.0, 1.0]}
    got = reference.similarities([("a", ["g1", "g2"]), ("a", []), (None, ["g1"])],
                                 lambda texts: [vectors[t] for t in texts])
    assert got[0] == pytest.approx(2 ** -0.5) and np.isnan(got[1]) and got[2] == 0.0


def test_minilm_similarity_ranks_a_paraphrase_above_an_unrelated_answer():
    gold = ["The treaty was signed in Paris in 1783, ending the American Revolutionary War."]
    got = reference.similarities(
        [("The American Revolutionary War ended with a treaty signed at Paris in 1783.", gold),
         ("Photosynthesis turns light into chemical energy in plants.", gold)],
        reference.minilm_embed)
    assert got[0] > reference.REFERENCE_METRICS["similarity"].correct_at > got[1]


def test_a_reference_file_written_before_rouge_and_similarity_reads_with_them_empty(tmp_path):
    from ragdash.rundir import Run

    run = Run(tmp_path / "old")
    run.path.mkdir()
    pd.DataFrame({"qid": ["q1"], "system": ["bm25"], "budget": [60], "em": [1.0], "f1": [1.0],
                  "contains": [True]}).to_parquet(run.file("reference"))
    old = run.read("reference")
    assert old[["rouge_l", "similarity"]].isna().all().all()
    assert reference.metrics_of(old) == ["contains", "em", "f1"]


def test_examples_without_answers_column_use_answer():
    examples = pd.DataFrame({"qid": ["q1", "q2"], "answer": ["Paris", None]})
    assert reference.gold_answers(examples) == {"q1": ["Paris"], "q2": []}


# --- every gold answer, from each dataset format ----------------------------------------------

def _generic(tmp_path, rows, name="d.jsonl"):
    path = tmp_path / name
    if name.endswith(".csv"):
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": "d1", "text": "Paris is big."}) + "\n")
    return load_dataset(path, corpus=corpus)


def _row(qid, **extra):
    return {"id": qid, "question": "Q?", "answer": "Paris", "relevant_parts": ["Paris is big."],
            **extra}


def test_generic_answers_as_a_list_a_json_string_or_separated(tmp_path):
    ds = _generic(tmp_path, [_row("a", answers=["Paris", "the city of Paris", "Paris"]),
                             _row("b", answers='["Paris, France", "Paris"]'),
                             _row("c", answers="City of Light || Paris"),
                             _row("d"), _row("e", answers=None), _row("f", answers=[])])
    got = {e.qid: e.answers for e in ds.examples}
    assert got == {"a": ("Paris", "the city of Paris"), "b": ("Paris", "Paris, France"),
                   "c": ("Paris", "City of Light"), "d": ("Paris",), "e": ("Paris",),
                   "f": ("Paris",)}
    assert all("answers" not in e.meta for e in ds.examples)
    assert not [i for i in ds.issues if i.severity == "error"]


def test_generic_answers_in_csv(tmp_path):
    ds = _generic(tmp_path, [{"id": "a", "question": "Q?", "answer": "Paris",
                              "relevant_parts": "Paris is big.",
                              "answers": '["Paris", "Paname"]'},
                             {"id": "b", "question": "Q?", "answer": "Lyon",
                              "relevant_parts": "Paris is big.", "answers": ""}], "d.csv")
    assert [e.answers for e in ds.examples] == [("Paris", "Paname"), ("Lyon",)]


def test_answers_alone_name_the_answer(tmp_path):
    ds = _generic(tmp_path, [{"id": "a", "question": "Q?", "answer": "",
                              "relevant_parts": ["Paris is big."], "answers": ["Paris", "Paname"]}])
    (ex,) = ds.examples
    assert ex.answer == "Paris" and ex.answers == ("Paris", "Paname")
    assert not [i for i in ds.issues if i.field == "answer"]  # no "answer is empty" warning


@pytest.mark.parametrize(("value", "says"), [
    ({"text": "Paris"}, "expected a list of gold answers: expected text, got an object"),
    (True, "expected a list of gold answers: expected text, got bool"),
    (["Paris", {"text": "x"}], "item 1 is an object, expected text"),
    (["Paris", None], "item 1 is null, expected text"),
    ('["Paris", ]', "looks like a JSON list but is not valid JSON"),
])
def test_bad_answers_skip_the_record_with_a_located_error(tmp_path, value, says):
    ds = _generic(tmp_path, [_row("a", answers=value), _row("b", answers=["Paris"])])
    assert [e.qid for e in ds.examples] == ["b"]
    (err,) = [i for i in ds.issues if i.severity == "error"]
    assert err.file.endswith("d.jsonl") and err.record == "line 1 (id a)"
    assert err.field == "answers" and says in err.message


def _squad(tmp_path, answers):
    context = "Paris is big. It is the capital of France."
    qa = {"id": "q1", "question": "What is Paris?", "answers": answers}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "France", "paragraphs": [
        {"context": context, "qas": [qa]}]}]}))
    return load_dataset(path)


def test_squad_keeps_every_gold_answer(tmp_path):
    at = "Paris is big. It is the capital of France.".index
    ds = _squad(tmp_path, [{"answer_start": at("capital"), "text": "capital"},
                           {"answer_start": at("the capital"), "text": "the capital"},
                           {"answer_start": at("capital"), "text": "capital"},
                           {"answer_start": at("capital of"), "text": "capital of France"}])
    (ex,) = ds.examples
    assert ex.answer == "capital"
    assert ex.answers == ("capital", "the capital", "capital of France")  # repeats once
    assert ex.parts == ["It is the capital of France."]  # from the first answer, as before
    assert ds.issues == []


def test_squad_bad_extra_answer_is_left_out_with_a_warning(tmp_path):
    ds = _squad(tmp_path, [{"answer_start": 0, "text": "Paris"}, {"answer_start": 0},
                           "Paris", {"answer_start": 0, "text": "  "}])
    (ex,) = ds.examples
    assert ex.answers == ("Paris",)
    warned = [(i.record, i.field, i.message) for i in ds.issues]
    assert warned == [
        ("id q1", "answers[1]", "text is null, expected text; this gold answer is left out"),
        ("id q1", "answers[2]", "expected a {text, answer_start} object, got str; this gold "
                                "answer is left out"),
        ("id q1", "answers[3]", "text is empty; this gold answer is left out")]
    assert all(i.severity == "warning" for i in ds.issues)


SQUAD_DEV = PROJECT_ROOT / "data/squad/dev-v1.1.json.gz"


@pytest.mark.skipif(not SQUAD_DEV.exists(), reason="bundled SQuAD dev file absent")
def test_squad_dev_gold_answers_match_the_file():
    raw = json.loads(gzip.decompress(SQUAD_DEV.read_bytes()))
    texts = {qa["id"]: [a["text"] for a in qa["answers"]] for art in raw["data"]
             for p in art["paragraphs"] for qa in p["qas"]}
    ds = load_dataset(SQUAD_DEV)
    assert {e.qid: e.answers for e in ds.examples} == {
        q: tuple(dict.fromkeys(t)) for q, t in texts.items()}
    assert max(len(t) for t in texts.values()) == 6


# --- the stage, the run file and the CLI --------------------------------------------------------

def responder(body):
    text = body["messages"][-1]["content"]
    if "Documents:" in text:
        return Reply(text="It is Maida Vale, London.")
    return Reply(text="Lord Byron.")  # LLM only


def test_ragdash_run_writes_reference_whenever_answers_exist(generic, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    ds, corpus = generic
    with FakeLLMServer(default=responder) as srv:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(f"name: ref\ngeneration: {{enabled: true, budget: 60}}\n"
                       f"llm: {{backend: openai, model: fake, base_url: {srv.openai_url}}}\n")
        args = ["run", "--config", str(cfg), "--dataset", str(ds), "--corpus", str(corpus),
                "--retrievers", "bm25", "--chunker", "none", "--budgets", "20:60:20", "-q",
                "--run-dir", str(tmp_path / "r")]
        assert main(args) == 0, capsys.readouterr().err
        run = Run(tmp_path / "r")
        assert run.stage("reference")["status"] == "done"
        assert "Answers against the gold answers" in capsys.readouterr().out
        examples = run.read("examples")
        assert [list(a) for a in examples["answers"]] == [[a] for a in examples["answer"]]
        table = run.read("reference")
        answers = run.read("answers")
        assert len(table) == len(answers) == 8
        assert list(table.columns) == list(reference.COLUMNS)
        bm25 = table[table["system"] == "bm25"].set_index("qid")
        # "it is maida vale london" vs "maida vale london": P 3/5, R 1
        assert bm25.loc["q1", "contains"] and bm25.loc["q1", "f1"] == pytest.approx(0.75)
        assert not bm25.loc["q2", "contains"] and bm25.loc["q2", "em"] == 0.0
        llm_only = table[table["system"] == "llm_only"].set_index("qid")
        assert llm_only["em"].tolist() == [0.0, 1.0, 0.0, 0.0]  # right for q2 only
        assert llm_only["contains"].tolist() == [False, True, False, False]
        # up to date: a re-run skips it (and makes no call)
        before = len(srv.chat_requests())
        assert main(args) == 0
        assert len(srv.chat_requests()) == before
        assert run.stage("reference")["finished"] == Run(tmp_path / "r").stage(
            "reference")["finished"]


def test_ragdash_run_without_answers_has_no_reference(generic, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ds, corpus = generic
    assert main(["run", "--dataset", str(ds), "--corpus", str(corpus), "--retrievers", "bm25",
                 "--chunker", "none", "--budgets", "20:60:20", "-q",
                 "--run-dir", str(tmp_path / "r")]) == 0
    run = Run(tmp_path / "r")
    assert not run.has("reference") and run.stage("reference") == {}


@pytest.fixture
def demo_copy(tmp_path):
    src = PROJECT_ROOT / "data/demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    copy = shutil.copytree(src, tmp_path / "demo")
    # as the demo was before every gold answer was kept: one answer, no reference file yet
    examples = pd.read_parquet(copy / "examples.parquet")
    examples.drop(columns=["answers"], errors="ignore").to_parquet(copy / "examples.parquet")
    (copy / "reference.parquet").unlink(missing_ok=True)
    return copy


def test_ragdash_reference_on_a_copy_of_the_demo(demo_copy, capsys):
    from ragdash.stages.runner import stage_keys

    old = pd.read_parquet(demo_copy / "examples.parquet")
    assert "answers" not in old.columns  # made before every gold answer was kept
    assert main(["reference", "--run-dir", str(demo_copy)]) == 0
    out = capsys.readouterr().out
    assert "Answers against the gold answers" in out and "360 of 360 answers scored" in out
    run = Run(demo_copy)
    assert [list(a) for a in run.read("examples")["answers"]] == [[a] for a in old["answer"]]
    table = run.read("reference")
    answers = run.read("answers")
    assert len(table) == 360
    assert table[["qid", "system"]].values.tolist() == answers[["qid", "system"]].values.tolist()
    golds = dict(zip(old["qid"], old["answer"], strict=True))
    for row, a in zip(table.itertuples(), answers["answer"], strict=True):
        want = reference.score(a, [golds[row.qid]])
        assert (row.em, row.f1, row.contains) == (want.em, pytest.approx(want.f1),
                                                  want.contains)
    # recorded with the key its config gives it: `ragdash run` would skip it
    assert run.stage_done("reference", stage_keys(run_spec(run).to_config())["reference"])
    assert run.stage_done("judge", run.stage("judge")["key"])  # nothing else touched
    summary = reference.summary(table).set_index("system")
    assert summary["n"].tolist() == [60] * 6 and summary["em"].max() <= summary["f1"].max()


def test_ragdash_reference_refuses_a_run_without_answers(tmp_path, capsys):
    assert main(["reference", "--run-dir", str(tmp_path / "nothing")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    run = Run(tmp_path / "r")
    run.create({"name": "r"})
    assert main(["reference", "--run-dir", str(run.path)]) == 2
    err = capsys.readouterr().err
    assert "has no examples.parquet" in err or "has no issues.csv" in err
    assert run.stage("reference") == {}  # nothing recorded


# --- where it is shown ----------------------------------------------------------------------------

@pytest.fixture
def synthetic(tmp_path):
    from fixtures.make_run import make_run

    return Run(make_run(tmp_path / "demo", n_questions=12, seed=3))


def test_a_run_without_reference_file_is_scored_from_its_answers(synthetic):
    import os

    from ragdash.view import RunView

    assert not synthetic.has("reference")
    view = RunView(synthetic)
    computed = view.reference()
    assert len(computed) == len(synthetic.read("answers"))
    saved = computed.assign(em=1.0)  # a saved file newer than the answers is read as it is
    synthetic.write("reference", saved)
    assert (view.reference()["em"] == 1.0).all()
    answers = synthetic.file("answers")  # answers rewritten after it: computed again
    ahead = synthetic.file("reference").stat().st_mtime_ns + 10**9
    os.utime(answers, ns=(ahead, ahead))
    assert view.reference()["em"].tolist() == computed["em"].tolist()


def test_llm_page_and_report_show_the_reference_table(synthetic, monkeypatch):
    from fixtures.apptest import open_app

    from ragdash.html_report import build_report
    from ragdash.view import RunView

    want = RunView(synthetic).reference_summary()
    assert want["n"].sum() > 0 and 0 < want["f1"].max() <= 1
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(synthetic.path))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(synthetic.path.parent / "runs"))
    at = open_app("llm")
    assert "Answers against the gold answers (no LLM)" in [s.value for s in at.subheader]
    shown = next(d.value for d in at.dataframe if "token F1" in d.value.columns)
    assert shown["n"].tolist() == want["n"].tolist()
    assert shown["token F1"].tolist() == pytest.approx(want["f1"].tolist())
    assert shown["contains a gold answer"].tolist() == pytest.approx(want["contains"].tolist())

    html = build_report(synthetic)
    section = html[html.index("Answers against the gold answers (no LLM)"):]
    section = section[:section.index("</table>")]
    assert "contains a gold answer" in section
    assert f"{100 * want['f1'].iloc[0]:.1f}" in section
