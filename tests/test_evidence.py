"""Evidence found for a dataset with only id, question and answer: normalisation, candidates,
ranking, the 1-3 rule, questions without evidence kept apart, the `ragdash evidence` command,
ingest's automatic path, the LLM-assisted variant (a scripted server) and the review."""

from __future__ import annotations

import csv
import json
import logging

import numpy as np
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.corpus import DOCS, QUESTIONS, write_jsonl

from ragdash.cli import main
from ragdash.config import ConfigError, RunSpec, load_config, load_spec
from ragdash.data import load_dataset
from ragdash.data.schema import Document, Example
from ragdash.evidence import output, review
from ragdash.evidence.finder import NOT_IN_CORPUS, YES_NO, find_evidence
from ragdash.evidence.locate import Corpus, unit_spans
from ragdash.evidence.normalize import (
    FoldedText,
    answer_forms,
    contains_answer,
    fold,
    is_bounded,
    normalise,
)
from ragdash.evidence.rank import Vectors, combine, keep
from ragdash.evidence.settings import EvidenceSettings, check
from ragdash.rundir import Run
from ragdash.stages import ingest


def ex(qid: str, question: str, answer: str) -> Example:
    return Example(qid, question, answer, [])


def doc(doc_id: str, text: str) -> Document:
    return Document(doc_id, doc_id.title(), text)


CITY = [
    doc("paris", "Flights to Paris leave daily from many airports. Paris is the capital and "
                 "largest city of France. Paris hosted the Olympic Games in 1900 and 1924."),
    doc("lyon", "Lyon is the third-largest city of France. Many travellers reach Lyon by train "
                "from Paris."),
]


@pytest.fixture
def qa_only(tmp_path):
    """The conftest questions as a CSV with id, question, answer only, one more question whose
    answer is in no document, and the corpus."""
    path = tmp_path / "qa.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer", "topic"])
        for qid, question, answer, _ in QUESTIONS:
            w.writerow([qid, question, answer, "computing"])
        w.writerow(["q5", "Who invented the telephone?", "Alexander Graham Bell", "computing"])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [
        {"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return path, corpus


# --- normalisation ---------------------------------------------------------------------------

def test_answer_forms_fold_case_space_punctuation_and_articles():
    assert answer_forms("  The   Difference Engine. ") == ["the difference engine",
                                                         "difference engine"]
    assert answer_forms("“Maida Vale, London!”") == ["maida vale, london"]
    assert answer_forms("An") == ["an"]  # an article alone is kept as it is
    assert answer_forms("...") == [] and answer_forms("   ") == []
    assert normalise("STRASSE") == normalise("straße")  # casefold, not lower
    assert contains_answer("He was born in Maida\n Vale,  London.", "maida vale, LONDON")
    assert not contains_answer("He was born in London.", "Maida Vale")


def test_folded_text_maps_spans_back_to_the_original():
    text = "Die  Straße\nin   Köln. ÉCOLE normale"
    folded = FoldedText(text)
    assert folded.text == fold(text) == "die strasse in köln. école normale"
    for needle, original in [("strasse in köln", "Straße\nin   Köln"), ("école", "ÉCOLE"),
                             ("in köln. école", "in   Köln. ÉCOLE")]:
        pos = folded.text.find(needle)
        s, e = folded.original(pos, pos + len(needle))
        assert text[s:e] == original
    grown = FoldedText("Maße groß")  # 'ß' folds to 'ss': a word that grows maps back whole
    assert grown.text == "masse gross"
    assert grown.original(8, 10) == (5, 9)  # 'os' of 'gross' -> 'groß'
    assert grown.original(0, 2) == (0, 4)


def test_word_boundaries():
    assert is_bounded("the art of", 4, 7)
    assert not is_bounded("the start", 6, 9)  # 'art' inside 'start'
    assert is_bounded("($5)", 1, 3)


def test_units_are_sentences_cut_at_blank_lines():
    text = "Title line\n\nFirst sentence. Second one?  Third!\n\n\n  Last"
    assert [text[s:e] for s, e in unit_spans(text)] == [
        "Title line", "First sentence.", "Second one?", "Third!", "Last"]


# --- candidates and ranking -------------------------------------------------------------------

def test_answer_found_not_found_and_yes_no():
    result = find_evidence(
        [ex("a", "Where was Alan Turing born?", "Maida Vale, London"),
         ex("b", "Who invented the telephone?", "Alexander Graham Bell"),
         ex("c", "Was Turing a mathematician?", "yes"),
         ex("d", "What is it?", "  ")],
        [doc(d, x) for d, _, x in DOCS])
    a, b, c, d = result.questions
    assert a.found and [p.text for p in a.parts] == ["He was born in Maida Vale, London."]
    assert a.parts[0].doc_id == "turing" and 0 < a.parts[0].confidence <= 1
    text = DOCS[0][2]
    assert text[a.parts[0].start: a.parts[0].end] == a.parts[0].text  # the document's own span
    assert (b.found, b.reason) == (False, NOT_IN_CORPUS)
    assert (c.found, c.reason) == (False, YES_NO)
    assert not d.found and "empty" in d.reason
    assert [q.qid for q in result.missing] == ["b", "c", "d"]
    s = result.summary()
    assert (s["questions"], s["found"], s["missing"]) == (4, 1, 3)
    assert s["missing_qids"] == ["b", "c", "d"]


def test_ambiguous_answer_ranks_the_sentence_close_to_the_question_first():
    result = find_evidence([ex("q", "Which city is the capital of France?", "Paris")], CITY,
                           EvidenceSettings(max_parts=1))
    q = result.questions[0]
    assert q.matches == 4  # three sentences of 'paris' and one of 'lyon' hold 'Paris'
    assert q.parts[0].text == "Paris is the capital and largest city of France."
    assert len(q.candidates) == 4 and len(q.kept) == 1
    confidences = [c.confidence for c in q.candidates]
    assert confidences == sorted(confidences, reverse=True)
    assert all(contains_answer(c.text, "Paris") for c in q.candidates)


def test_article_and_sub_word_fallbacks():
    docs = [doc("e", "Babbage designed a Difference Engine. Work started in 1822.")]
    result = find_evidence([ex("a", "Which engine did Babbage design?", "The Difference Engine"),
                            ex("b", "What art?", "art")], docs)
    a, b = result.questions
    assert a.parts[0].text == "Babbage designed a Difference Engine."  # without 'the'
    # 'art' occurs only inside 'started': found, with its confidence halved
    assert b.parts[0].text == "Work started in 1822." and b.parts[0].confidence <= 0.5


def test_answer_cut_by_a_sentence_break_gives_one_part():
    docs = [doc("s", "The arch stands in St. Louis, Missouri. It opened in 1965.")]
    result = find_evidence([ex("a", "Where is the arch?", "St. Louis")], docs)
    assert [p.text for p in result.questions[0].parts] == [
        "The arch stands in St. Louis, Missouri."]


def test_keep_rule_one_to_three():
    scores = [0.9, 0.88, 0.87, 0.86, 0.5]
    assert keep(scores, 3, 0.05) == [0, 1, 2]
    assert keep(scores, 3, 0.025) == [0, 1]
    assert keep(scores, 1, 1.0) == [0]
    assert keep([0.2, 0.7, 0.7], 3, 0.0) == [1, 2]
    assert keep([], 3, 0.05) == []
    wide = find_evidence([ex("q", "Which city is the capital of France?", "Paris")], CITY,
                         EvidenceSettings(margin=1.0))
    assert len(wide.questions[0].kept) == 3  # never more than three
    narrow = find_evidence([ex("q", "Which city is the capital of France?", "Paris")], CITY,
                           EvidenceSettings(margin=0.0))
    assert len(narrow.questions[0].kept) == 1


def test_combined_score_is_documented_and_bounded():
    scores = combine(np.array([4.0, 2.0, 0.0]), np.array([0.8, -0.3, 1.2]))
    assert scores.tolist() == pytest.approx([0.9, 0.25, 0.5])
    assert combine(np.zeros(2), np.array([0.4, 0.6])).tolist() == pytest.approx([0.2, 0.3])


def test_a_faulty_embedder_is_an_error_not_a_silent_zero():
    vectors = Vectors(lambda texts: np.ones((1, 3)))
    with pytest.raises(ValueError, match="gave 1 vectors for 2 texts"):
        vectors.add(["a", "b"])


def test_every_part_holds_an_answer_that_occurs_verbatim():
    docs = [doc(d, x) for d, _, x in DOCS]
    examples = [ex(q, t, a) for q, t, a, _ in QUESTIONS]
    result = find_evidence(examples, docs)
    for q in result.questions:
        verbatim = any(contains_answer(d.text, q.answer) for d in docs)
        assert q.found == verbatim
        assert all(contains_answer(p.text, q.answer) for p in q.parts)


def test_an_empty_corpus_leaves_every_question_listed():
    result = find_evidence([ex("a", "Where?", "London")], [])
    assert [q.reason for q in result.missing] == [NOT_IN_CORPUS]


# --- settings ---------------------------------------------------------------------------------

def test_settings_are_validated():
    assert check(None) == EvidenceSettings()
    assert check({"margin": 0, "max_parts": 1}).max_parts == 1
    for bad, message in [({"max_parts": 4}, "max_parts"), ({"margin": 1.5}, "margin"),
                         ({"llm": "yes"}, "llm"), ({"passages": 0}, "passages"),
                         ({"depth": 1}, "depth")]:
        with pytest.raises(ValueError, match=message):
            check(bad)
    with pytest.raises(ConfigError, match="did you mean 'dataset.evidence.margin'"):
        load_config(None, {"dataset": {"evidence": {"margins": 0.1}}})
    with pytest.raises(ConfigError, match="dataset.evidence.max_parts"):
        load_config(None, {"dataset": {"evidence": {"max_parts": 0}}})


# --- loading a dataset without parts ---------------------------------------------------------

def test_the_loader_accepts_a_missing_parts_column(qa_only):
    qa, corpus = qa_only
    data = load_dataset(qa, corpus=corpus)
    assert len(data.examples) == 5 and all(e.parts == [] for e in data.examples)
    assert data.source["relevant_parts"] == "absent"
    notice = [i for i in data.issues if i.field == "relevant_parts"]
    assert len(notice) == 1 and notice[0].severity == "warning"
    assert data.skipped == 0


def test_a_parts_column_with_bad_values_is_still_rejected(tmp_path, qa_only):
    _, corpus = qa_only
    ds = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "a", "question": "Q?", "answer": "A", "relevant_parts": ["He was born in Maida "
                                                                        "Vale, London."]},
        {"id": "b", "question": "Q?", "answer": "A"},  # the column exists: a missing value
        {"id": "c", "question": "Q?", "answer": "A", "relevant_parts": []},
        {"id": "d", "question": "Q?", "answer": "A", "relevant_parts": [],
         "parts_source": "none", "parts_note": "the answer occurs verbatim in no document"}])
    data = load_dataset(ds, corpus=corpus)
    assert [e.qid for e in data.examples] == ["a"]
    assert "relevant_parts" not in data.source
    messages = {i.record: i.message for i in data.issues if i.severity == "error"}
    assert "is missing" in messages["line 2 (id b)"]
    assert "no relevant part" in messages["line 3 (id c)"]
    assert "no evidence was found" in messages["line 4 (id d)"]
    assert "verbatim in no document" in messages["line 4 (id d)"]


# --- the command -------------------------------------------------------------------------------

def test_command_writes_a_dataset_that_ragdash_run_takes(qa_only, tmp_path, capsys,
                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    qa, corpus = qa_only
    out = tmp_path / "qa_with_parts.jsonl"
    assert main(["evidence", "--dataset", str(qa), "--corpus", str(corpus), "-o", str(out),
                 "-q"]) == 0
    printed = capsys.readouterr().out
    assert "Evidence found for 4 of 5 questions" in printed
    from ragdash.embedding_cache import open_store
    from ragdash.rundir.root import EMBEDDING_CACHE as FILENAME

    assert len(open_store(tmp_path / "runs")) > 0, "the ranking embeddings are cached"
    assert (tmp_path / "runs" / FILENAME).exists()
    assert "q5: the answer occurs verbatim in no document" in printed
    assert "--llm asks the LLM to quote" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4", "q5"]  # none dropped
    for r in rows[:4]:
        assert r["parts_source"] == "auto" and r["parts_method"] == "answer"
        assert len(r["relevant_parts"]) == len(r["parts_confidence"]) == len(r["parts_doc_ids"])
        assert all(0 <= c <= 1 for c in r["parts_confidence"])
        assert r["topic"] == "computing"  # other columns are kept
    assert rows[4]["relevant_parts"] == [] and rows[4]["parts_source"] == "none"

    assert main(["run", "--dataset", str(out), "--corpus", str(corpus), "--retrievers", "bm25",
                 "--chunker", "none", "--budgets", "50,100", "--run-dir", str(tmp_path / "r"),
                 "-q"]) == 0
    run = Run(tmp_path / "r")
    examples = run.read("examples")
    assert examples["qid"].tolist() == ["q1", "q2", "q3", "q4"]
    assert set(examples["parts_source"]) == {"auto"}
    issues = run.read("issues")
    assert issues.loc[issues["severity"] == "error", "record"].str.contains("q5").tolist() == [
        True]
    assert run.read("ir_scores")["score"].notna().all()


def test_command_on_a_dataset_with_parts_compares_with_them(generic, tmp_path, capsys):
    ds, corpus = generic
    assert main(["evidence", "--dataset", str(ds), "--corpus", str(corpus), "-o",
                 str(tmp_path / "o.jsonl"), "--max-parts", "1", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "already have relevant parts" in printed
    assert "Against the given parts (4 questions with both): a found part equals a given one " \
           "for 100%" in printed


def test_command_errors_are_one_line(tmp_path, capsys):
    code = main(["evidence", "--dataset", str(tmp_path / "nope.csv"), "--corpus",
                 str(tmp_path), "-o", str(tmp_path / "o.jsonl")])
    assert code == 2 and "file not found" in capsys.readouterr().err
    code = main(["evidence", "--dataset", str(tmp_path / "x.csv"), "-o", "o.jsonl",
                 "--max-parts", "7"])
    assert code == 2 and "max_parts" in capsys.readouterr().err


def test_agreement_with_gold_parts():
    found = {"a": ["S1."], "b": ["S2. S3."], "c": ["S9."], "d": []}
    gold = {"a": ["S1."], "b": ["S3."], "c": ["S4."], "d": ["S5."]}
    assert output.agreement(found, gold) == {"questions": 3, "equal": 1, "overlap": 2,
                                             "equal_share": 0.3333, "overlap_share": 0.6667}


# --- ingest's automatic path -------------------------------------------------------------------

def test_ingest_finds_evidence_when_the_column_is_missing(qa_only, tmp_path, caplog,
                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    qa, corpus = qa_only
    with caplog.at_level(logging.INFO, logger="ragdash"):
        assert main(["run", "--dataset", str(qa), "--corpus", str(corpus), "--retrievers",
                     "bm25", "--chunker", "none", "--budgets", "50,100", "--run-dir",
                     str(tmp_path / "r"), "-q"]) == 0
    notice = [r.getMessage() for r in caplog.records if "no relevant parts, so evidence" in
              r.getMessage()]
    assert notice and "4 of 5 questions got relevant parts" in notice[0]
    run = Run(tmp_path / "r")
    assert run.manifest["evidence"]["found"] == 4
    assert run.manifest["evidence"]["missing_qids"] == ["q5"]
    examples = run.read("examples")
    assert examples["qid"].tolist() == ["q1", "q2", "q3", "q4"]
    assert all(contains_answer(p, a) for ps, a in zip(examples["parts"], examples["answer"],
                                                      strict=True) for p in ps)
    issues = run.read("issues")
    assert "no evidence found" in issues.loc[issues["record"] == "id q5", "message"].item()
    assert run.manifest["issues"]["skipped"] == 1


def test_ingest_key_holds_evidence_settings_only_when_used(qa_only, generic):
    qa, corpus = qa_only
    gold_ds, gold_corpus = generic
    with_parts = load_spec(None, {"dataset": {"path": str(gold_ds), "corpus": str(gold_corpus),
                                              "format": "auto"}})
    before = with_parts.to_config()
    del before["dataset"]["evidence"]  # a config from before the key existed
    assert ingest.settings(with_parts) == ingest.settings(RunSpec.from_config(before))
    assert "evidence" not in ingest.settings(with_parts)[0]
    sample = load_spec()  # the bundled HotpotQA sample
    assert "evidence" not in ingest.settings(sample)[0]

    without = load_spec(None, {"dataset": {"path": str(qa), "corpus": str(corpus)}})
    key = ingest.settings(without)[0]["evidence"]
    assert (key["margin"], key["llm"], key["version"] >= 1) == (0.05, False, True)
    assert "model" not in key  # the LLM's settings enter only with evidence.llm
    with_llm = load_spec(None, {"dataset": {"path": str(qa), "corpus": str(corpus),
                                            "evidence": {"llm": True}}})
    assert ingest.settings(with_llm)[0]["evidence"]["model"] == with_llm.to_config()["llm"]
    wider = load_spec(None, {"dataset": {"path": str(qa), "corpus": str(corpus),
                                         "evidence": {"margin": 0.2}}})
    assert ingest.settings(wider) != ingest.settings(without)


# --- the LLM-assisted variant --------------------------------------------------------------------

MINUTES = doc("minutes", "The meeting opened at nine. After a long debate, the committee   "
                         "approved\nthe new budget for the library. The chair thanked "
                         "everyone.")
PAPER = doc("paper", "The report was written by three authors. It was published in spring.")
LLM_QUESTIONS = [
    ex("v", "What did the committee decide about the library budget?", "it was raised"),
    ex("p", "Who wrote the report?", "a team of three"),
    ex("g", "When did the chair speak?", "at the end"),
    ex("y", "Was the budget approved?", "yes"),
]


def quoting(body):
    """A verbatim quote (with other spacing), a paraphrase, garbage, and NONE."""
    prompt = body["messages"][-1]["content"]
    if "library budget" in prompt:
        return Reply(text='"After a long debate, the committee approved the new budget for '
                          'the library."')
    if "wrote the report" in prompt:
        return Reply(text="The report was authored by a team of three people.")
    if "chair speak" in prompt:
        return Reply(text="%%% <<garbage>> {not a sentence")
    return Reply(text="NONE")


def llm_settings(url):
    from ragdash.llm import LLMSettings

    return LLMSettings(backend="openai", model="fake-model", base_url=url, retries=0)


def test_llm_variant_accepts_only_verbatim_quotes(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = EvidenceSettings(llm=True, passages=2)
    with FakeLLMServer(default=quoting) as srv:
        result = find_evidence(LLM_QUESTIONS, [MINUTES, PAPER], settings,
                               llm=llm_settings(srv.openai_url), cache=tmp_path / "c.sqlite")
        asked = len(srv.chat_requests())
        again = find_evidence(LLM_QUESTIONS, [MINUTES, PAPER], settings,
                              llm=llm_settings(srv.openai_url), cache=tmp_path / "c.sqlite")
        assert len(srv.chat_requests()) == asked == 4  # the second run is served by the cache
    v, p, g, y = result.questions
    assert v.found and v.parts[0].method == "llm"
    # the document's own text span, with its own spacing, not the model's
    assert v.parts[0].text == ("After a long debate, the committee   approved\nthe new budget "
                               "for the library.")
    assert MINUTES.text[v.parts[0].start: v.parts[0].end] == v.parts[0].text
    assert not p.found and "verbatim in none of the shown documents" in p.reason
    assert not g.found and "verbatim in none" in g.reason
    assert not y.found and "no supporting sentence" in y.reason
    assert [q.found for q in again.questions] == [True, False, False, False]
    assert output.dataset_rows(result)[0]["parts_method"] == "llm"


def test_llm_failures_are_listed_not_raised(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer(default=Reply(status=400, error="bad request")) as srv:
        result = find_evidence(LLM_QUESTIONS[:1], [MINUTES], EvidenceSettings(llm=True),
                               llm=llm_settings(srv.openai_url))
    assert not result.questions[0].found
    assert "the LLM call failed" in result.questions[0].reason


def test_ingest_with_the_llm_variant(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    qa = write_jsonl(tmp_path / "qa.jsonl", [{"id": e.qid, "question": e.question,
                                              "answer": e.answer} for e in LLM_QUESTIONS])
    corpus = write_jsonl(tmp_path / "docs.jsonl", [{"doc_id": d.doc_id, "title": d.title,
                                                    "text": d.text} for d in (MINUTES, PAPER)])
    from ragdash.stages.runner import run_stages

    with FakeLLMServer(default=quoting) as srv:
        cfg = load_config(None, {
            "dataset": {"path": str(qa), "corpus": str(corpus), "evidence": {"llm": True}},
            "llm": {"backend": "openai", "model": "fake-model", "base_url": srv.openai_url},
            "runs_root": str(tmp_path / "runs")})
        run = run_stages(cfg, tmp_path / "r", ["ingest"])
    assert run.manifest["evidence"]["by_method"] == {"llm": 1}
    assert run.read("examples")["qid"].tolist() == ["v"]
    assert (tmp_path / "runs" / "_llm_cache.sqlite").exists()


# --- review ------------------------------------------------------------------------------------

def test_review_accept_reject_pick_and_save(tmp_path, qa_only):
    _, corpus = qa_only
    examples = [ex("city", "Which city is the capital of France?", "Paris"),
                ex("lyon", "Which is the third-largest city of France?", "Lyon"),
                ex("none", "Who invented the telephone?", "Alexander Graham Bell")]
    result = find_evidence(examples, CITY, EvidenceSettings(max_parts=1))
    city, lyon, none = result.questions
    assert review.choices(none) == [review.REJECT]
    assert review.choices(city)[0] == review.ACCEPT and review.pick(2) in review.choices(city)
    assert review.describe(city, review.pick(1)).startswith("Use candidate 2 instead")
    decisions = {"city": review.pick(1), "lyon": review.REJECT}
    decided = review.apply(result, decisions)
    assert decided.questions[0].parts == [city.candidates[1]] and decided.questions[0].reviewed
    assert not decided.questions[1].found and decided.questions[1].reason == review.REJECTED
    rows = {r["qid"]: r for r in review.table(result, decisions)}
    assert (rows["city"]["status"], rows["city"]["evidence"]) == ("picked",
                                                                  city.candidates[1].text)
    assert (rows["lyon"]["status"], rows["lyon"]["evidence"]) == ("rejected", review.REJECTED)
    assert rows["none"]["status"] == "no evidence"
    assert [r["qid"] for r in review.table(result, decisions)][-1] == "none"  # missing last
    with pytest.raises(ValueError, match="unknown decision"):
        review.apply(result, {"city": "pick:99"})
    with pytest.raises(ValueError, match="nothing was found"):
        review.apply(result, {"none": review.ACCEPT})

    corpus_file = write_jsonl(tmp_path / "city.jsonl", [{"doc_id": d.doc_id, "title": d.title,
                                                         "text": d.text} for d in CITY])
    path = review.save(result, decisions, tmp_path / "runs", "my data.csv")
    assert path.parent == tmp_path / "runs" / "_datasets" and path.name.startswith("my_data-")
    assert review.save(result, decisions, tmp_path / "runs", "my data.csv") == path
    data = load_dataset(path, corpus=corpus_file)
    assert [e.qid for e in data.examples] == ["city"]
    assert data.examples[0].parts == [city.candidates[1].text]
    assert data.examples[0].meta["parts_source"] == "reviewed"
    skipped = {i.record: i.message for i in data.issues if i.severity == "error"}
    assert "rejected in review" in skipped["line 2 (id lyon)"]
    assert "verbatim in no document" in skipped["line 3 (id none)"]


def test_corpus_finds_each_occurrence_once():
    corpus = Corpus([doc("a", "Paris, paris and PARIS. Not here. Paris again.")])
    spans = corpus.find("paris")
    assert [corpus.span_text(s) for s in spans] == ["Paris, paris and PARIS.", "Paris again."]
    assert corpus.locate(["nowhere"]) == ([], False)
